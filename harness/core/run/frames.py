"""Runs as pandas DataFrames, in the two column layouts the ecosystem uses: PyTerrier's
(`qid, docno, score[, rank]`) and ir_measures' (`query_id, doc_id, score`)."""

from __future__ import annotations

import math
from typing import Any

from harness.core.errors import BenchmarkError

# (query id, chunk id, score) columns, in the order they are looked for
RUN_COLUMNS = (("qid", "docno", "score"), ("query_id", "doc_id", "score"))


def is_frame(obj: Any) -> bool:
    """Whether `obj` is a pandas DataFrame (pandas is not imported for the question)."""
    import sys

    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)


def run_scores(df: Any) -> dict[str, dict[str, float]]:
    """`{query_id: {chunk_id: score}}` from a run DataFrame; ids are read as text, a missing
    id or a chunk listed twice for one query is one error naming the row."""
    cols = next((c for c in RUN_COLUMNS if set(c) <= set(df.columns)), None)
    if cols is None:
        have = ", ".join(map(str, df.columns)) or "none"
        raise BenchmarkError(
            "a run DataFrame needs the columns qid, docno, score (PyTerrier) or query_id, "
            f"doc_id, score (ir_measures); it has {have}"
        )
    q, d, s = cols
    out: dict[str, dict[str, float]] = {}
    rows = zip(df.index.tolist(), df[q].tolist(), df[d].tolist(), df[s].tolist())
    for row, qid, doc, score in rows:
        qid, doc = _id(qid, q, row), _id(doc, d, row)
        docs = out.setdefault(qid, {})
        if doc in docs:
            raise BenchmarkError(
                f"run DataFrame row {row!r}: query '{qid}' lists chunk '{doc}' twice; "
                "keep one row per (query, chunk)"
            )
        docs[doc] = score
    return out


def _id(value: Any, column: str, row: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise BenchmarkError(f"run DataFrame row {row!r}: no {column}; give every row its id")
    if isinstance(value, float) and value.is_integer():  # a column made float by pandas
        value = int(value)
    return str(value)


def run_frame(run: Any) -> Any:
    """The run as a DataFrame with PyTerrier's columns: qid, docno, score and rank (from 0,
    as PyTerrier counts), in canonical order."""
    import pandas as pd

    rows = [
        (q, doc, score, i)
        for q in run.query_ids()
        for i, (doc, score) in enumerate(zip(run[q].ids, run[q].scores))
    ]
    frame = pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])
    return frame.astype({"qid": str, "docno": str, "score": float, "rank": int})
