"""The composition cache (harness.cli.compose_cache): what a composition is made from is in
its key, what could make it differ is never kept, and the cache stays bounded and private."""

from __future__ import annotations

import os
import shutil
from types import SimpleNamespace

import pytest
from omegaconf import OmegaConf

from harness.cli import compose_cache
from harness.core import paths


def _source(provider: str, path: str, scheme: str):
    return SimpleNamespace(provider=provider, path=path, scheme=lambda: scheme)


@pytest.fixture
def conf(tmp_path, monkeypatch):
    """A copy of conf/ that the key reads."""
    copy = tmp_path / "conf"
    shutil.copytree(paths.conf_dir(), copy)
    monkeypatch.setattr(paths, "conf_dir", lambda: copy)
    return copy


def _key(conf, overrides=("corpus=demo",), task="task", extra=()):
    sources = [_source("hydra", "hydra.conf", "pkg"), _source("main", str(conf), "file"),
               _source("schema", "", "structured"), *extra]  # fmt: skip
    return compose_cache.key(list(overrides), task, sources)


def test_the_key_covers_what_a_composition_is_made_of(conf, tmp_path, monkeypatch):
    key = _key(conf)
    assert key is not None and key == _key(conf)
    assert key != _key(conf, ["corpus=general-wiki"])
    assert key != _key(conf, ["corpus=demo", "force=true"])
    assert _key(conf, ["a=b,c"]) != _key(conf, ["a=b", "c"])
    assert key != _key(conf, task="other")
    edited = conf / "retriever" / "bm25.yaml"
    edited.write_text(edited.read_text() + "\n# edited\n")
    assert key != (key := _key(conf))
    (conf / "retriever" / "mine.yaml").write_text("name: mine\n")  # a new option
    assert key != (key := _key(conf))
    (conf / "mine").mkdir()  # an empty folder: `mine=x` becomes a group choice
    assert key != (key := _key(conf))
    # a symlinked group folder is read through, as Hydra reads it
    shutil.move(conf / "experiment", tmp_path / "experiments")
    (conf / "experiment").symlink_to(tmp_path / "experiments")
    assert key == _key(conf)  # the same files
    (tmp_path / "experiments" / "rare-table3.yaml").write_text("# edited\n")
    assert key != (key := _key(conf))
    # the same files elsewhere
    moved = tmp_path / "moved"
    shutil.copytree(conf, moved, symlinks=True)
    monkeypatch.setattr(paths, "conf_dir", lambda: moved)
    assert key != _key(moved)


def test_what_could_change_a_composition_is_never_keyed(conf, tmp_path):
    assert _key(conf, ["results.dir=${oc.env:OUT}"]) is not None  # resolved at run time
    assert _key(conf, ["corpus=${oc.env:CORPUS}"]) is None  # resolved while composing
    assert _key(conf, ["+experiment=${oc.env:X}"]) is None
    # a plugin's search path, `hydra.searchpath`: config files outside conf/
    assert _key(conf, extra=[_source("plugin", "pkg://theirs.conf", "pkg")]) is None
    assert _key(conf, extra=[_source("hydra.searchpath", "/x", "file")]) is None
    assert _key(conf, ["hydra.mode=${oc.env:MODE}"]) is None  # Hydra settings too
    assert _key(conf, ["hydra.job.chdir=${oc.env:X}"]) is None
    # an interpolated defaults list, written plainly or through YAML's escapes
    experiment = conf / "experiment" / "mine.yaml"
    for spelled in ('"\\u0024{oc.env:RET}"', "${oc.env:RET}"):
        for key_spelled in ("defaults", '"\\x64efaults"'):
            experiment.write_text(f"{key_spelled}:\n  - override /retriever: {spelled}\n")
            assert _key(conf) is None, experiment.read_text()
    experiment.write_text('"\\x64efaults":\n  - override /retriever: bm25\n')
    assert _key(conf) is not None
    experiment.unlink()
    config = conf / "config.yaml"
    text = config.read_text()
    config.write_text(text.replace("  - corpus: demo\n", "  - corpus: ${oc.env:CORPUS,demo}\n"))
    assert _key(conf) is None
    config.write_text(text)
    # a file that cannot be read (an editor's lock, a dangling link): composed as always
    (conf / "retriever" / ".#bm25.yaml").symlink_to(tmp_path / "gone")
    assert _key(conf) is None


def _cfg():
    """The parts of a composed config the cache reads (a root of None: logging is left be)."""
    return OmegaConf.create({"hydra": {"job": {"env_copy": []}, "verbose": False,
                                       "searchpath": [], "runtime": {"cwd": "x"},
                                       "hydra_logging": {"root": None}}})  # fmt: skip


def test_the_least_recently_used_entries_go(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compose_cache, "KEPT", 2)
    keys = [f"{i:064x}" for i in range(3)]
    folder = tmp_path / "compose" / str(os.getuid())
    folder.mkdir(parents=True, mode=0o700)
    theirs = folder / "notes.pkl"  # not an entry: left alone
    theirs.write_bytes(b"")
    killed = folder / ".compose.abc"  # a temp file of a start killed an hour ago
    killed.write_bytes(b"")
    os.utime(killed, (1, 1))
    for age, key in enumerate(keys[:2]):
        compose_cache.keep(key, _cfg())
        os.utime(folder / f"{key}.pkl", (age + 1, age + 1))
    assert compose_cache.load(keys[0]) is not None  # used now: keys[1] is the oldest
    compose_cache.keep(keys[2], _cfg())
    assert sorted(p.stem for p in folder.glob("*.pkl")) == [keys[0], keys[2], "notes"]
    assert not killed.exists()


def test_entries_are_read_only_from_a_private_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    key = "a" * 64
    compose_cache.keep(key, _cfg())
    folder = tmp_path / "compose" / str(os.getuid())
    assert folder.stat().st_mode & 0o777 == 0o700
    assert compose_cache.load(key).hydra.runtime.cwd == os.getcwd()
    folder.chmod(0o777)  # others could have written the pickle
    assert compose_cache.load(key) is None
    compose_cache.keep("b" * 64, _cfg())
    assert not (folder / f"{'b' * 64}.pkl").exists()
    folder.chmod(0o700)
    (folder / f"{key}.pkl").chmod(0o666)
    assert compose_cache.load(key) is None


def test_an_entry_that_is_not_a_composition_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    broken = OmegaConf.create({"hydra": {"job": {"env_copy": []}, "verbose": False,
                                         "searchpath": [], "runtime": {}}})  # fmt: skip
    compose_cache.keep("c" * 64, broken)  # no hydra_logging: it cannot be started from
    assert compose_cache.load("c" * 64) is None
