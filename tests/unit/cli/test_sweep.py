"""Sweep bookkeeping: each sweep its own folder, a summary that names jobs without a record."""

import json

from omegaconf import OmegaConf

from harness.cli.sweep import _claim, summarize, summary_markdown
from tests.helpers.markdown import squeeze


def test_sweeps_started_in_the_same_second_get_their_own_folders(tmp_path):
    made = []
    for _ in range(3):
        cfg = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path / "2026-11-21_08-00-00")}}})
        OmegaConf.set_readonly(cfg.hydra, True)  # as Hydra hands it over
        made.append(_claim(cfg))
        assert cfg.hydra.sweep.dir == str(made[-1])  # the sweeper writes where it was claimed
    assert [p.name for p in made] == [
        "2026-11-21_08-00-00",
        "2026-11-21_08-00-00-2",
        "2026-11-21_08-00-00-3",
    ]


def test_summary_counts_and_names_a_job_that_left_no_record(tmp_path):
    (tmp_path / "cells").mkdir()
    record = {"job": 0, "overrides": ["retriever=bm25"], "cell": "results/demo/bm25"}
    record |= {"status": "done", "error": None, "wall_s": 1.5, "pid": 1}
    (tmp_path / "cells" / "00000.json").write_text(json.dumps(record))
    summary = summarize(tmp_path, [["retriever=bm25"], ["retriever=minilm"]], 3.0)
    assert summary["counts"] == {"done": 1, "up to date": 0, "failed": 0, "no record": 1}
    assert summary["failed"] == 1
    assert summary["jobs"][1]["overrides"] == ["retriever=minilm"]
    assert "pid" not in summary["jobs"][0]
    text = squeeze(summary_markdown(summary))
    assert "| 0 | demo/bm25 | done | 1.5 |  |" in text
    assert "| 1 | retriever=minilm | no record |" in text
