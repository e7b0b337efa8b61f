"""BEIR's shape, shared by the BEIR folder and ir_datasets loaders: the qrels file a folder is
scored with, the one qrels reader (BEIR TSV or TREC qrels, from a file or a DataFrame), and
the benchmark built from a corpus, query texts and those judgments."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.core.errors import BenchmarkError
from harness.core.frames import is_frame, qrels_text
from harness.core.types import Benchmark, Chunk
from harness.data.records import (
    QrelsCollector,
    _absent_judged,
    _absent_labelled,
    _beir_query,
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
    its qrels (where, checksum label, bytes), judged by the one qrels reader: the queries with a
    judgment (or answerable=false) are kept; `checksum` replaces the files' digest."""
    qrels, labels, absent = _beir_qrels(source, digest, corpus, texts, rows)
    queries = tuple(
        _beir_query(qid, texts[qid], qrels.get(qid), labels.get(qid), *rows[qid])
        for qid in texts
        if qid in qrels or qid in labels or rows[qid][1].get("answerable") is False
    )
    metadata = {
        **metadata,
        "queries_in_file": len(texts),
        "queries_without_judgments_in_split": len(texts) - len(queries),
    }
    if absent:
        metadata["judged_not_in_corpus"] = absent
    labelled = _absent_labelled(labels, corpus)
    if labelled:
        metadata["labelled_not_in_corpus"] = labelled
    return Benchmark(
        name=name,
        corpus=corpus,
        queries=queries,
        checksum=checksum or "sha256:" + digest.hexdigest(),
        source=where,
        metadata=metadata,
    )


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
            raise BenchmarkError(f"qrels file not found: {path} (from corpus.qrels)")
        found = sorted(
            {p.stem for p in (folder / "qrels").glob("*") if p.suffix in (".tsv", ".txt")}
        )
        raise BenchmarkError(
            f"qrels file not found: {path}; splits found: {', '.join(found) or 'none'} "
            f"(set corpus.split, or corpus.qrels=FILE)"
        )
    return str(path), f"qrels/{path.name}", path.read_bytes()


_QRELS_LAYOUTS = {3: "'query-id corpus-id score' (BEIR)", 4: "'qid iter docid rel' (TREC qrels)"}


def _beir_qrels(
    source: tuple[str, str, bytes],
    digest: Any,
    corpus: Mapping[str, Chunk],
    texts: Mapping[str, str],
    rows: Mapping[str, tuple[str, dict]],
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, str]], dict[str, Any] | None]:
    """The graded judgments and the named labels (a score column that is not an integer is a
    label name, e.g. RELATED) per query, and what they say of chunks corpus.jsonl lacks
    (kept, as trec_eval keeps them; None when there are none). Lines of 3 fields are BEIR's,
    of 4 TREC's (the iteration field unused, as trec_eval ignores it); one file, one layout."""
    path, label, raw = source
    hash_part(digest, label, raw)
    judgments = QrelsCollector()
    width = 0  # fields per line: the first judgment's
    for line_no, line in enumerate(text_of(Path(path), raw).splitlines(), start=1):
        parts = line.split("\t") if "\t" in line else line.split()
        if len(parts) != 3:  # TREC qrels: fields split by any white space, as trec_eval reads
            parts = line.split()
        if not parts or not line.strip():
            continue
        if line_no == 1 and parts[0] == "query-id":
            continue
        width = width or len(parts)
        if len(parts) != width or width not in _QRELS_LAYOUTS:
            layout = (
                " or ".join(_QRELS_LAYOUTS.values())
                if width not in _QRELS_LAYOUTS
                else f"{_QRELS_LAYOUTS[width]}, the layout of the file's first judgment"
            )
            raise BenchmarkError(f"{path}:{line_no}: expected {layout}, found {line!r}")
        qid, cid, grade_text = parts if width == 3 else (parts[0], parts[2], parts[3])
        if qid not in texts:
            raise BenchmarkError(f"{path}:{line_no}: query '{qid}' is not in queries.jsonl")
        judgments.add(f"{path}:{line_no}", f"line {line_no}", qid, cid, grade_text)
    judgments.check(str(path))
    qrels, labels = judgments.qrels, judgments.labels
    if not qrels and not labels and not any(r.get("answerable") is False for _, r in rows.values()):
        raise BenchmarkError(
            f"{path}: no judgments; a benchmark needs at least one judged query (set "
            f"corpus.split to a split with qrels)"
        )
    return qrels, labels, _absent_judged(path, qrels, corpus)
