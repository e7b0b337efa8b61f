"""`python -m harness.leaderboard`: turn results/ into paper tables, plots and an HTML page.

Reads results/ (cells, diagnostics, strata files) and the published numbers (shipped,
plus results/reference/) and writes
leaderboard/: table3, hops_<corpus> and reproduction as .md/.tex/.csv, leaderboard.csv (every
number in long format), plots/*.png|svg and index.html. A damaged cell is reported by path
and skipped; the rest still renders.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from harness.cli.common import ArgumentParser, guarded, notes_to_stderr
from harness.core.errors import HarnessError
from harness.report.leaderboard.publish import FORMATS, TABLES, build, write


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="python -m harness.leaderboard",
        description="Paper tables (RARE Table 3 layout, hop tables, reproduction report against "
        "the published numbers), plots and a self-contained HTML leaderboard, from results/.",
        epilog="Examples:\n"
        "  python -m harness.leaderboard\n"
        "  python -m harness.leaderboard --format latex --table hops --corpus finance --ci\n"
        "  python -m harness.leaderboard --check    # exit 1 on a FAIL or a damaged cell (CI)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--results", default="results", help="results folder (default: results)")
    p.add_argument("--out", default="leaderboard", help="output folder (default: leaderboard)")
    p.add_argument(
        "--format",
        default="all",
        choices=FORMATS,
        help="what to write and print (default: all = md, tex, csv, html and plots)",
    )
    p.add_argument("--table", default="all", choices=TABLES, help="which tables (default: all)")
    p.add_argument("--corpus", nargs="+", metavar="NAME", help="only these corpora (in order)")
    p.add_argument("--k", type=int, default=None, help="the cutoff shown (default: 10)")
    p.add_argument(
        "--tolerance",
        type=float,
        default=0.5,
        help="OK when |reproduced - published| <= this many points (default: 0.5)",
    )
    p.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="significance level of the markers, after Holm (default: 0.05)",
    )
    p.add_argument(
        "--permutations",
        type=int,
        default=10_000,
        help="sign flips per randomization test (default: 10000)",
    )
    p.add_argument(
        "--no-significance", action="store_true", help="skip the randomization tests (no * markers)"
    )
    p.add_argument(
        "--ci",
        action="store_true",
        help="add the 95%% bootstrap interval of every mean to the Markdown and LaTeX tables "
        "(the HTML page always shows them)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a reproduction FAILs or results/ has a problem",
    )
    return p


def _build_and_write(args: argparse.Namespace):
    out, results = Path(args.out or "").resolve(), Path(args.results).resolve()
    if not str(args.out or "").strip():
        raise HarnessError("--out is empty; give the folder the leaderboard goes to")
    if out == results or results in out.parents:
        raise HarnessError(
            f"--out {args.out} is inside the results folder {args.results}; the "
            f"leaderboard would be read back as results: pick a folder outside it, e.g. "
            f"--out leaderboard"
        )
    board, corpora, tables, fails = build(args)
    try:
        files = write(args, board, corpora, tables)
    except OSError as exc:
        raise HarnessError(
            f"cannot write under {args.out}: {exc.strerror or exc}; pick a writable --out"
        ) from None
    return board, corpora, tables, fails, files


def main(argv: Sequence[str] | None = None) -> int:
    notes_to_stderr()
    from harness.report.leaderboard import render as R

    args = guarded(_parser().parse_args, argv)
    board, corpora, tables, fails, files = guarded(_build_and_write, args)
    render = {"latex": partial(R.latex, ci=args.ci), "csv": R.csv_text}.get(
        args.format, partial(R.markdown, ci=args.ci)
    )
    if args.format != "html":
        for t in tables:
            print(render(t))
    for p in board.problems:
        print(f"warning: {p}", file=sys.stderr)
    for note in board.notes:
        print(f"note: {note}", file=sys.stderr)
    n_cells = sum(len(board.cells[c]) for c in corpora)
    print(
        f"{n_cells} cell{'s' * (n_cells != 1)} on {len(corpora)} "
        f"corp{'ora' if len(corpora) != 1 else 'us'} ({', '.join(corpora)}); "
        f"{len(files)} file{'s' * (len(files) != 1)} written under {args.out}/"
        + (f"; open {Path(args.out) / 'index.html'}" if args.format in ("all", "html") else "")
    )
    if fails:
        print(f"reproduction: {fails} FAIL at ±{args.tolerance:g} points", file=sys.stderr)
    if args.check and (fails or board.problems):
        return 1
    return 0
