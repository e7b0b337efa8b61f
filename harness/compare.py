"""`python -m harness.compare BASELINE CANDIDATE...`: paired comparison and CI regression gate.

Reads result folders, aligns queries by id, and for every metric, overall and per stratum,
reports baseline, candidate, delta with a bootstrap CI, randomization and t-test p-values,
Holm-adjusted over the gated tests, and a verdict. Exit 1 when a gated metric drops by more
than --max-drop points with Holm p < --alpha; 0 otherwise; 2 on bad input.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from harness.cells import Cell, load_cell
from harness.errors import HarnessError, did_you_mean
from harness.results import write_text_atomic
from harness.strata import label_order
from metrics import stats


@dataclass(frozen=True)
class Row:
    """One paired test: a candidate against the baseline on one metric in one stratum."""

    candidate: int  # index into the cells; 0 is the baseline
    metric: str
    stratum: str
    result: stats.Paired
    gated: bool  # counts towards Holm and the exit code
    p_holm: float = math.nan
    verdict: str = ""


@dataclass(frozen=True)
class Options:
    metrics: list[str] | None
    max_drop: float  # points (percent)
    alpha: float
    min_queries: int
    permutations: int
    bootstrap: int
    seed: int


def check_comparable(cells: Sequence[Cell]) -> None:
    """Refuse cells of different benchmarks, data versions, query sets or relevance levels."""
    base = cells[0]
    for c in cells[1:]:
        if c.corpus != base.corpus:
            raise HarnessError(
                f"cannot compare different benchmarks: {base.path} is '{base.corpus}', "
                f"{c.path} is '{c.corpus}'"
            )
        if c.checksum != base.checksum:
            raise HarnessError(
                f"benchmark checksums differ ({base.path}: {base.checksum[:19]}, {c.path}: "
                f"{c.checksum[:19]}): the runs saw different data; rerun both on one version"
            )
        if set(c.query_ids) != set(base.query_ids):
            raise HarnessError(
                f"query ids differ between {base.path} and {c.path}; rerun both on one version"
            )
        if c.relevance_level != base.relevance_level:
            raise HarnessError(
                f"metrics.relevance_level differs ({base.path}: {base.relevance_level}, "
                f"{c.path}: {c.relevance_level}); rerun with the same level"
            )


def select_metrics(cells: Sequence[Cell], wanted: Sequence[str] | None) -> list[str]:
    """The metrics to compare: those asked for (each must be in every cell), else all shared."""
    shared = [m for m in cells[0].values if all(m in c.values for c in cells[1:])]
    if not wanted:
        if not shared:
            raise HarnessError("the result folders share no metric; rerun them with one metric set")
        return shared
    out = []
    lookup = {m.lower(): m for m in shared}
    for name in wanted:
        if name.lower() not in lookup:
            missing = [str(c.path) for c in cells if name.lower() not in map(str.lower, c.values)]
            raise HarnessError(
                f"metric '{name}' is not in {', '.join(missing) or 'every folder'}"
                f"{did_you_mean(name.lower(), lookup)}; shared metrics: {', '.join(shared)}"
            )
        out.append(lookup[name.lower()])
    return list(dict.fromkeys(out))


def strata_of(cell: Cell) -> list[tuple[str, np.ndarray]]:
    """('overall', all-true mask), then ('hop=2', mask), ... in display order."""
    n = len(cell.query_ids)
    out = [("overall", np.ones(n, dtype=bool))]
    for strat, labels in cell.strata.items():
        if strat == "cluster":  # dozens of small strata; --winrate compares across clusters
            continue
        arr = np.asarray(labels, dtype=object)
        out += [(f"{strat}={lab}", arr == lab) for lab in label_order(list(labels))]
    return out


def compare_cells(cells: Sequence[Cell], opts: Options) -> tuple[list[str], list[Row]]:
    """Every (candidate, metric, stratum) test with Holm-adjusted p-values and verdicts."""
    check_comparable(cells)
    metrics = select_metrics(cells, opts.metrics)
    base = cells[0]
    strata = strata_of(base)
    rows: list[Row] = []
    for ci, cand in enumerate(cells[1:], start=1):
        order = {q: i for i, q in enumerate(cand.query_ids)}
        align = np.array([order[q] for q in base.query_ids], dtype=np.int64)
        for m in metrics:
            a, b = base.values[m], cand.values[m][align]
            for name, mask in strata:
                r = stats.compare(
                    a[mask],
                    b[mask],
                    permutations=opts.permutations,
                    samples=opts.bootstrap,
                    seed=opts.seed,
                )
                gated = r.n > 0 and (name == "overall" or r.n >= opts.min_queries)
                rows.append(Row(ci, m, name, r, gated))
    adjusted = iter(stats.holm([r.result.p_randomization for r in rows if r.gated]))
    final = []
    for r in rows:
        p_holm = next(adjusted) if r.gated else math.nan
        final.append(replace(r, p_holm=p_holm, verdict=_verdict(r, p_holm, opts)))
    return metrics, final


def _verdict(r: Row, p_holm: float, opts: Options) -> str:
    if r.result.n == 0:
        return "no data"
    delta = 100 * r.result.delta
    if not r.gated:
        return f"not gated (n < {opts.min_queries})"
    if p_holm < opts.alpha:
        if delta < -opts.max_drop:
            return "**REGRESSION**"
        return "better" if delta > 0 else f"worse, within {opts.max_drop:.2f} points"
    return "no significant change"


def labels(cells: Sequence[Cell]) -> list[str]:
    """Retriever names, or the folders when two cells share a name (main vs branch)."""
    names = [c.retriever for c in cells]
    return names if len(set(names)) == len(names) else [str(c.path) for c in cells]


def regressions(rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if r.verdict == "**REGRESSION**"]


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.2f}"


def _signed(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:+.2f}"


def _p(x: float) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:.4f}" if x >= 1e-4 else "<0.0001"


def render(cells: Sequence[Cell], metrics: list[str], rows: list[Row], opts: Options) -> str:
    """The Markdown report: header, one table per candidate and metric, the gate's result."""
    base = cells[0]
    label = labels(cells)
    n_gated = sum(r.gated for r in rows)
    lines = [f"# Retrieval comparison: {base.corpus}", ""]
    lines += ["| role | retriever | folder | depth |", "|---|---|---|---:|"]
    for i, c in enumerate(cells):
        role = "baseline" if i == 0 else "candidate"
        lines.append(f"| {role} | {c.retriever} | `{c.path}` | {c.depth} |")
    lines += [
        "",
        f"Benchmark `{base.corpus}`, checksum `{base.checksum}`, {len(base.query_ids)} queries, "
        f"aligned by query id. Values are percentages; Δ = candidate − baseline in points, "
        f"with its {opts.bootstrap:,}-resample paired bootstrap 95% CI. p: paired randomization "
        f"test ({opts.permutations:,} sign flips, seed {opts.seed}) and paired t-test; Holm "
        f"adjusts the randomization p over the {n_gated} gated tests. Gate: a drop of more than "
        f"{opts.max_drop:.2f} points with Holm p < {opts.alpha:g}, overall and in strata with at "
        f"least {opts.min_queries} queries.",
    ]
    if len({c.depth for c in cells}) > 1:
        lines += ["", "Note: the folders were run at different retrieval depths."]
    floor = n_gated / (opts.permutations + 1)
    if floor >= opts.alpha:
        lines += [
            "",
            f"Note: with {n_gated} gated tests and {opts.permutations:,} sign flips the smallest "
            f"possible Holm p is {floor:.3f}, not below alpha {opts.alpha:g}: nothing can be "
            f"significant. Raise --permutations or narrow --metric.",
        ]
    for ci in range(1, len(cells)):
        lines += ["", f"## {label[ci]} vs {label[0]}"]
        for m in metrics:
            lines += [
                "",
                f"### {m}",
                "",
                f"| stratum | n | {label[0]} | {label[ci]} | Δ | 95% CI | p (rand.) "
                "| p (t) | p (Holm) | verdict |",
                "|---|---:|---:|---:|---:|---|---:|---:|---:|---|",
            ]
            for r in rows:
                if r.candidate != ci or r.metric != m:
                    continue
                x = r.result
                interval = f"[{_signed(x.ci[0])}, {_signed(x.ci[1])}]"
                lines.append(
                    f"| {r.stratum} | {x.n} | {_pct(x.mean_a)} | {_pct(x.mean_b)} | "
                    f"{_signed(x.delta)} | {interval} | {_p(x.p_randomization)} | "
                    f"{_p(x.p_ttest)} | {_p(r.p_holm)} | {r.verdict} |"
                )
    bad = regressions(rows)
    lines.append("")
    if bad:
        found = "; ".join(
            f"{label[r.candidate]} {r.metric} {r.stratum} {_signed(r.result.delta)} points "
            f"(Holm p {_p(r.p_holm)})"
            for r in bad
        )
        lines.append(f"**Result: FAIL.** {len(bad)} regression(s): {found}.")
    else:
        lines.append(
            f"**Result: PASS.** No gated metric dropped by more than {opts.max_drop:.2f} points "
            f"with Holm p < {opts.alpha:g}."
        )
    return "\n".join(lines) + "\n"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other bad input
        raise HarnessError(f"{message} (see python -m harness.compare --help)")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
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
    p.add_argument("--max-drop", type=float, default=1.0, help="points a mean may drop (1.0)")
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
    if not 0 < args.alpha < 1:
        raise HarnessError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if args.max_drop < 0:
        raise HarnessError(f"--max-drop must be >= 0 points, got {args.max_drop}")
    if args.min_queries < 1:
        raise HarnessError(f"--min-queries must be a positive integer, got {args.min_queries}")
    for flag in ("permutations", "bootstrap"):
        if getattr(args, flag) < 1:
            raise HarnessError(f"--{flag} must be a positive integer")
    names = [n.strip() for item in args.metric for n in item.split(",") if n.strip()]
    return Options(
        metrics=names or None,
        max_drop=args.max_drop,
        alpha=args.alpha,
        min_queries=args.min_queries,
        permutations=args.permutations,
        bootstrap=args.bootstrap,
        seed=args.seed,
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        opts = _options(args)
        folders = _folders(args)
        cells = [load_cell(f) for f in folders]
        if len({c.path.resolve() for c in cells}) < len(cells):
            raise HarnessError("the same result folder is given twice; compare different runs")
        if args.winrate:
            return _winrate(cells, opts, args)
        metrics, rows = compare_cells(cells, opts)
        report = render(cells, metrics, rows, opts)
        if args.out:
            try:
                write_text_atomic(args.out, report)
            except OSError as exc:
                raise HarnessError(f"cannot write {args.out} ({exc.strerror})") from None
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report, end="")
    return 1 if regressions(rows) else 0


def _winrate(cells: Sequence[Cell], opts: Options, args: argparse.Namespace) -> int:
    """`--winrate A B`: print the win-rate table, write it (--out) and the bar plot."""
    from harness import winrate

    if len(cells) != 2:
        raise HarnessError(f"--winrate compares exactly two folders (A B), got {len(cells)}")
    if args.resamples < 1:
        raise HarnessError("--resamples must be a positive integer")
    check_comparable(cells)
    a, b = cells
    metrics = select_metrics(cells, opts.metrics)
    names = tuple(labels(cells))
    result = winrate.compute(a, b, metrics, resamples=args.resamples, seed=opts.seed)
    report = winrate.render(a, b, names, result)
    plot = args.plot or a.path.parent / f"winrate_{a.path.name}_vs_{b.path.name}.png"
    try:
        if args.out:
            write_text_atomic(args.out, report)
        files = winrate.plot(result, names, a.corpus, plot)
    except OSError as exc:
        raise HarnessError(f"cannot write {exc.filename} ({exc.strerror})") from None
    print(report, end="")
    print(f"plot: {', '.join(map(str, files))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
