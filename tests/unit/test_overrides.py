"""Command-line overrides are checked before Hydra runs: one clear line per mistake."""

import pytest

from harness.config import check_overrides, override_args
from harness.errors import ConfigError


def test_check_overrides_did_you_mean():
    with pytest.raises(ConfigError, match=r"unknown retriever 'bm26' \(did you mean 'bm25'\?\)"):
        check_overrides(["retriever=bm26"])
    with pytest.raises(ConfigError, match=r"unknown corpus 'genral-wiki'.*valid: beir, demo"):
        check_overrides(["corpus=demo,genral-wiki"])
    check_overrides(["retriever=bm25,bm25-simple", "corpus=redqa", "corpus.path=x"])
    check_overrides(["-m", "retrieval.depth=3,5", "hydra/launcher=basic", "+extra.key=1"])


def test_check_overrides_unknown_key_and_bad_value():
    with pytest.raises(
        ConfigError, match=r"unknown config key 'retrieval.dpeth' \(did you mean 'depth'"
    ):
        check_overrides(["retrieval.dpeth=3"])
    with pytest.raises(ConfigError, match=r"unknown config key 'corpus.path'; keys under corpus"):
        check_overrides(["corpus.path=/x"])  # demo is packaged: it has no path
    with pytest.raises(ConfigError, match=r"metrics.k=\[a\]; Value 'a' of type 'str' could not"):
        check_overrides(["metrics.k=[a]"])
    with pytest.raises(ConfigError, match="cannot parse the overrides"):
        check_overrides(["metrics.k=[1"])


def test_override_args_skips_hydra_flags():
    argv = ["--cfg", "job", "-m", "a=1", "--resolve", "-p", "retriever", "b=2"]
    assert override_args(argv) == ["a=1", "b=2"]
    assert override_args(["a=1", "--config-dir=/x"]) is None
    assert override_args(["--help"]) is None and override_args(["a=1", "--info"]) is None
    check_overrides(["--cfg", "job", "retriever=bm25"])
    check_overrides(["--help", "retriever=nonsense"])  # help runs nothing: not checked
