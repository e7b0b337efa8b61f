"""A variant's shipped config is read from its file without composing conf/ again; it must be
what Hydra composes for that choice, for every option shipped (and any a user adds)."""

from __future__ import annotations

import pytest

from harness.cli.run import plain_file
from harness.core.confs import named_config
from harness.core.paths import group_options

OPTIONS = [(g, c) for g in ("retriever", "corpus", "extractor") for c in group_options(g)]


@pytest.mark.parametrize(("group", "choice"), OPTIONS)
def test_plain_file_is_what_hydra_composes(group, choice):
    got = plain_file(group, choice)
    if got is not None:  # None: the caller composes it
        assert got == named_config(group, choice)


def test_files_read_directly_cover_the_retrievers():
    """Inheriting configs (bm25-simple, the -rare ones, the hybrid's parts) are read too."""
    missing = [c for c in group_options("retriever") if plain_file("retriever", c) is None]
    assert missing == []


def test_what_it_leaves_to_hydra(tmp_path, monkeypatch):
    (tmp_path / "retriever").mkdir()
    files = {
        "interp": "name: x\nk1: ${oc.env:K1,1}\n",
        "pkg": "# @package _global_\nname: x\n",
        "other": "defaults:\n  - /metrics@m: rare\n  - _self_\nname: x\n",
        "selfless": "defaults:\n  - base\nname: x\n",  # _self_ not last: Hydra's rules decide
        "loop": "defaults:\n  - loop\n  - _self_\nname: x\n",
        "base": "name: base\nk1: 1.0\n",
        "child": "defaults:\n  - base\n  - _self_\nname: child\n",
    }
    for name, text in files.items():
        (tmp_path / "retriever" / f"{name}.yaml").write_text(text)
    monkeypatch.setattr("harness.core.paths.conf_dir", lambda: tmp_path)
    for name in ("interp", "pkg", "other", "selfless", "loop", "absent"):
        assert plain_file("retriever", name) is None, name
    assert plain_file("retriever", "child") == {"name": "child", "k1": 1.0}
    assert plain_file("metrics", "rare") is None  # a typed group: its schema merges in
