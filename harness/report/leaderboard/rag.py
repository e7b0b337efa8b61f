"""The leaderboard's end-to-end RAG table per corpus, in RARE's Table 4 shape: per retriever,
E2E accuracy with the top K, closed-book (Param-only) accuracy, RAG Gain, PerfRecall@K and
Parametric Gain, with the average over the retrievers shown (docs/rag.md)."""

from __future__ import annotations

from harness.cell.result import Evaluation
from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.tables import (
    Options,
    Significance,
    Table,
    Value,
    _legend,
    cutoffs,
    grouped_table,
    metric_name,
    settings_note,
)

COLUMNS = (
    ("E2E", "e2e"),
    ("Param-only", "closed_book"),
    ("RAG Gain", "rag_gain"),
    ("PerfRecall", "perfrecall"),
    ("Param. Gain", "parametric_gain"),
)


def rag_ks(e: Evaluation) -> set[int]:
    """The cutoffs at which the cell holds e2e@K."""
    return {int(n.split("@")[1]) for n in e.values if n.startswith("e2e@")}


def rag_table(
    board: Board, corpus: str, opts: Options, sig: Significance | None = None
) -> Table | None:
    """Rows = the corpus's cells with e2e@K, weakest E2E first, then their average; column
    groups = the cutoffs K those cells share. None when no cell of the corpus has one."""
    cells = {n: e for n, e in board.cells[corpus].items() if rag_ks(e)}
    if not cells:
        return None
    ks, not_shown = cutoffs([rag_ks(e) for e in cells.values()])
    specs = [
        (
            f"@{k}",
            [(head, f if f == "closed_book" else metric_name(f, k), None) for head, f in COLUMNS],
        )
        for k in ks
    ]

    def weakest(name: str):
        x = cells[name].mean(metric_name("e2e", ks[-1]))
        return (-2.0 if x is None else x, name)

    title = f"{corpus}: end-to-end RAG, accuracy (%) and gains (points)"
    names = sorted(cells, key=weakest)
    table = grouped_table(board, cells, names, specs, sig, f"rag_{corpus}", title)
    if table is None:
        return None
    columns = list(zip(*(values for _, values in table.rows)))
    average = [
        Value(sum(xs) / len(xs)) if xs else Value()
        for xs in ([v.value for v in col if v.value is not None] for col in columns)
    ]
    table.rows.append((f"Average ({len(names)})", average))
    table.notes = [
        "E2E: share of the answerable queries the generator answers correctly with the top K; "
        "Param-only: closed-book; RAG Gain = E2E - Param-only; Param. Gain = E2E - PerfRecall@K "
        "(RARE §5.5, Table 4; docs/rag.md)",
        *settings_note(cells, "rag", _describe),
    ]
    table.notes += _legend(board, [corpus], sig, published=False, table=table)[1:]
    table.notes += not_shown
    return table


def _describe(section: dict) -> str:
    gen = section.get("generator") or {}
    model = gen.get("model") or gen.get("target") or gen.get("object") or "?"
    judge = (section.get("judge_object") or {}).get("object") or section.get("judge", "lexical")
    return f"generator: {model}; judge: {judge}"
