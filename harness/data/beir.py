"""BEIR's shape, shared by the BEIR folder and ir_datasets loaders: the qrels file a folder is
scored with, the one qrels reader (BEIR TSV or TREC qrels, from a file or a DataFrame), and
the benchmark built from a corpus, query texts and those judgments."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from harness.core.errors import BenchmarkError
from harness.core.files import missing
from harness.core.frames import is_frame, qrels_text
from harness.core.types import Benchmark, Chunk
from harness.data.records import (
    MAX_GRADE,
    QrelsCollector,
    _absent_judged,
    _absent_labelled,
    _beir_query,
    grade_of,
    hash_part,
    text_of,
)


def beir_benchmark(
    name: str,
    where: str,
    corpus: dict[str, Chunk],
    texts: dict[str, str],
    rows: dict[str, tuple[str, dict]],
    source: tuple[str, str, bytes],
    digest: Any,
    metadata: dict[str, Any],
    checksum: str | None = None,
) -> Benchmark:
    """A benchmark of BEIR's shape from its corpus, its query texts and rows (where, row), and
    its qrels (where, checksum label, bytes), read by the one qrels reader; `checksum`
    replaces the files' digest."""
    path, label, raw = source
    hash_part(digest, label, raw)
    judgments = QrelsCollector()
    for line_no, qid, cid, grade_text in qrels_rows(path, raw):
        if qid not in texts:
            raise BenchmarkError(f"{path}:{line_no}: query '{qid}' is not in queries.jsonl")
        judgments.add(f"{path}:{line_no}", f"line {line_no}", qid, cid, grade_text)
    judgments.check(str(path))
    checksum = checksum or "sha256:" + digest.hexdigest()
    metadata = {**metadata, "queries_in_file": len(texts)}
    return judged_benchmark(name, where, path, corpus, texts, rows, judgments, checksum, metadata)


def judged_benchmark(
    name: str,
    where: str,
    qrels_where: str,
    corpus: dict[str, Chunk],
    texts: Mapping[str, str],
    rows: Mapping[str, tuple[str, dict]],
    judgments: QrelsCollector,
    checksum: str,
    metadata: dict[str, Any],
) -> Benchmark:
    """The benchmark of BEIR's shape (a BEIR folder, ir_datasets, a Hub dataset) from its
    checked judgments: the queries with a judgment (or answerable=false) are kept; judgments
    of chunks the corpus lacks are kept and counted in the metadata, as trec_eval keeps them."""
    qrels, labels = judgments.qrels, judgments.labels
    if not qrels and not labels and not any(r.get("answerable") is False for _, r in rows.values()):
        raise BenchmarkError(
            f"{qrels_where}: no judgments; a benchmark needs at least one judged query (set "
            f"corpus.split to a split with qrels)"
        )
    queries = tuple(
        _beir_query(qid, texts[qid], qrels.get(qid), labels.get(qid), *rows[qid])
        for qid in texts
        if qid in qrels or qid in labels or rows[qid][1].get("answerable") is False
    )
    metadata = {**metadata, "queries_without_judgments_in_split": len(texts) - len(queries)}
    for key, absent in (
        ("judged_not_in_corpus", _absent_judged(qrels_where, qrels, corpus)),
        ("labelled_not_in_corpus", _absent_labelled(labels, corpus)),
    ):
        if absent:
            metadata[key] = absent
    return Benchmark(name, corpus, queries, checksum, where, metadata)


def qrels_file(folder: Path | None, split: str, qrels: Any = None) -> Path:
    """The qrels file a BEIR folder is scored with: corpus.qrels when set, else
    qrels/<split>.tsv, else qrels/<split>.txt (TREC qrels)."""
    if qrels is not None:
        return Path(str(qrels)).expanduser()
    tsv = folder / "qrels" / f"{split}.tsv"
    txt = tsv.with_suffix(".txt")
    return txt if not tsv.is_file() and txt.is_file() else tsv


