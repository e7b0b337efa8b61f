"""The leaderboard's protocols table per corpus: whether each retriever's top K holds an
acceptable answer (answer_recall@K), how much of it is outdated (outdated@K), Coverage@K and
PerfRecall@K on the answerable and the partially answerable queries alone (the `answerable`
stratification) and the rank of the first answer (answer_rank); docs/metrics.md, answer and
freshness metrics."""

from __future__ import annotations

from harness.cell.result import Evaluation
from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.tables import (
    SHORT,
    Options,
    Significance,
    Table,
    _legend,
    cell_ks,
    cutoffs,
    grouped_table,
    held_metrics,
    metric_name,
    weakest_first,
)

ANSWER_FAMILIES = ("answer_recall", "answer_rank", "outdated")
STRATUM = "answerable"
LABELS = ("yes", "partial")  # "no" queries have no gold: no Coverage or PerfRecall
MEANING = {"yes": "answerable", "partial": "partially answerable"}
GROUP_METRICS = ("coverage", "perfrecall")
RANK = "answer_rank"


def _answerable(e: Evaluation) -> bool:
    by = (e.doc.get("results") or {}).get(STRATUM)
    return isinstance(by, dict) and bool(by)


def has_protocols(e: Evaluation) -> bool:
    """Whether the cell holds an answer or freshness metric or the answerable strata."""
    return _answerable(e) or any(n.split("@")[0] in ANSWER_FAMILIES for n in held_metrics(e))


def _ks(e: Evaluation) -> set[int]:
    """The cutoffs the cell's protocol columns can show."""
    families = {"answer_recall", "outdated"} | (set(GROUP_METRICS) if _answerable(e) else set())
    return cell_ks(e, families)


def _columns(k: int) -> list[tuple[str, str, str | None]]:
    """(header, metric, answerable label or None for all queries) of one K group."""
    cols = [("answer_recall", metric_name("answer_recall", k), None)]
    cols.append(("outdated", metric_name("outdated", k), None))
    for label in LABELS:
        for family in GROUP_METRICS:
            cols.append((f"{SHORT[family]} {label}", metric_name(family, k), label))
    return cols


def protocols_table(
    board: Board, corpus: str, opts: Options, sig: Significance | None = None
) -> Table | None:
    """Rows = retriever cells with an answer or freshness metric or the answerable strata,
    weakest first; column groups = the cutoffs K those cells share, then answer_rank. None
    when no cell of the corpus has any of them."""
    every = board.cells[corpus]
    cells = {n: e for n, e in every.items() if has_protocols(e)}
    if not cells:
        return None
    ks, not_shown = cutoffs([_ks(e) for e in cells.values()])
    columns = [(f"@{k}", h, m, STRATUM if lab else "overall", lab, cells)
               for k in ks for h, m, lab in _columns(k)]  # fmt: skip
    columns.append(("whole list", RANK, RANK, "overall", None, cells))
    title = f"{corpus}: answers, freshness and answerability (% except answer_rank)"
    key = f"protocols_{corpus}"
    table = grouped_table(board, _order(cells, ks), columns, sig, key, title)
    if table is None:
        return None
    # the columns shown: no dates, no partial queries, no column
    shown = [(h, m, lab) for _, h, m, _, lab, _ in columns if h in table.columns]
    table.notes = _notes(cells, shown)
    table.notes += _legend(board, [corpus], sig, published=False, table=table)[1:]
    table.notes += not_shown
    without = sorted(set(every) - set(cells))
    if without:
        table.notes.append(
            f"not shown: {', '.join(board.label(n) for n in without)} (no answer, freshness "
            "or answerable values: scored without metrics=protocols, or on data without them)"
        )
    return table


def _order(cells: dict[str, Evaluation], ks: list[int]) -> list[str]:
    """Weakest first by answer_recall at the largest K, else Coverage on answerable queries;
    cells without either on top."""
    if not ks:
        return sorted(cells)
    k = max(ks)

    def score(name: str) -> float | None:
        x = cells[name].mean(metric_name("answer_recall", k))
        return cells[name].mean(metric_name("coverage", k), STRATUM, "yes") if x is None else x

    return weakest_first(cells, score)


def _notes(cells: dict[str, Evaluation], cols: list[tuple[str, str, str | None]]) -> list[str]:
    """One line per kind of column shown, then the query counts."""
    families = {m.split("@")[0] for _, m, _ in cols}
    labels = {label for _, _, label in cols if label}
    notes = [
        "bold: best of its column among cells on the corpus's current data (highest; lowest "
        "for outdated and answer_rank)"
    ]
    if "answer_recall" in families:
        notes.append(
            "answer_recall: share of the queries with an acceptable answer whose top K holds "
            "one; answer and passage text normalised alike (lowercase, punctuation and "
            "a/an/the dropped) and matched at word boundaries; unanswerable queries left out"
        )
    if "outdated" in families:
        notes.append(
            "outdated: share of the top K that is outdated for the query (labelled OUTDATED, "
            "or dated beyond its validity window); lower is better"
        )
    if labels:
        shown = [lab for lab in LABELS if lab in labels]
        which = " or ".join(f"{MEANING[lab]} ({lab})" for lab in shown)
        notes.append(
            f"Cov / Perf {', '.join(shown)}: Coverage@K and PerfRecall@K over the {which} "
            "queries alone; unanswerable (no) ones have no gold"
        )
    if RANK in families:
        notes.append(
            "answer_rank: mean rank of the first passage holding an answer over the whole "
            "ranked list, among queries whose answer is found (read it with answer_recall); "
            "a rank, not a percentage; lower is better"
        )
    counts = _counts(cells)
    if counts:
        notes.append("queries by answerable: " + counts)
    return notes


def _counts(cells: dict[str, Evaluation]) -> str:
    """The answerable labels' query counts, or 'n differs' where live cells disagree."""
    live = [e for e in cells.values() if not e.stale and _answerable(e)]
    if not live:
        return ""
    labels = []
    for e in live:
        labels += [lab for lab in e.doc["results"][STRATUM] if lab not in labels]
    order = [lab for lab in ("yes", "partial", "no") if lab in labels]
    order += sorted(set(labels) - set(order))
    parts = []
    for lab in order:
        ns = {e.n(STRATUM, lab) for e in live} - {None}
        parts.append(f"{lab} {ns.pop() if len(ns) == 1 else 'n differs'}")
    return ", ".join(parts)
