"""BEIR folders are read line by line (no row kept); what they load to, and every error line,
must be what reading the whole file first gave. The reference below is that reader: every
line parsed from its bytes into a list, then the rows checked in order."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from harness.core.errors import BenchmarkError
from harness.core.types import Benchmark, Chunk
from harness.data import beir
from harness.data import benchmarks as B
from harness.data.records import parse_date, text_of


def _rows(path: Path, digest) -> list[tuple[int, dict]]:
    if not path.is_file():
        raise BenchmarkError(f"BEIR file not found: {path}")
    raw = path.read_bytes()
    digest.update(path.name.encode() + b"\0" + raw)
    rows = []
    for line_no, line in enumerate(text_of(path, raw).splitlines(), start=1):
        if not line.strip():
            continue
        row = B._json(path, line.encode(), where=f"line {line_no}")
        if not isinstance(row, dict):
            raise BenchmarkError(f"{path}:{line_no}: each line must be a JSON object")
        rows.append((line_no, row))
    return rows


def _reference(folder: Path, split: str = "test") -> Benchmark:
    digest = hashlib.sha256()
    cpath, qpath = folder / "corpus.jsonl", folder / "queries.jsonl"
    corpus: dict[str, Chunk] = {}
    for line_no, row in _rows(cpath, digest):
        cid = B._field(cpath, line_no, row, "_id")
        text = row.get("text")
        if not isinstance(text, str):
            raise BenchmarkError(f"{cpath}:{line_no}: 'text' must be a string")
        if cid in corpus:
            raise BenchmarkError(f"{cpath}:{line_no}: duplicate _id '{cid}'")
        when = parse_date(row.get("date"), f"{cpath}:{line_no}: 'date'")
        corpus[cid] = Chunk(cid, text, str(row.get("title") or ""), date=when)
    if not corpus:
        raise BenchmarkError(f"{cpath}: the corpus is empty")
    texts, rows = {}, {}
    for line_no, row in _rows(qpath, digest):
        qid = B._field(qpath, line_no, row, "_id")
        text = row.get("text")
        if not isinstance(text, str) or not text.strip():
            raise BenchmarkError(f"{qpath}:{line_no}: query '{qid}' has no text")
        texts[qid] = text
        rows[qid] = (f"{qpath}:{line_no}: query '{qid}'", row)
    source = beir.qrels_source(folder, split, None)
    metadata = {"format": "beir", "split": split}
    return beir.beir_benchmark("b", str(folder), corpus, texts, rows, source, digest, metadata)


def _line(**row) -> bytes:
    return json.dumps(row, ensure_ascii=False).encode()


GOOD_CORPUS = [
    _line(_id="d1", title="T", text="alpha beta"),
    b"",
    _line(_id=7, text="an integer id", date="2024-05-01"),
    _line(_id="d3", text="ünïcode \u00a0 text", title=None, extra={"x": [1, 2]}),
    _line(_id="d4", text="escaped \\u2028 is fine").replace(b"\\\\u", b"\\u"),
    _line(_id="d5", text="trailing blanks") + b" \t ",
    b"  " + _line(_id="d6", text="leading blanks"),
    b"\xef\xbb\xbf" + _line(_id="d7", text="a UTF-8 BOM on a line"),
    _line(_id="d8", text="crlf") + b"\r",
    b"   ",
]


def _write(folder: Path, corpus: list[bytes], queries: list[bytes] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_bytes(b"\n".join(corpus) + b"\n")
    default = [_line(_id="q1", text="alpha?"), _line(_id="q2", text="beta?", answerable=True)]
    (folder / "queries.jsonl").write_bytes(b"\n".join(queries or default) + b"\n")
    (folder / "qrels").mkdir(exist_ok=True)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\t7\t2\n")
    return folder


def test_a_valid_folder_loads_as_before(tmp_path):
    folder = _write(tmp_path / "b", GOOD_CORPUS)
    got = B.load_beir(folder, name="b")
    assert got == _reference(folder)
    assert set(got.corpus) == {"d1", "7", "d3", "d4", "d5", "d6", "d7", "d8"}
    assert got.corpus["7"].date is not None and got.corpus["d1"].title == "T"


BAD_CORPORA = {
    "field error, then a later line that is not JSON": [
        _line(_id="d1", text="x"),
        _line(text="no id"),
        b'{"_id": "d3", "text": ',
    ],
    "duplicate, then a later non-object": [
        _line(_id="d1", text="x"),
        _line(_id="d1", text="y"),
        b"[1, 2]",
    ],
    "bad date, then bad JSON": [_line(_id="d1", text="x", date="May 1st"), b"{oops}"],
    "only the field error": [_line(_id="d1", text="x"), _line(_id="d2", text=3)],
    "blank id": [_line(_id="  ", text="x")],
    "boolean id": [_line(_id=True, text="x")],
    "list id": [_line(_id=["a"], text="x")],
    "no text": [_line(_id="d1")],
    "a raw U+2028 splits the line": [_line(_id="d1", text="a\u2028b")],
    "a NBSP after the object": [_line(_id="d1", text="x") + "\u00a0".encode()],
    "two objects on a line": [_line(_id="d1", text="x") + b" " + _line(_id="d2", text="y")],
    "NUL first": [b"\x00" + _line(_id="d1", text="x")],
    "NUL second": [b"{\x00" + _line(_id="d1", text="x")[1:]],
    "not UTF-8, after a field error": [_line(text="no id"), b'{"_id": "d2", "text": "\xff"}'],
    "nested too deeply": [b"[" * 100_000 + b"]" * 100_000],
    "only blank lines": [b"", b"  "],
    "a huge integer": [b'{"_id": "d1", "text": "x", "n": ' + b"9" * 5000 + b"}"],
}


@pytest.mark.parametrize("case", list(BAD_CORPORA))
def test_each_bad_corpus_fails_with_the_same_line(tmp_path, case):
    folder = _write(tmp_path / "b", BAD_CORPORA[case])
    with pytest.raises(Exception) as want:
        _reference(folder)
    with pytest.raises(type(want.value)) as got:
        B.load_beir(folder, name="b")
    assert str(got.value) == str(want.value)


def test_query_errors_keep_their_order(tmp_path):
    queries = [_line(_id="q1", text="ok"), _line(_id="q2", text=" "), b"{broken"]
    folder = _write(tmp_path / "b", GOOD_CORPUS, queries)
    with pytest.raises(BenchmarkError) as want:
        _reference(folder)
    with pytest.raises(BenchmarkError, match=r"queries.jsonl: invalid JSON at line 3") as got:
        B.load_beir(folder, name="b")
    assert str(got.value) == str(want.value)
