"""A damaged file in a Hub-layout dataset is one error line: `datasets` logs its own ERROR
lines about it (through its handler and ours), which must not come before ours."""

from __future__ import annotations

from tests.helpers.cli import assert_one_line_error, harness

README = """---
configs:
- config_name: corpus
  data_files:
  - split: corpus
    path: data/corpus.jsonl
- config_name: queries
  data_files:
  - split: queries
    path: data/queries.jsonl
- config_name: default
  data_files:
  - split: test
    path: data/qrels.tsv
---
"""


def test_a_damaged_hub_file_is_one_error_line(tmp_path):
    folder = tmp_path / "dataset"
    (folder / "data").mkdir(parents=True)
    (folder / "README.md").write_text(README)
    (folder / "data" / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n{broken\n')
    (folder / "data" / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (folder / "data" / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    out = harness(
        "corpus=hf",
        f"corpus.dataset={folder}",
        "corpus.layout=beir",
        cwd=tmp_path,
        env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")},
        check=False,
    )
    assert_one_line_error(out, tmp_path, "config 'corpus' split 'corpus': cannot read a row")
