"""`python -m harness.compare BASELINE CANDIDATE...`: paired comparison and regression gate."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from harness.cli.common import ArgumentParser, command
from harness.core.errors import HarnessError, check_int
from harness.core.files import write_text_atomic
from harness.report.compare import (
    Options,
    check_comparable,
    check_options,
    check_sections,
    compare_cells,
    labels,
    regressions,
    render,
    select_metrics,
)


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="python -m harness.compare",
        description="Compare result folders of one benchmark (the first is the baseline) and "
        "gate on regressions. Exit 1 on a significant drop, 0 otherwise, 2 on bad input.",
        epilog="Example: python -m harness.compare --baseline results/finance/prod "
        "--candidate results/finance/new --metric perfrecall@10 --max-drop 1.0 --alpha 0.05",
    )
    p.add_argument("folders", nargs="*", type=Path, help="baseline folder, then candidates")
    p.add_argument("--baseline", type=Path, help="the baseline result folder")
    p.add_argument("--candidate", type=Path, action="append", default=[], help="repeatable")
    p.add_argument(
        "--metric",
        action="append",
        default=[],
        help="metric to compare and gate (repeatable or comma-separated); default: all shared",
    )
    p.add_argument(
        "--max-drop",
        type=float,
        default=1.0,
        help="points a mean may drop (1.0); in its own units for a metric not in percent "
        "(answer_rank: ranks)",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    p.add_argument("--min-queries", type=int, default=30, help="smallest stratum gated (30)")
    p.add_argument("--permutations", type=int, default=10_000, help="sign flips (10000)")
    p.add_argument("--bootstrap", type=int, default=10_000, help="bootstrap resamples (10000)")
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw (0)")
    p.add_argument("--out", type=Path, help="also write the Markdown report to this file")
    p.add_argument(
        "--winrate",
        action="store_true",
        help="instead: bootstrap win rates of A over B across semantic clusters (needs strata)",
    )
    p.add_argument("--resamples", type=int, default=1000, help="win-rate resamples (1000)")
    p.add_argument(
        "--plot",
        type=Path,
        help="win-rate bar plot path (.png and .svg); default <corpus folder>/winrate_A_vs_B",
    )
    return p


def _folders(args: argparse.Namespace) -> list[Path]:
    if args.baseline is not None:
        if not args.candidate and not args.folders:
            raise HarnessError("--baseline needs at least one --candidate folder")
        return [args.baseline, *args.candidate, *args.folders]
    if args.candidate:
        raise HarnessError("--candidate needs --baseline (or give the folders in order)")
    if len(args.folders) < 2:
        raise HarnessError(
            "give at least two result folders (baseline first), e.g. python -m harness.compare "
            "results/general-wiki/bm25 results/general-wiki/minilm"
        )
    return list(args.folders)


def _options(args: argparse.Namespace) -> Options:
    names = [n.strip() for item in args.metric for n in item.split(",") if n.strip()]
    given = ("max_drop", "alpha", "min_queries", "permutations", "bootstrap", "seed")
    opts = Options(metrics=names or None, **{k: getattr(args, k) for k in given})
    check_int(args.resamples, "--resamples")  # --winrate's
    return check_options(opts, flags=True)


def main(argv: Sequence[str] | None = None) -> int:
    return command(_main, argv)


def _main(argv: Sequence[str] | None) -> int:
    from harness.cell.result import Evaluation

    args = _parser().parse_args(argv)
    opts = _options(args)
    folders = _folders(args)
    cells = [Evaluation.from_disk(f) for f in folders]
    if args.winrate:
        return _winrate(cells, opts, args)
    metrics, rows = compare_cells(cells, opts)
    report = render(cells, metrics, rows, opts)
    if args.out:
        try:
            _write_report(args.out, report)
        except OSError as exc:
            raise HarnessError(f"cannot write {args.out} ({exc.strerror})") from None
    print(report, end="")
    return 1 if regressions(rows) else 0


_OURS = ("# Retrieval comparison: ", "# Win rate of ")  # how the reports compare writes start


def _write_report(out: str, report: str) -> None:
    """Write --out, replacing only a report compare wrote (its first line says so), or an
    empty file (made by mktemp or touch)."""
    path = Path(out)
    cell = next(  # a folder with a cell's files (a DVC project's metrics.json alone is not)
        (
            d
            for d in Path(os.path.abspath(out)).parents
            if all((d / f).is_file() for f in ("metrics.json", "per_query.csv", "run.trec"))
        ),
        None,
    )
    if cell is not None:  # a file there would stop the cell's next run
        raise HarnessError(
            f"--out {out} is inside the cell folder {os.path.relpath(cell)}, which holds only "
            "the cell's own files; write the report elsewhere"
        )
    empty = path.is_file() and not path.is_symlink() and path.stat().st_size == 0
    if (path.exists() or path.is_symlink()) and not empty:
        try:
            with open(path, encoding="utf-8") as f:
                first = f.readline()
        except (OSError, UnicodeDecodeError):
            first = ""
        if path.is_symlink() or not first.startswith(_OURS):
            raise HarnessError(
                f"--out {out} exists and is not a report compare wrote; give another --out, "
                "or move that file away"
            )
    write_text_atomic(path, report)


def _winrate(cells, opts: Options, args: argparse.Namespace) -> int:
    """`--winrate A B`: print the win-rate table, write it (--out) and the bar plot."""
    from harness.report import winrate

    if len(cells) != 2:
        raise HarnessError(f"--winrate compares exactly two folders (A B), got {len(cells)}")
    check_comparable(cells)
    a, b = cells
    metrics = select_metrics(cells, opts.metrics)
    check_sections(cells, metrics)
    names = tuple(labels(cells))
    result = winrate.compute(a, b, metrics, resamples=args.resamples, seed=opts.seed)
    report = winrate.render(a, b, names, result)
    plot = args.plot or a.path.parent / f"winrate_{a.path.name}_vs_{b.path.name}.png"
    try:
        if args.out:
            _write_report(args.out, report)
        files = winrate.plot(result, names, a.corpus, plot)
    except OSError as exc:
        raise HarnessError(f"cannot write {exc.filename} ({exc.strerror})") from None
    print(report, end="")
    print(f"plot: {', '.join(map(str, files))}")
    return 0
