"""Start-up work that must not come back: a run composes its config once (no check, mode probe
or shipped-config lookup composing it again) and a later start with the same overrides and
config files not at all (the composition cache), bad overrides still get their one error line,
and `python -m harness.compare` never imports scipy.stats. Counted here, never timed
(scripts/bench_startup.py times them)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from harness.core.confs import register
from harness.core.paths import conf_dir
from tests.helpers.cli import run_module


def _probe(tool: str, *args: str, cwd, cache=None):
    """The tool's start-up, with a composition cache of its own (`cache`, else an empty one)."""
    env = {"HARNESS_CACHE_DIR": str(cache or Path(cwd) / ".cache")}
    res = run_module("tests.helpers.startup_probe", tool, *args, cwd=cwd, env=env, check=False)
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("probe: "), res.stderr
    return res, json.loads(last.removeprefix("probe: "))


@pytest.mark.parametrize(
    ("args", "cell"),
    [
        ((), "bm25"),
        (("retriever.k1=0.9",), "bm25[k1=0.9]"),  # a variant: its shipped config is read
        (("retriever=bm25-simple", "retriever.k1=1.0"), "bm25-simple[k1=1]"),  # a whole float
        (("retriever=bm25-simple", "retriever.k1=1.5"), "bm25-simple"),  # the shipped value
    ],
)
def test_a_run_composes_its_config_once(tmp_path, args, cell):
    res, probe = _probe("run", *args, "stats.bootstrap=50", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert probe["compositions"] == 1
    assert (tmp_path / "results" / "demo" / cell / "metrics.json").is_file()
    assert "scipy.stats" not in probe["modules"]


def test_the_job_gets_the_config_hydra_composes(tmp_path):
    """The composed-once command gets what Hydra's compose API gives for the same overrides."""
    args = ["retriever=bm25-simple", "retriever.b=0.5", "metrics.k=[3,7]", "device=cpu"]
    res, probe = _probe("config", *args, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert probe["compositions"] == 1
    register()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        expected = OmegaConf.to_container(compose("config", overrides=args), resolve=True)
    assert json.loads(res.stdout) == expected


def test_bad_overrides_keep_their_error_lines(tmp_path):
    res, _ = _probe("run", "retrieval.dpeth=3", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("error: unknown config key 'retrieval.dpeth' (did you mean")
    res, _ = _probe("run", "retriever=bm26", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("error: unknown retriever 'bm26' (did you mean 'bm25'?)")
    # a Hydra setting the check leaves to Hydra: Hydra's own message, as before
    res, _ = _probe("run", "hydra.nonsense=1", cwd=tmp_path)
    assert res.returncode == 1 and "Could not override 'hydra.nonsense'" in res.stderr
    assert not (tmp_path / "results").exists()


def test_compare_does_not_import_scipy_stats(tmp_path):
    for args in ((), ("retriever=bm25-simple",)):
        res, _ = _probe("run", *args, "stats.bootstrap=50", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
    cells = ("results/demo/bm25", "results/demo/bm25-simple")
    res, probe = _probe("compare", *cells, "--bootstrap", "200", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr
    # the t-test ran (the two rank differently: its differences vary) through scipy.special
    assert "scipy.special" in probe["modules"]
    assert "scipy.stats" not in probe["modules"] and "pandas" not in probe["modules"]


def test_a_second_start_reads_the_composition_back(tmp_path):
    """Same overrides, same config files: the composition is read back (no composing), the
    command gets the same config, and the working directory is this start's."""
    cache = tmp_path / "cache"
    args = ["retriever=bm25-simple", "metrics.k=[3,7]", "results.dir=${hydra:runtime.cwd}/out"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, probe = _probe("config", *args, cwd=tmp_path / "a", cache=cache)
    assert first.returncode == 0, first.stderr
    assert probe["compositions"] == 1
    assert len(list((cache / "compose").glob("*.pkl"))) == 1
    again, probe = _probe("config", *args, cwd=tmp_path / "a", cache=cache)
    assert probe["compositions"] == 0
    assert again.stdout == first.stdout
    elsewhere, probe = _probe("config", *args, cwd=tmp_path / "b", cache=cache)
    assert probe["compositions"] == 0
    assert json.loads(elsewhere.stdout)["results"]["dir"] == str(tmp_path / "b" / "out")
    assert elsewhere.stdout.replace(f"{tmp_path}/b/", f"{tmp_path}/a/") == first.stdout
    # other overrides are composed
    _, probe = _probe("config", *args, "retrieval.depth=7", cwd=tmp_path / "a", cache=cache)
    assert probe["compositions"] == 1


def test_a_cached_run_writes_the_same_cell(tmp_path):
    """A run started from the cached composition writes the bytes a composed one writes."""
    cache = tmp_path / "cache"
    cells = []
    for name in ("one", "two"):
        res, probe = _probe("run", "stats.bootstrap=50", f"results.dir={name}", cwd=tmp_path,
                            cache=cache)  # fmt: skip
        assert res.returncode == 0, res.stderr
        cells.append(tmp_path / name / "demo" / "bm25")
    # `results.dir` differs, so both composed; now each again, from the cache
    for name in ("one", "two"):
        res, probe = _probe("run", "stats.bootstrap=50", f"results.dir={name}", "force=true",
                            cwd=tmp_path, cache=cache)  # fmt: skip
        assert probe["compositions"] == 1  # force=true is another override
        res, probe = _probe("run", "stats.bootstrap=50", f"results.dir={name}", "force=true",
                            cwd=tmp_path, cache=cache)  # fmt: skip
        assert probe["compositions"] == 0 and res.returncode == 0, res.stderr
    for f in ("metrics.json", "per_query.csv", "run.trec", "config.yaml"):
        one, two = ((c / f).read_text().replace("two", "one") for c in cells)
        assert one == two, f


def test_a_damaged_or_foreign_cache_entry_is_composed_again(tmp_path):
    cache = tmp_path / "cache"
    res, _ = _probe("config", "retrieval.depth=9", cwd=tmp_path, cache=cache)
    (entry,) = (cache / "compose").glob("*.pkl")
    for junk in (b"not a pickle", pickle.dumps({"retrieval": {"depth": 1}})):
        entry.write_bytes(junk)
        again, probe = _probe("config", "retrieval.depth=9", cwd=tmp_path, cache=cache)
        assert probe["compositions"] == 1
        assert again.stdout == res.stdout
        assert pickle.loads(entry.read_bytes()).retrieval.depth == 9  # kept again


def test_what_fails_its_checks_is_not_kept(tmp_path):
    """An override that composes but is refused (a yes/no setting given `maybe`), a sweep
    asked for through hydra.mode and Hydra's debug output never enter the cache."""
    cache = tmp_path / "cache"
    for args in (("force=maybe",), ("retrieval.depth=3", "hydra.verbose=true")):
        _probe("run", *args, cwd=tmp_path, cache=cache)
    assert not list((cache / "compose").glob("*.pkl"))
    res, probe = _probe("run", "force=maybe", cwd=tmp_path, cache=cache)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("error: force must be true or false, got 'maybe'")
