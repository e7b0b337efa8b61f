"""The one table renderer: aligned text for the terminal and GitHub Markdown, through tabulate
(CSV goes through the csv module; the leaderboard's grouped booktabs LaTeX has its own writer,
harness.report.leaderboard.render, as neither tabulate nor pandas writes grouped headers with
\\cmidrule). Cells are given as text, already formatted; nothing is parsed as a number."""

from __future__ import annotations

from collections.abc import Sequence


def fixed(x: float, places: int = 2, signed: bool = False) -> str:
    """`x` with `places` decimals. It is rounded to 9 decimals first, so that one mean summed
    in two orders (53.125 and 53.12500000000001) prints the same, not 53.12 beside 53.13; a
    value that rounds to zero prints as zero, +0.00 (adding 0.0 turns a -0.0 into 0.0)."""
    return f"{round(round(x, 9), places) + 0.0:{'+' if signed else ''}.{places}f}"


def _render(header, body, fmt: str, left: int, align) -> list[str]:
    import tabulate as tab

    def flat(cells):  # a label with a line break (a query field's value) stays on its row
        return [" ".join(str(c).splitlines()) for c in cells]

    header, body = flat(header), [flat(r) for r in body]

    colalign = (
        list(align) if align is not None else ["left"] * left + ["right"] * (len(header) - left)
    )
    padding, tab.MIN_PADDING = tab.MIN_PADDING, 0  # columns as wide as their widest cell
    try:
        out = tab.tabulate(body, header, tablefmt=fmt, disable_numparse=True, colalign=colalign)
    finally:
        tab.MIN_PADDING = padding
    return out.splitlines()


def text(
    header: Sequence[str], body: Sequence[Sequence[str]], left: int = 1, align=None
) -> list[str]:
    """Aligned text rows under a header and a rule: the first `left` columns left-aligned,
    the rest right-aligned (or `align`: "left" / "right" per column)."""
    rows = [list(r) for r in body]
    return [line.rstrip() for line in _render(list(header), rows, "simple", left, align)]


def markdown(
    header: Sequence[str], body: Sequence[Sequence[str]], left: int = 1, align=None
) -> list[str]:
    """A GitHub Markdown table, cells padded to their column's width; `|` in a cell is
    escaped. Alignment as in `text`."""

    def esc(cells):
        return [str(c).replace("|", "\\|") for c in cells]

    return _render(esc(header), [esc(r) for r in body], "pipe", left, align)
