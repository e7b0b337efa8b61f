"""An up-to-date cell of a RedQA file is shown from disk without parsing the benchmark; any
change (the data's bytes, a metric) takes the ordinary road, which loads it."""

from __future__ import annotations

import shutil

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from harness.cell import execute
from harness.core.confs import register
from harness.core.paths import conf_dir
from tests.conftest import ROOT


def _config(tmp_path, *overrides: str) -> dict:
    register()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        cfg = compose(config_name="config", overrides=[f"results.dir={tmp_path}", *overrides])
    return OmegaConf.to_container(cfg, resolve=True)


class _Loaded(Exception):
    pass


def _refuse_loading(*_args, **_kwargs):
    raise _Loaded


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "mine.json"
    shutil.copy(ROOT / "harness" / "data" / "demo.json", path)
    return path


def test_an_up_to_date_cell_is_shown_without_loading_its_data(tmp_path, data, monkeypatch):
    cfg = _config(tmp_path / "results", "corpus=redqa", f"corpus.path={data}")
    first = execute.run_cell(cfg)
    assert not first.skipped and first.n_queries == 48
    monkeypatch.setattr(execute, "load_benchmark", _refuse_loading)
    shown = execute.run_cell(cfg)
    assert shown.skipped and shown.n_queries == 48 and shown.corpus == "mine"
    assert shown.aggregated["overall"]["mean"] == first.aggregated["overall"]["mean"]


@pytest.mark.parametrize("change", ["metrics.k=[3]", "data", "force=true"])
def test_a_changed_cell_loads_its_data(tmp_path, data, monkeypatch, change):
    cfg = _config(tmp_path / "results", "corpus=redqa", f"corpus.path={data}")
    execute.run_cell(cfg)
    if change == "data":
        data.write_bytes(data.read_bytes() + b"\n")
    else:
        cfg = _config(tmp_path / "results", "corpus=redqa", f"corpus.path={data}", change)
    monkeypatch.setattr(execute, "load_benchmark", _refuse_loading)
    with pytest.raises(_Loaded):
        execute.run_cell(cfg)


def _beir(folder):
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        '{"_id": "d1", "text": "paris is in france"}\n{"_id": "d2", "text": "rome is in italy"}\n'
    )
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "where is paris"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


def test_a_beir_checksum_from_its_files_is_the_loaders(tmp_path):
    from harness.data.benchmarks import data_files, files_checksum, load_benchmark

    cfg = {"format": "beir", "path": str(_beir(tmp_path / "tiny")), "split": "test"}
    name, files = data_files(cfg)
    assert (name, files_checksum(files)) == ("tiny", load_benchmark(cfg).checksum)


def test_an_up_to_date_beir_cell_is_shown_without_loading(tmp_path, monkeypatch):
    folder = _beir(tmp_path / "tiny")
    cfg = _config(tmp_path / "results", "corpus=beir", f"corpus.path={folder}", "metrics.k=[1]")
    execute.run_cell(cfg)
    monkeypatch.setattr(execute, "load_benchmark", _refuse_loading)
    assert execute.run_cell(cfg).skipped
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\n")
    with pytest.raises(_Loaded):  # other judgments: the ordinary road
        execute.run_cell(cfg)


def test_another_no_relevant_rescores_the_stored_run(tmp_path):
    """metrics.no_relevant changes values under the same names: the stored cell is scored
    again (its run, no retrieval), never shown as it was; a bad value is one error."""
    from harness.core.errors import ConfigError

    base = ["metrics=standard", "metrics.relevance_level=2"]
    first = execute.run_cell(_config(tmp_path, *base))
    assert first.aggregated["overall"]["mean"]["P(rel=2)@10"] is None  # RedQA: grade 1 only
    again = execute.run_cell(_config(tmp_path, *base, "metrics.no_relevant=zero"))
    assert not again.skipped
    assert any("scored its stored ranked list" in n for n in again.notes)
    assert again.aggregated["overall"]["mean"]["P(rel=2)@10"] == 0.0
    shown = execute.run_cell(_config(tmp_path, *base, "metrics.no_relevant=zero"))
    assert shown.skipped
    with pytest.raises(ConfigError, match="metrics.no_relevant is 'sometimes'; valid: skip"):
        execute.run_cell(_config(tmp_path, *base, "metrics.no_relevant=sometimes"))