def qrels_source(folder: Path | None, split: str, qrels: Any) -> tuple[str, str, bytes]:
    """(where, checksum label, bytes) of the judgments: a file, or a DataFrame as TSV; no
    `folder` (ir_datasets) takes `qrels` alone."""
    if is_frame(qrels):
        return "qrels DataFrame", "qrels/DataFrame", qrels_text(qrels).encode()
    path = qrels_file(folder, split, qrels)
    if not path.is_file():
        if qrels is not None:
            raise BenchmarkError(f"{missing(path, 'qrels file')} (from corpus.qrels)")
        found = sorted(
            {p.stem for p in (folder / "qrels").glob("*") if p.suffix in (".tsv", ".txt")}
        )
        raise BenchmarkError(
            f"qrels file not found: {path}; splits found: {', '.join(found) or 'none'} "
            f"(set corpus.split, or corpus.qrels=FILE)"
        )
    return str(path), f"qrels/{path.name}", path.read_bytes()


_QRELS_LAYOUTS = {
    3: "'query-id corpus-id score' (BEIR, tab-separated)",
    4: "'qid iter docid rel' (TREC qrels)",
}


def qrels_rows(path: str | Path, raw: bytes) -> Iterator[tuple[int, str, str, str]]:
    """(line number, query id, chunk id, score text) of each judgment of a qrels file: BEIR's
    3 fields (tab-separated, with its `query-id` header) or TREC's 4 (`qid iter docid rel`, any
    white space, the iteration unused, as trec_eval reads them), one layout per file. Blank
    lines and lines starting with `#` (trec_eval's comments) are skipped."""
    width = 0  # fields per line: the first judgment's (3 after BEIR's header)
    for line_no, line in enumerate(text_of(Path(path), raw).splitlines(), start=1):
        tabs, spaces = line.split("\t"), line.split()
        if not spaces or spaces[0].startswith("#"):
            continue
        if line_no == 1 and spaces[0] == "query-id":
            width = 3
            continue
        # BEIR splits on tabs (an id may hold a space); TREC on any white space
        beir = len(tabs) == 3 and (width == 3 or (not width and len(spaces) != 4))
        parts = tabs if beir else spaces
        width = width or len(parts)
        if width == 3 and not beir and len(parts) == 3:
            raise BenchmarkError(
                f"{path}:{line_no}: {line!r} has 3 fields apart by spaces; BEIR's qrels are "
                f"tab-separated (query-id, corpus-id, score) and TREC's have 4 (qid iter docid "
                f"rel): use tabs, or add the iteration column"
            )
        if len(parts) != width or width not in _QRELS_LAYOUTS or (width == 3) != beir:
            layout = (
                " or ".join(_QRELS_LAYOUTS.values())
                if width not in _QRELS_LAYOUTS
                else f"{_QRELS_LAYOUTS[width]}, the layout of the file's first judgment"
            )
            raise BenchmarkError(f"{path}:{line_no}: expected {layout}, found {line!r}")
        yield (line_no, *(parts if width == 3 else (parts[0], parts[2], parts[3])))


def trec_qrels(path: Path) -> dict[str, dict[str, int]]:
    """A qrels file as trec_eval reads it (python -m harness.trec_eval): integer grades, each
    (query, document) pair judged once."""
    path = Path(path)
    if not path.is_file():
        raise BenchmarkError(missing(path, "qrels file"))
    qrels: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    for line_no, qid, cid, grade_text in qrels_rows(path, path.read_bytes()):
        grade = grade_of(grade_text)
        if grade is None or not -MAX_GRADE <= grade <= MAX_GRADE:
            raise BenchmarkError(
                f"{path}:{line_no}: relevance '{grade_text}' is not an integer grade "
                f"(|grade| <= {MAX_GRADE:,}, as trec_eval reads them)"
            )
        if (qid, cid) in first:
            raise BenchmarkError(
                f"{path}:{line_no}: {qid} {cid} is judged twice (line {first[qid, cid]}); "
                "keep one judgment per pair, as trec_eval requires"
            )
        first[qid, cid] = line_no
        qrels.setdefault(qid, {})[cid] = grade
    if not qrels:
        raise BenchmarkError(f"{path}: no judgments; expected lines 'qid iter docid rel'")
    return qrels
