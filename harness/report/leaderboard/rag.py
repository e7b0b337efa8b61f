"""The leaderboard's end-to-end RAG tables per corpus (docs/rag.md), each with the average over
the retrievers shown: RARE's Table 4 shape (`rag_<corpus>`: per retriever, E2E accuracy with
the top K, closed-book (Param-only) accuracy, RAG Gain, PerfRecall@K and Parametric Gain) and
GaRAGe's Table 2 shape (`garage_<corpus>`: eligibility, unadjusted factuality, factuality,
uRAF, RAF, with attribution F1 where cells hold it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from harness.cell.result import Evaluation
from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.tables import (
    Significance,
    Table,
    Value,
    _legend,
    cell_ks,
    cutoffs,
    grouped_table,
    metric_name,
    section_mismatch,
    weakest_first,
)


@dataclass(frozen=True)
class Shape:
    tag: str  # the table's name: <tag>_<corpus>
    first: str  # the family a cell must hold to be a row, and the rows' order
    columns: tuple[tuple[str, str], ...]  # (heading, family)
    optional: tuple[tuple[str, str], ...]  # shown when some cell holds the family
    title: str
    note: str
    holds: frozenset[str] = frozenset()  # families that make a cell a row; empty: {first}
    section: str = "rag"  # the config section whose settings the table names
    describe: Callable[[dict], str] | None = None  # those settings in words; None: rag's
    average: bool = True  # an average row under the retrievers


RARE = Shape(
    "rag",
    "e2e",
    (("E2E", "e2e"), ("Param-only", "closed_book"), ("RAG Gain", "rag_gain"),
     ("PerfRecall", "perfrecall"), ("Param. Gain", "parametric_gain")),
    (),
    "end-to-end RAG, accuracy (%) and gains (points)",
    "E2E: share of the answerable queries the generator answers correctly with the top K; "
    "Param-only: closed-book; RAG Gain = E2E - Param-only; Param. Gain = E2E - PerfRecall@K "
    "(RARE §5.5, Table 4; docs/rag.md)",
)  # fmt: skip
GARAGE = Shape(
    "garage",
    "eligibility",
    (("Eligibility", "eligibility"), ("Unadj. Fact.", "ufactuality"),
     ("Factuality", "factuality"), ("uRAF", "uraf"), ("RAF", "raf")),
    (("Attr. F1", "attribution_f1"),),
    "GaRAGe's measures of the answers (%)",
    "Eligibility: no major issue in addressing the request; Unadj. Fact.: every sentence "
    "supported by a passage shown (or needing none); Factuality: both; uRAF, RAF: the same "
    "with only the passages labelled relevant (GaRAGe §2.4, Table 2; docs/rag.md#garage)",
)  # fmt: skip


def shaped_table(board: Board, corpus: str, shape: Shape, sig: Significance | None) -> Table | None:
    """Rows = the corpus's cells with one of the shape's families at some K, weakest first
    (by its first family at the largest K), then their average; column groups = the cutoffs
    K those cells share. None when no cell of the corpus has one."""
    holds = shape.holds or {shape.first}
    cells = {n: e for n, e in board.cells[corpus].items() if cell_ks(e, holds)}
    if not cells:
        return None
    ks, not_shown = cutoffs([cell_ks(e, holds) for e in cells.values()])
    held = {f for _, f in shape.optional if any(cell_ks(e, {f}) for e in cells.values())}
    columns = [*shape.columns, *((h, f) for h, f in shape.optional if f in held)]
    columns = [(f"@{k}", head, f if f == "closed_book" else metric_name(f, k), "overall", None,
                cells) for k in ks for head, f in columns]  # fmt: skip

    names = weakest_first(cells, lambda n: cells[n].mean(metric_name(shape.first, ks[-1])))
    title = f"{corpus}: {shape.title}"
    mismatch = section_mismatch(cells, shape.section)  # no best among settings that differ
    sig = None if mismatch else sig
    key = f"{shape.tag}_{corpus}"
    table = grouped_table(board, names, columns, sig, key, title, marked=not mismatch)
    if table is None:
        return None
    if shape.average:
        values = list(zip(*(row for _, row in table.rows)))
        average = [
            Value(sum(xs) / len(xs)) if xs else Value()
            for xs in ([v.value for v in col if v.value is not None] for col in values)
        ]
        table.rows.append((f"Average ({len(names)})", average))
    # the model section the numbers come from, in words; or why they do not compare
    section = (next(iter(cells.values())).doc.get("config") or {}).get(shape.section) or {}
    table.notes = [shape.note, mismatch or (shape.describe or _describe)(section)]
    if shape is RARE and _uneven(cells, [("closed_book", f"e2e@{k}") for k in ks]):
        table.notes.append(
            "Some verdicts could not be read: E2E and Param-only are then means over slightly "
            "different queries, and RAG Gain, the mean of the per-query gains where both are "
            "known, differs from their difference (docs/rag.md)"
        )
    if shape is RARE and _uneven(cells, [(f"perfrecall@{k}", f"e2e@{k}") for k in ks]):
        table.notes.append(
            "PerfRecall is a mean over the queries with gold groups, E2E over those with a "
            "reference answer and a verdict; here they differ, so Param. Gain, the mean of the "
            "per-query gains where both are known, differs from E2E - PerfRecall (docs/rag.md)"
        )
    table.notes += _legend(board, [corpus], sig, published=False, table=table)[1:]
    table.notes += not_shown
    return table


def _uneven(cells: dict[str, Evaluation], pairs: list[tuple[str, str]]) -> bool:
    """Whether some cell has one metric of a pair known on a query where the other is not."""
    for e in cells.values():
        for a, b in pairs:
            x, y = e.values.get(a), e.values.get(b)
            if x is not None and y is not None and (np.isnan(x) != np.isnan(y)).any():
                return True
    return False


def _describe(section: dict) -> str:
    gen = section.get("generator") or {}
    custom = gen.get("backend") == "custom"
    model = (gen.get("target") if custom else gen.get("model")) or gen.get("object") or "?"
    judge = (section.get("judge_object") or {}).get("object") or section.get("judge", "lexical")
    return f"generator: {model}; judge: {judge}"
