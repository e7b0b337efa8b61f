"""Benchmarks from ir_datasets (`corpus=irds corpus.id=beir/scifact/test`): its docs, queries
and qrels become a benchmark of BEIR's shape, judged by the same qrels reader as a BEIR
folder, so the numbers are those of the same data written as one.

ir_datasets downloads a dataset on first use, verifies it against the checksums registered in
the package, and reads it from its cache (IR_DATASETS_HOME) afterwards: the data's identity is
the dataset id with the ir_datasets version that pinned those checksums. A dataset absent
from the cache with no network is one error line with the command that fetches it."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from typing import Any

from harness.core.errors import BenchmarkError, ConfigError, did_you_mean
from harness.core.frames import qrels_text
from harness.core.types import Benchmark, Chunk
from harness.data.beir import beir_benchmark, qrels_source

FETCH = "ir_datasets export {id} docs > /dev/null (then queries and qrels)"


def load_irds(cfg: Mapping[str, Any]) -> Benchmark:
    """The benchmark ir_datasets' dataset `corpus.id` holds (docs, queries, qrels)."""
    ident = str(cfg.get("id") or "").strip()
    if not ident or ident == "???":
        raise ConfigError("corpus=irds needs corpus.id, an ir_datasets id: beir/scifact/test")
    ir_datasets = _package()
    dataset = _dataset(ir_datasets, ident)
    corpus: dict[str, Chunk] = {}
    for doc in _read(dataset, "docs", ident):
        cid = str(doc.doc_id)
        if cid in corpus:
            raise BenchmarkError(f"ir_datasets {ident}: document '{cid}' appears twice")
        corpus[cid] = Chunk(cid, _text(doc), str(getattr(doc, "title", "") or ""))
    if not corpus:
        raise BenchmarkError(f"ir_datasets {ident}: the dataset has no documents")
    texts: dict[str, str] = {}
    rows: dict[str, tuple[str, dict]] = {}
    for query in _read(dataset, "queries", ident):
        qid = str(query.query_id)
        where = f"ir_datasets {ident}: query '{qid}'"
        text = _text(query)
        if not text.strip():
            raise BenchmarkError(f"{where} has no text")
        texts[qid], rows[qid] = text, (where, {})
    source = _qrels(dataset, ident, cfg.get("qrels"))
    version = getattr(ir_datasets, "__version__", "unknown")
    return beir_benchmark(
        str(cfg.get("name") or ident.replace("/", "-")),
        f"irds:{ident}",
        corpus,
        texts,
        rows,
        source,
        hashlib.sha256(),
        {"format": "irds", "id": ident, "ir_datasets": version},
        checksum=f"irds:{ident}@ir_datasets-{version}"
        + ("" if cfg.get("qrels") is None else "+" + hashlib.sha256(source[2]).hexdigest()[:16]),
    )


def _package():
    try:
        import ir_datasets
    except ImportError:
        raise ConfigError(
            "corpus=irds needs the ir_datasets package: pip install 'retrieval-harness[irds]'"
        ) from None
    return ir_datasets


def _dataset(ir_datasets: Any, ident: str) -> Any:
    try:
        dataset = ir_datasets.load(ident)
    except KeyError:
        known = list(ir_datasets.registry)
        raise ConfigError(
            f"ir_datasets has no dataset '{ident}'{did_you_mean(ident, known)}; see "
            "https://ir-datasets.com for the ids"
        ) from None
    for part in ("docs", "queries", "qrels"):
        if not getattr(dataset, f"has_{part}")():
            raise BenchmarkError(
                f"ir_datasets {ident} has no {part}; pick an id with docs, queries and qrels "
                "(e.g. beir/scifact/test, not beir/scifact)"
            )
    return dataset


def _read(dataset: Any, part: str, ident: str):
    """Every record of one part, with a failure to fetch or read it as one error line (its
    own log lines, "[error] docs_iter" and the like, would come before ours: held back; its
    loggers are one per module, each at INFO with its own handler, so only logging.disable
    reaches them)."""
    level = logging.root.manager.disable
    logging.disable(logging.WARNING)  # its "Download failed" warning too: our line says it
    try:
        yield from getattr(dataset, f"{part}_iter")()
    except Exception as exc:  # network, checksum, parse: ir_datasets raises many kinds
        if "ConnectionError" in type(exc).__name__ or "NameResolution" in str(exc):
            why = "it is not in ir_datasets' cache and the network cannot be reached"
        else:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            first = first if len(first) <= 120 else first[:117] + "..."
            why = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
        raise BenchmarkError(
            f"ir_datasets {ident}: cannot read its {part} ({why}); fetch it once online "
            f"with: {FETCH.format(id=ident)}"
        ) from None
    finally:
        logging.disable(level)


def _text(record: Any) -> str:
    """A doc's or query's text field (ir_datasets' own concatenation when it has none)."""
    text = getattr(record, "text", None)
    return str(text) if text is not None else str(record.default_text())


def _qrels(dataset: Any, ident: str, override: Any) -> tuple[str, str, bytes]:
    """(where, checksum label, bytes) of the judgments: the dataset's, written as BEIR's
    TSV for the one qrels reader, or corpus.qrels (a file or a DataFrame) instead."""
    if override is not None:  # a file or a DataFrame: no folder is looked in
        return qrels_source(None, "", override)
    import pandas as pd

    judged = [
        (str(q.query_id), str(q.doc_id), int(q.relevance)) for q in _read(dataset, "qrels", ident)
    ]
    frame = pd.DataFrame(judged, columns=["qid", "docno", "label"])
    return f"ir_datasets {ident} qrels", "qrels", qrels_text(frame).encode()
