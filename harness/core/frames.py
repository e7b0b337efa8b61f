"""Runs and qrels as pandas DataFrames, in the column layouts the ecosystem uses:
PyTerrier's (`qid, docno, score[, rank]`; qrels `qid, docno, label`), ir_measures'
(`query_id, doc_id, score`; qrels `query_id, doc_id, relevance`) and, for qrels, BEIR's
(`query-id, corpus-id, score`, a qrels .tsv read with pandas)."""

from __future__ import annotations

import math
import numbers
from typing import Any

from harness.core.errors import BenchmarkError

# (query id, chunk id, score) columns, in the order they are looked for
RUN_COLUMNS = (("qid", "docno", "score"), ("query_id", "doc_id", "score"))
QRELS_COLUMNS = (
    ("qid", "docno", "label"),
    ("query_id", "doc_id", "relevance"),
    ("query-id", "corpus-id", "score"),  # a BEIR qrels .tsv read with pandas
)


def is_frame(obj: Any) -> bool:
    """Whether `obj` is a pandas DataFrame (pandas is not imported for the question)."""
    import sys

    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)


def run_scores(df: Any) -> dict[str, dict[str, float]]:
    """`{query_id: {chunk_id: score}}` from a run DataFrame; ids are read as text, a missing
    id or a chunk listed twice for one query is one error naming the row."""
    out: dict[str, dict[str, float]] = {}
    for row, qid, doc, score in _rows(df, "run", RUN_COLUMNS):
        docs = out.setdefault(qid, {})
        if doc in docs:
            raise BenchmarkError(
                f"run DataFrame row {row!r}: query '{qid}' lists chunk '{doc}' twice; "
                "keep one row per (query, chunk)"
            )
        if not _finite(score):  # checked here to name the row (Run.of checks dicts)
            raise BenchmarkError(
                f"run DataFrame row {row!r}: query '{qid}', chunk '{doc}': {bad_score(score)}"
            )
        docs[doc] = score
    return out


def bad_score(value: Any) -> str:
    """What is wrong with a score that is not a finite number, and the fix."""
    if isinstance(value, str):
        return f"score {value!r} is text, not a number; give numbers (float({value!r}))"
    if isinstance(value, numbers.Real) and not isinstance(value, bool):  # numpy's too
        return f"score {value!r} is not finite; give finite scores"
    return f"score {value!r} is not a number; give finite numbers"


def _missing(value: Any) -> bool:
    """NaN, NaT or pandas' <NA> (a nullable integer column's gap)."""
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or the like: not a gap, read as it is
        return False


def _finite(value: Any) -> bool:
    try:
        return not isinstance(value, bool) and math.isfinite(value)
    except TypeError:
        return False


def qrels_text(df: Any) -> str:
    """A qrels DataFrame as the text of a BEIR qrels file (the one qrels reader reads it):
    grades as integers where they are whole numbers, label names (RELATED) as they are."""
    lines = ["query-id\tcorpus-id\tscore"]
    for row, qid, doc, grade in _rows(df, "qrels", QRELS_COLUMNS):
        if grade is None or _missing(grade):
            raise BenchmarkError(
                f"qrels DataFrame row {row!r}: query '{qid}', chunk '{doc}' has no grade "
                f"({grade}); give each row an integer grade or a label name"
            )
        if isinstance(grade, float) and grade.is_integer():
            grade = int(grade)
        if any(c in str(x) for x in (qid, doc, grade) for c in "\t\r\n"):
            raise BenchmarkError(f"qrels DataFrame row {row!r}: a tab or line break in a field")
        lines.append(f"{qid}\t{doc}\t{grade}")
    return "\n".join(lines) + "\n"


def _rows(df: Any, what: str, layouts) -> Any:
    """(row label, query id, chunk id, value) per row, ids as text, in the first of `layouts`
    whose columns the frame has."""
    cols = next((c for c in layouts if set(c) <= set(df.columns)), None)
    if cols is None:
        want = " or ".join(f"{', '.join(c)} ({tool})" for c, tool in zip(layouts, _TOOLS))
        have = ", ".join(map(str, df.columns)) or "none"
        raise BenchmarkError(f"a {what} DataFrame needs the columns {want}; it has {have}")
    q, d, v = cols
    # a row is named by its index label, or by its position where labels repeat (frames
    # concatenated without ignore_index)
    rows = df.index.tolist() if df.index.is_unique else range(len(df))
    for row, qid, doc, value in zip(rows, df[q].tolist(), df[d].tolist(), df[v].tolist()):
        yield row, _id(qid, what, q, row), _id(doc, what, d, row), value


_TOOLS = ("PyTerrier", "ir_measures", "BEIR")


def _id(value: Any, what: str, column: str, row: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise BenchmarkError(f"{what} DataFrame row {row!r}: no {column}; give every row its id")
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
