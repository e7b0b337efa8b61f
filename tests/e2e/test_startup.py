"""Start-up work that must not come back: a run composes its config once (no check, mode probe
or shipped-config lookup composing it again) and a later start with the same overrides and
config files not at all (the composition cache), bad overrides still get their one error line,
and `python -m harness.compare` never imports scipy.stats. Counted here, never timed
(scripts/bench_startup.py times them)."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from harness.core.confs import register
from harness.core.paths import conf_dir
from tests.helpers.cli import run_module


def _probe(tool: str, *args: str, cwd, cache=None, env=None):
    """The tool's start-up, with a composition cache of its own (`cache`, else an empty one)."""
    env = {"HARNESS_CACHE_DIR": str(cache or Path(cwd) / ".cache"), **(env or {})}
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


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "compose").rglob("*.pkl"))


def test_a_second_start_reads_the_composition_back(tmp_path):
    """Same overrides, same config files: the composition is read back (no composing), the
    command gets the same config, and the working directory and the time are this start's."""
    cache = tmp_path / "cache"
    args = ["retriever=bm25-simple", "metrics.k=[3,7]", "results.dir=${hydra:runtime.cwd}/out",
            "strata.dir=${now:%H-%M-%S}"]  # fmt: skip
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, probe = _probe("config", *args, cwd=tmp_path / "a", cache=cache)
    assert first.returncode == 0, first.stderr
    assert probe["compositions"] == 1
    (entry,) = _entries(cache)
    # Composing resolved ${now:%H-%M-%S} once (Hydra's own run.dir uses it) and OmegaConf
    # keeps what a resolver gave: an entry must not carry that time into later starts
    kept = pickle.loads(entry.read_bytes())
    assert kept._metadata.resolver_cache["now"][("%H-%M-%S",)]
    kept._metadata.resolver_cache["now"][("%H-%M-%S",)] = "99-99-99"
    entry.write_bytes(pickle.dumps(kept))
    again, probe = _probe("config", *args, cwd=tmp_path / "a", cache=cache)
    assert probe["compositions"] == 0
    one, two = json.loads(first.stdout), json.loads(again.stdout)
    assert two["strata"].pop("dir") != "99-99-99"
    one["strata"].pop("dir")
    assert one == two
    elsewhere, probe = _probe("config", *args, cwd=tmp_path / "b", cache=cache)
    assert probe["compositions"] == 0
    three = json.loads(elsewhere.stdout)
    assert three["results"]["dir"] == str(tmp_path / "b" / "out")
    three["strata"].pop("dir")
    assert three | {"results": one["results"]} == one
    # other overrides are composed
    _, probe = _probe("config", *args, "retrieval.depth=7", cwd=tmp_path / "a", cache=cache)
    assert probe["compositions"] == 1


def test_a_cached_run_writes_what_a_composed_one_writes(tmp_path):
    cache = tmp_path / "cache"
    cell = tmp_path / "results" / "demo" / "bm25"
    files = {}
    for composed in (1, 0):
        res, probe = _probe("run", "stats.bootstrap=50", "force=true", cwd=tmp_path, cache=cache)
        assert res.returncode == 0, res.stderr
        assert probe["compositions"] == composed
        names = ("metrics.json", "per_query.csv", "run.trec", "config.yaml")
        files[composed] = {f: (cell / f).read_bytes() for f in names}
        files[composed]["stdout"] = res.stdout.encode()
    assert files[0] == files[1]


def test_a_group_choice_from_the_environment_is_composed_every_time(tmp_path):
    """Hydra resolves a config group's interpolated choice while composing: what it reads
    (an environment variable here) is not in the key, so it is never kept."""
    cache = tmp_path / "cache"
    for corpus in ("demo", "finance", "demo"):
        res, probe = _probe("config", "corpus=${oc.env:MY_CORPUS}", cwd=tmp_path, cache=cache,
                            env={"MY_CORPUS": corpus})  # fmt: skip
        assert res.returncode == 0, res.stderr
        assert probe["compositions"] == 1
        assert json.loads(res.stdout)["corpus"]["name"] == corpus
    assert not _entries(cache)


def test_a_damaged_or_foreign_cache_entry_is_composed_again(tmp_path):
    cache = tmp_path / "cache"
    res, _ = _probe("config", "retrieval.depth=9", cwd=tmp_path, cache=cache)
    (entry,) = _entries(cache)
    for junk in (b"not a pickle", pickle.dumps({"retrieval": {"depth": 1}})):
        entry.write_bytes(junk)
        again, probe = _probe("config", "retrieval.depth=9", cwd=tmp_path, cache=cache)
        assert probe["compositions"] == 1
        assert again.stdout == res.stdout
        assert pickle.loads(entry.read_bytes()).retrieval.depth == 9  # kept again


def test_what_fails_its_checks_is_not_kept(tmp_path):
    """An override that composes but is refused (a yes/no setting given `maybe`), a sweep
    asked for through hydra.mode, copied environment variables and Hydra's debug output never
    enter the cache."""
    cache = tmp_path / "cache"
    for args in (
        ("force=maybe",),
        ("retrieval.depth=11", "hydra.verbose=true"),
        ("retrieval.depth=12", "hydra.job.env_copy=[HOME]"),
        ("retrieval.depth=13", "hydra.mode=MULTIRUN"),
    ):
        res, _ = _probe("run", *args, "stats.bootstrap=0", cwd=tmp_path, cache=cache)
        assert res.returncode == (2 if "force=maybe" in args else 0), res.stderr
    assert not _entries(cache)
    res, probe = _probe("run", "force=maybe", cwd=tmp_path, cache=cache)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("error: force must be true or false, got 'maybe'")


def test_a_composition_that_warned_is_not_kept(tmp_path):
    """Hydra's warnings while composing (a defaults list without _self_ here) are shown on
    every start: such a composition is composed again each time, never read back."""
    conf = tmp_path / "conf"
    shutil.copytree(conf_dir(), conf)
    config = conf / "config.yaml"
    config.write_text(config.read_text().replace("  - _self_\n", ""))
    code = (
        "from pathlib import Path\n"
        "from harness.core import paths\n"
        f"paths.conf_dir = lambda: Path({str(conf)!r})\n"
        "from harness.cli.hydra_app import run_composed_once\n"
        "print(run_composed_once(lambda cfg: None, ['retrieval.depth=11']))\n"
    )
    env = {"HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):
        res = run_module("tests.helpers.exec_code", code, cwd=tmp_path, env=env, check=False)
        assert res.returncode == 0 and res.stdout == "True\n", res.stderr
        assert "Defaults list is missing `_self_`" in res.stderr
    assert not _entries(tmp_path / "cache")
