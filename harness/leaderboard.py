"""`python -m harness.leaderboard`: turn results/ into paper tables, plots and an HTML page.

Reads results/ only (cells, results/reference/, diagnostics, strata files) and writes
leaderboard/: table3, hops_<corpus> and reproduction as .md/.tex/.csv, leaderboard.csv (every
number in long format), plots/*.png|svg and index.html. A damaged cell is reported by path
and skipped; the rest still renders.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.errors import HarnessError, did_you_mean

FORMATS = ("all", "markdown", "latex", "csv", "html")
TABLES = ("all", "table3", "hops", "reproduction")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other bad input
        print(f"error: {message}; see python -m harness.leaderboard --help", file=sys.stderr)
        sys.exit(2)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m harness.leaderboard",
        description="Paper tables (RARE Table 3 layout, hop tables, reproduction report against "
        "the published numbers), plots and a self-contained HTML leaderboard, from results/.",
        epilog="Examples:\n"
        "  python -m harness.leaderboard\n"
        "  python -m harness.leaderboard --format latex --table hops --corpus finance\n"
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
    p.add_argument("--k", type=int, default=10, help="the cutoff shown (default: 10)")
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
        "--check",
        action="store_true",
        help="exit 1 when a reproduction FAILs or results/ has a problem",
    )
    return p


def _corpora(board, wanted: Sequence[str] | None) -> list[str]:
    if not wanted:
        return board.corpora
    for c in wanted:
        if c not in board.cells:
            hint = did_you_mean(c, board.corpora)
            raise HarnessError(
                f"no cells for corpus '{c}' under {board.results_dir}{hint}; "
                f"corpora with results: {', '.join(board.corpora)}"
            )
    return list(dict.fromkeys(wanted))


def build(args: argparse.Namespace):
    """Read results/ and build the requested tables; returns (board, corpora, tables, fails)."""
    from harness.board import collect
    from harness.board_tables import Options, Significance, hops, reproduction, table3

    if args.k < 1:
        raise HarnessError(f"--k must be a positive integer, got {args.k}")
    if not 0 < args.alpha < 1:
        raise HarnessError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if args.tolerance < 0:
        raise HarnessError(f"--tolerance must be >= 0 points, got {args.tolerance}")
    if args.permutations < 1:
        raise HarnessError(f"--permutations must be >= 1, got {args.permutations}")
    board = collect(Path(args.results))
    corpora = _corpora(board, args.corpus)
    opts = Options(
        k=args.k, alpha=args.alpha, tolerance=args.tolerance, permutations=args.permutations
    )
    sig = None if args.no_significance else Significance(board, opts)
    tables, fails = [], 0
    if args.table in ("all", "table3"):
        tables.append(table3(board, corpora, opts, sig))
    if args.table in ("all", "hops"):
        tables += [hops(board, c, opts, sig) for c in corpora]
    if args.table in ("all", "reproduction"):
        rep, fails = reproduction(board, corpora, opts)
        tables.append(rep)
    return board, corpora, tables, fails


def long_csv(board, corpora: list[str]) -> str:
    """Every number of every cell and stratum, one per line, with the published value when
    there is one: the tidy form for pandas and spreadsheets."""
    published = {
        (r.corpus, r.retriever, r.metric): r
        for r in board.references
        if r.source == "rare-paper-table3" or r.metric in ("ndcg@10", "mrr@10")
    }
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "corpus",
            "retriever",
            "stratification",
            "label",
            "n",
            "metric",
            "value",
            "ci_low",
            "ci_high",
            "published",
            "published_source",
            "checksum",
            "stale",
        ]
    )
    for c in corpora:
        for name, e in sorted(board.cells[c].items()):
            res = e.doc.get("results") or {}
            strata = [("overall", "", res.get("overall"))]
            for strat, by in res.items():
                if strat != "overall" and isinstance(by, dict):
                    strata += [(strat, lab, s) for lab, s in by.items()]
            for strat, lab, s in strata:
                if not isinstance(s, dict):
                    continue
                for m, v in (s.get("mean") or {}).items():
                    ci = (s.get("ci") or {}).get(m) or [None, None]
                    ref = published.get((c, name, m)) if strat == "overall" else None
                    w.writerow(
                        [
                            c,
                            name,
                            strat,
                            lab,
                            s.get("n"),
                            m,
                            _f(v),
                            _f(ci[0]),
                            _f(ci[1]),
                            "" if ref is None else f"{ref.value / 100:.4f}",
                            "" if ref is None else ref.source,
                            e.checksum,
                            int(e.stale),
                        ]
                    )
    return buf.getvalue()


def _f(x) -> str:
    return "" if x is None else repr(float(x))


def write(args, board, corpora, tables) -> list[Path]:
    """Write the requested formats under --out (atomically, file by file)."""
    from harness import board_render as R
    from harness.results import write_text_atomic

    out = Path(args.out)
    files: list[Path] = []

    def put(name: str, text: str) -> None:
        path = out / name
        write_text_atomic(path, text)
        files.append(path)

    fmt = args.format
    for t in tables:
        if fmt in ("all", "markdown"):
            put(f"{t.key}.md", R.markdown(t))
        if fmt in ("all", "latex"):
            put(f"{t.key}.tex", R.latex(t))
        if fmt in ("all", "csv"):
            put(f"{t.key}.csv", R.csv_text(t))
    if fmt in ("all", "csv"):
        put("leaderboard.csv", long_csv(board, corpora))
    plots: list[Path] = []
    if fmt in ("all", "html"):
        from harness.board_plots import all_plots

        plots = all_plots(board, corpora, out / "plots", args.k)
        files += plots
        from harness.board_html import page

        put("index.html", page(board, corpora, tables, plots))
    return files


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from harness import board_render as R

    try:
        board, corpora, tables, fails = build(args)
        files = write(args, board, corpora, tables)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"error: cannot write under {args.out}: {exc.strerror or exc}; pick a writable --out",
            file=sys.stderr,
        )
        return 2
    render = (
        R.latex if args.format == "latex" else R.csv_text if args.format == "csv" else R.markdown
    )
    if args.format != "html":
        for t in tables:
            print(render(t))
    for p in board.problems:
        print(f"warning: {p}", file=sys.stderr)
    n_cells = sum(len(board.cells[c]) for c in corpora)
    print(
        f"{n_cells} cells on {len(corpora)} corpora ({', '.join(corpora)}); "
        f"{len(files)} files written under {args.out}/"
        + (f"; open {Path(args.out) / 'index.html'}" if args.format in ("all", "html") else "")
    )
    if fails:
        print(f"reproduction: {fails} FAIL at ±{args.tolerance:g} points", file=sys.stderr)
    if args.check and (fails or board.problems):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
