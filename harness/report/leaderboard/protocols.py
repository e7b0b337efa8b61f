"""The leaderboard's deflection table per corpus: how well each retriever's raw scores tell
answerable queries from unanswerable ones (AUROC by the top-1 score and the top-K mean), and
how often an unanswerable query's top K holds a distractor-labelled passage (metrics.json
`protocols.deflection`, metrics.deflection)."""

from __future__ import annotations

from typing import Any

from harness.cell.result import Evaluation
from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.tables import Options, Table, Value, mark_best, weakest_first
from harness.report.protocols import top_k


def block(e: Evaluation) -> dict[str, Any] | None:
    """The cell's deflection block, or None when it has none."""
    got = (e.doc.get("protocols") or {}).get("deflection")
    return got if isinstance(got, dict) else None


def _ks(blocks: list[dict[str, Any]], part: str) -> list[int]:
    """Every K the blocks hold: `top<K>_mean` keys of auroc, `top<K>` keys of distractors."""
    suffix = "_mean" if part == "auroc" else ""
    return sorted(
        {
            top_k(key)
            for b in blocks
            for key in (b.get(part) or {})
            if key.startswith("top") and key.endswith(suffix)
        }
    )


def _auroc(x: Any, stale: bool) -> Value:
    return Value(x, text="-" if x is None else f"{x:.3f}", stale=stale)


def deflection_table(board: Board, corpus: str, opts: Options) -> Table | None:
    """Rows = retriever cells with a deflection block, weakest top-1 AUROC first; None when no
    cell of the corpus has one (every query answerable, or cells from before the block)."""
    cells = {n: e for n, e in board.cells[corpus].items() if block(e) is not None}
    if not cells:
        return None
    blocks = [block(e) for e in cells.values()]
    auroc_ks = _ks(blocks, "auroc")
    share_ks = _ks(blocks, "distractors")

    rows: list[tuple[str, list[Value]]] = []
    for name in weakest_first(cells, lambda n: (block(cells[n]).get("auroc") or {}).get("top1")):
        e = cells[name]
        b = block(e)
        n, auroc, d = b.get("n") or {}, b.get("auroc") or {}, b.get("distractors") or {}
        vals = [Value(text=str(n.get(a, "-"))) for a in ("yes", "no")]
        keys = ["top1", *(f"top{k}_mean" for k in auroc_ks)]
        vals += [_auroc(auroc.get(key), e.stale) for key in keys]
        for k in share_ks:
            s = d.get(f"top{k}")
            vals.append(
                Value(None if not s or not s.get("n") else 100.0 * s["share"], stale=e.stale)
            )
        rows.append((board.label(name), vals))
    for column in range(2, 3 + len(auroc_ks)):
        mark_best(rows, column, None, {}, "auroc", tol=1e-12)  # the highest AUROC
    groups = [("queries", 2), ("AUROC yes vs no", 1 + len(auroc_ks))]
    columns = ["yes", "no", "top-1", *(f"top-{k} mean" for k in auroc_ks)]
    if share_ks:
        groups.append(("distractor in top K (%)", len(share_ks)))
        columns += [f"@{k}" for k in share_ks]
    table = Table(
        key=f"deflection_{corpus}",
        title=f"{corpus}: deflection on the retrieval side, answerable vs unanswerable queries",
        stub="Retriever",
        columns=columns,
        rows=rows,
        groups=groups,
    )
    table.notes = [
        "AUROC: probability that an answerable query (yes) scores above an unanswerable one "
        "(no) by the retriever's raw top-1 score or mean of its top K scores, ties 1/2, 0.5 = "
        "chance; partial queries left out; an empty ranking scores below every other",
        "raw scores are compared across queries, as one deflection threshold would be",
        "bold: highest AUROC of its column",
    ]
    if share_ks:
        labels = sorted(
            {lab for b in blocks for lab in (b.get("distractors") or {}).get("labels", [])}
        )
        table.notes.append(
            "distractor in top K: share of the unanswerable queries with labels whose top K holds "
            f"a passage labelled {', '.join(labels)}"
        )
    table.notes.append(
        "-: not in the cell (no unanswerable query with labels, or the cell was scored at "
        "other cutoffs, metrics.k)"
    )
    without = sorted(set(board.cells[corpus]) - set(cells))
    if without:
        table.notes.append(
            f"not shown: {', '.join(board.label(n) for n in without)} (no deflection block in "
            "metrics.json: scored before the block existed)"
        )
    if any(e.stale for e in cells.values()):
        table.notes.append("†: scored on other benchmark data than the corpus's other cells")
    return table
