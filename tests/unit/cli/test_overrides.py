"""Command-line overrides are checked before Hydra runs: one clear line per mistake."""

import pytest

from harness.cli.hydra_conf import check_overrides, override_args
from harness.core.errors import ConfigError


def test_check_overrides_did_you_mean():
    with pytest.raises(ConfigError, match=r"unknown retriever 'bm26' \(did you mean 'bm25'\?\)"):
        check_overrides(["retriever=bm26"])
    with pytest.raises(ConfigError, match=r"unknown corpus 'genral-wiki'.*valid: beir, demo"):
        check_overrides(["corpus=demo,genral-wiki"])
    check_overrides(["-m", "retriever=bm25,bm25-simple", "corpus=redqa", "corpus.path=x"])
    check_overrides(["-m", "retrieval.depth=3,5", "hydra/launcher=basic", "+extra.key=1"])


def test_check_overrides_unknown_key_and_bad_value():
    with pytest.raises(
        ConfigError, match=r"unknown config key 'retrieval.dpeth' \(did you mean 'depth'"
    ):
        check_overrides(["retrieval.dpeth=3"])
    with pytest.raises(ConfigError, match=r"unknown config key 'corpus.path'; keys under corpus"):
        check_overrides(["corpus.path=/x"])  # demo is packaged: it has no path
    with pytest.raises(ConfigError, match=r"keys under relevance: grades.*distractors$"):
        check_overrides(["relevance.nope=1"])  # no "+relevance.nope" hint: it would be refused
    plugin = ["retriever=custom", "retriever._target_=m.C", "retriever.alpha=1"]
    with pytest.raises(ConfigError, match=r"use \+retriever.alpha=... to pass a new argument"):
        check_overrides(plugin)
    with pytest.raises(ConfigError, match=r"metrics.k=\[a\]; Value 'a' of type 'str' could not"):
        check_overrides(["metrics.k=[a]"])
    with pytest.raises(ConfigError, match="cannot parse the overrides"):
        check_overrides(["metrics.k=[1"])
    with pytest.raises(ConfigError, match=r"Unknown function 'NumRet'.*goes in quotes, e\.g\."):
        check_overrides(["metrics.names=[AP,NumRet(rel=2)]"])
    check_overrides(['metrics.names=[AP,"NumRet(rel=2)"]'])


def test_override_args_skips_hydra_flags():
    argv = ["--cfg", "job", "-m", "a=1", "--resolve", "-p", "retriever", "b=2"]
    assert override_args(argv) == ["a=1", "b=2"]
    assert override_args(["a=1", "--config-dir=/x"]) is None
    assert override_args(["--help"]) is None and override_args(["a=1", "--info"]) is None
    check_overrides(["--cfg", "job", "retriever=bm25"])
    check_overrides(["--help", "retriever=nonsense"])  # help runs nothing: not checked


def test_launchers_experiment_and_force():
    check_overrides(["-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "force=true"])
    check_overrides(["+experiment=rare-table3", "hydra/launcher=submitit_slurm"])
    with pytest.raises(
        ConfigError, match=r"unknown hydra/launcher 'joblb' \(did you mean 'joblib'"
    ):
        check_overrides(["hydra/launcher=joblb"])
    with pytest.raises(ConfigError, match=r"unknown experiment 'rare-tabel3'.*valid: rare-table3"):
        check_overrides(["+experiment=rare-tabel3"])
    with pytest.raises(ConfigError, match="force must be true or false, got 'maybe'"):
        check_overrides(["force=maybe"])


def test_rare_table3_preset_sweeps_the_paper_grid():
    from hydra import compose, initialize_config_dir

    from harness.cli.hydra_conf import register
    from harness.core.paths import conf_dir

    register()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        cfg = compose("config", overrides=["+experiment=rare-table3"], return_hydra_config=True)
    params = cfg.hydra.sweeper.params
    assert params.corpus.split(",") == ["finance", "patent", "legal", "general-wiki"]
    retrievers = params.retriever.split(",")
    assert len(retrievers) == 9 and retrievers[0] == "bm25" and "qwen3-8b-rare" in retrievers
    from harness.core.paths import group_options

    assert set(retrievers) <= set(group_options("retriever"))
    # the published rows' names, in the authors' setup (`<name>-rare`) where a model has one,
    # so the reproduction report pairs them up
    import csv

    from tests.conftest import ROOT

    with (ROOT / "harness" / "data" / "reference" / "rare.csv").open() as fh:
        published = {row["retriever"] for row in csv.DictReader(fh)}
    assert {r.removesuffix("-rare") for r in retrievers} == published


def test_did_you_mean_never_offers_the_negation():
    from harness.core.errors import did_you_mean

    assert did_you_mean("RELEVANT", ["IRRELEVANT", "ANSWER-THE-QUESTION"]) == ""
    assert did_you_mean("answerable", ["unanswerable"]) == ""
    assert did_you_mean("RELEVNT", ["RELEVANT", "IRRELEVANT"]) == " (did you mean 'RELEVANT'?)"
    assert did_you_mean("ndgc", ["nDCG"]) == " (did you mean 'nDCG'?)"


def test_a_bad_value_under_a_debugger_is_still_one_line(tmp_path):
    """Under a debugger, coverage or OC_CAUSE=1, OmegaConf makes an error its own cause; the
    message is still one line (following the causes used to loop until memory ran out). The
    child gets a 3 GiB address-space limit so that the loop, if it came back, fails fast."""
    import resource
    import subprocess

    from tests.helpers.cli import spawn

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    with spawn(
        "harness", "metrics.k=[a]", cwd=tmp_path, env={"OC_CAUSE": "1"}, preexec_fn=limit,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as proc:  # fmt: skip
        _, err = proc.communicate()
    assert proc.returncode == 2, err
    assert err == (
        "error: Error merging override metrics.k=[a]; "
        "Value 'a' of type 'str' could not be converted to Integer\n"
    )
    assert not any(tmp_path.iterdir())


def test_yes_no_settings_take_true_or_false_only():
    for given in ("yes", "1", "off", "maybe", ""):
        with pytest.raises(ConfigError, match=rf"^force must be true or false, got '{given}'$"):
            check_overrides([f"force={given}"])
    check_overrides(["force=true", "cache=False", "results.write=TRUE"])


def test_several_values_without_multirun_is_one_line_naming_both_readings():
    with pytest.raises(ConfigError) as err:
        check_overrides(["retriever=bm25,bm25-simple", "corpus=demo"])
    assert str(err.value) == (
        "'retriever=bm25,bm25-simple' gives several values, a sweep: add -m (--multirun) to "
        "run one job per value"
    )
    with pytest.raises(ConfigError, match=r"or write a list in brackets: metrics.k=\[5,10\]$"):
        check_overrides(["metrics.k=5,10"])
    check_overrides(["-m", "retriever=bm25,bm25-simple"])  # a sweep, as asked
    check_overrides(["--multirun", "retrieval.depth=5,10"])
