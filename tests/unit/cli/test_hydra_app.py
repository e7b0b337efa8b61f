"""The composition cache's key and upkeep (harness.cli.hydra_app): what a composition reads
is in the key, and the cache stays bounded."""

from __future__ import annotations

import os
import shutil

from omegaconf import OmegaConf

from harness.cli import hydra_app
from harness.core import paths


def test_the_key_covers_what_composing_reads(tmp_path, monkeypatch):
    conf = tmp_path / "conf"
    shutil.copytree(paths.conf_dir(), conf)
    monkeypatch.setattr(paths, "conf_dir", lambda: conf)
    key = hydra_app._composition_key(["corpus=demo"], "task")
    assert key == hydra_app._composition_key(["corpus=demo"], "task")
    assert key != hydra_app._composition_key(["corpus=general-wiki"], "task")
    assert key != hydra_app._composition_key(["corpus=demo", "force=true"], "task")
    assert key != hydra_app._composition_key(["corpus=demo"], "other")
    edited = conf / "retriever" / "bm25.yaml"
    edited.write_text(edited.read_text() + "\n# edited\n")
    assert key != (key := hydra_app._composition_key(["corpus=demo"], "task"))
    (conf / "retriever" / "mine.yaml").write_text("name: mine\n")  # a new option
    assert key != (key := hydra_app._composition_key(["corpus=demo"], "task"))
    moved = tmp_path / "moved"
    shutil.move(conf, moved)
    monkeypatch.setattr(paths, "conf_dir", lambda: moved)  # same files elsewhere
    assert key != hydra_app._composition_key(["corpus=demo"], "task")
    # config files outside conf/ are not hashed: never cached
    assert hydra_app._composition_key(["hydra.searchpath=[file:///x]"], "task") is None


def test_the_least_recently_used_entries_go(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(hydra_app, "_KEPT", 2)
    cfg = OmegaConf.create({"hydra": {"job": {"env_copy": []}, "verbose": False,
                                      "searchpath": []}})  # fmt: skip
    keys = [f"{i:064x}" for i in range(3)]
    folder = tmp_path / "compose"
    folder.mkdir()
    theirs = folder / "notes.pkl"  # not an entry of ours: left alone
    theirs.write_bytes(b"")
    for age, key in enumerate(keys[:2]):
        hydra_app._keep_composition(key, cfg)
        os.utime(folder / f"{key}.pkl", (age + 1, age + 1))
    hydra_app._keep_composition(keys[2], cfg)  # the oldest, keys[0], goes
    assert sorted(p.stem for p in folder.glob("*.pkl")) == [*keys[1:], "notes"]
