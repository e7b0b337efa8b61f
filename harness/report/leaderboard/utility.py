"""The leaderboard's utility table per corpus: how much each retriever's top K raises a
generator's belief in the reference answer (ΔSePer@K, soft and hard kernels), that belief
itself (SePer@K) and Coverage@K beside it, so retrieval and utility read side by side
(docs/utility.md)."""

from __future__ import annotations

from harness.cell.result import Evaluation
from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.tables import (
    Options,
    Significance,
    Table,
    _legend,
    cell_ks,
    cutoffs,
    grouped_table,
    metric_name,
    settings_note,
)

COLUMNS = (("ΔSePer", "dseper"), ("ΔSePer hard", "dseper_hard"), ("SePer", "seper"))
CONTEXT = (("Cov", "coverage"),)
UTILITY = frozenset(f for _, f in COLUMNS)


def _ks(e: Evaluation) -> set[int]:
    return cell_ks(e, UTILITY)


def utility_table(
    board: Board, corpus: str, opts: Options, sig: Significance | None = None
) -> Table | None:
    """Rows = the corpus's cells with a utility metric, weakest ΔSePer first; column groups
    = the cutoffs K those cells share. None when no cell of the corpus has one."""
    every = board.cells[corpus]
    cells = {n: e for n, e in every.items() if _ks(e)}
    if not cells:
        return None
    ks, not_shown = cutoffs([_ks(e) for e in cells.values()])
    columns = (*COLUMNS, *CONTEXT)
    specs = [(f"@{k}", [(head, metric_name(f, k), None) for head, f in columns]) for k in ks]
    title = f"{corpus}: retrieval utility, ΔSePer (percentage points) and SePer (%)"
    key, names = f"utility_{corpus}", _order(cells, max(ks))
    table = grouped_table(board, cells, names, specs, sig, key, title)
    if table is None:
        return None
    table.notes = [
        "ΔSePer: the generator's belief in the reference answer with the top K in its prompt "
        "minus its belief with none (soft kernel: each sampled answer weighted by its "
        "entailment of the reference; hard: answers clustered by bidirectional entailment); "
        "SePer: the belief with the top K; unanswerable queries left out (docs/utility.md)",
        *settings_note(cells, "utility", _describe),
    ]
    table.notes += _legend(board, [corpus], sig, published=False, table=table)[1:]
    table.notes += not_shown
    return table


def _model(section: dict) -> str:
    return str(section.get("model") or section.get("target") or section.get("object") or "?")


def _describe(section: dict) -> str:
    gen, nli = _model(section.get("generator") or {}), _model(section.get("nli") or {})
    return f"generator: {gen}; NLI model: {nli}"


def _order(cells: dict[str, Evaluation], k: int) -> list[str]:
    """Weakest first by ΔSePer at the largest K; cells without it on top."""

    def key(name: str):
        x = cells[name].mean(metric_name("dseper", k))
        return (-2.0 if x is None else x, name)

    return sorted(cells, key=key)
