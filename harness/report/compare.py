"""`python -m harness.compare BASELINE CANDIDATE...`: paired comparison and CI regression gate.

Reads result folders, aligns queries by id, and for every metric, overall and per stratum,
reports baseline, candidate, delta with a bootstrap CI, randomization and t-test p-values,
Holm-adjusted over the gated tests, and a verdict. Exit 1 when a gated metric drops by more
than --max-drop points with Holm p < --alpha; 0 otherwise; 2 on bad input.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from harness.cell.result import Evaluation
from harness.core.errors import ConfigError, HarnessError, check_int, did_you_mean
from harness.core.labels import label_order
from harness.core.tables import markdown
from harness.report.terminal import display, queries, scale
from metrics import stats
from metrics.registry import aggregate_of, in_percent


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
    max_drop: float  # points (percent); a metric not in percent (answer_rank): its own units
    alpha: float
    min_queries: int
    permutations: int
    bootstrap: int
    seed: int


def check_options(opts: Options, flags: bool = False) -> Options:
    """`opts`, checked for `compare` from the command line and the API alike: one ConfigError
    naming the bad setting, as its flag (`--max-drop`) when `flags`. Metrics given as one
    string are read as the command line reads them: comma-separated names."""

    def name(key: str) -> str:
        return f"--{key.replace('_', '-')}" if flags else key

    if not (isinstance(opts.alpha, numbers.Real) and 0 < opts.alpha < 1):
        raise ConfigError(f"{name('alpha')} must be between 0 and 1, got {opts.alpha!r}")
    drop = opts.max_drop
    if not (isinstance(drop, numbers.Real) and 0 <= drop < math.inf):  # NaN, inf pass any gate
        raise ConfigError(f"{name('max_drop')} must be a finite number >= 0 points, got {drop!r}")
    check_int(opts.min_queries, name("min_queries"))
    check_int(opts.seed, name("seed"), 0)
    if isinstance(opts.metrics, str):
        opts = replace(opts, metrics=[n.strip() for n in opts.metrics.split(",") if n.strip()])
    for key, low, note in (
        ("permutations", 1, "10000 gives p-values to about 0.0001"),
        ("bootstrap", 0, "0: no CIs; 10000 gives intervals to about 0.0001"),
    ):
        value = getattr(opts, key)
        integral = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        if not integral or not low <= value <= 10**6:
            raise ConfigError(
                f"{name(key)} must be an integer in [{low}, 1000000] ({note}), got {value!r}"
            )
    if 0 < opts.bootstrap < stats.min_resamples(0.95):
        raise ConfigError(
            f"{name('bootstrap')} is {opts.bootstrap}: a 95% interval needs at least "
            f"{stats.min_resamples(0.95)} resamples (10000 is the default); 0 turns CIs off"
        )
    return opts


def check_comparable(cells: Sequence[Evaluation]) -> None:
    """Refuse cells of different benchmarks, data versions or query sets. (Relevance levels
    need no check: a binary metric at level L > 1 is named with it, 'P(rel=2)@10'.) One
    result given twice (the same folder, or the same object) is refused too."""
    seen = [c.path.resolve() if c.path is not None else id(c) for c in cells]
    if len(set(seen)) < len(seen):
        raise HarnessError("the same result is given twice; compare different runs")
    base = cells[0]
    for c in cells[1:]:
        if c.corpus != base.corpus:
            raise HarnessError(
                f"cannot compare different benchmarks: {_named(base)} is '{base.corpus}', "
                f"{_named(c)} is '{c.corpus}'"
            )
        if c.checksum != base.checksum:
            raise HarnessError(
                f"benchmark checksums differ ({_named(base)}: {base.checksum[:19]}, {_named(c)}: "
                f"{c.checksum[:19]}): the runs saw different data; rerun both on one version"
            )
        if set(c.query_ids) != set(base.query_ids):
            raise HarnessError(
                f"query ids differ between {_named(base)} and {_named(c)}; rerun both on one "
                "version"
            )


def check_sections(cells: Sequence[Evaluation], metrics: Sequence[str]) -> None:
    """A model's values (ΔSePer, end-to-end RAG) compare only when made with the same models
    and settings: refuse cells whose `metrics` (those compared) include such a metric but
    whose section's settings differ."""
    from harness.cell.sections import SECTIONS
    from metrics.registry import FAMILIES

    for s in SECTIONS:
        if not any(_kind(FAMILIES, m) == s.key for m in metrics):
            continue
        base, key = cells[0], s.key
        for c in cells[1:]:
            diff = s.difference(base.config.get(key), c.config.get(key))
            if diff:
                raise HarnessError(
                    f"cannot compare {s.key} metrics of {_named(base)} and {_named(c)}: their "
                    f"{s.key} settings differ ({diff}); score both with the same models "
                    f"(python -m harness ... {s.key}.<key>=<value> rescores a cell's stored "
                    f"run), or leave the {s.key} metrics out"
                )


def _named(cell: Evaluation) -> str:
    return str(cell.path) if cell.path is not None else f"'{cell.retriever}'"


def _kind(families, name: str) -> str | None:
    family = families.get(name.split("@")[0].lower())
    return family and family.kind


def select_metrics(cells: Sequence[Evaluation], wanted: Sequence[str] | None) -> list[str]:
    """The metrics to compare: those asked for (each must be in every cell), else all shared
    but the counts (NumQ, NumRet, ...: bookkeeping, whose totals would gate on a single
    document; compared when named)."""
    shared = [m for m in cells[0].values if all(m in c.values for c in cells[1:])]
    if not wanted:
        if not shared:
            raise HarnessError("the results share no metric; score them with one metric set")
        return [m for m in shared if aggregate_of(m) != "sum"] or shared
    from metrics.registry import AmbiguousMetric, expand, parse_metric

    out = []
    for name in wanted:
        known = True  # a metric the registry reads: not a typo, just not scored
        try:  # as metrics.names reads it: ndcg_cut_10 is nDCG@10, ndcg_cut every nDCG@K
            keys = expand(name, shared)
            key = keys[0] if len(keys) == 1 else parse_metric(name).name
        except AmbiguousMetric:
            raise
        except ConfigError:
            keys, key, known = [], name, False
        if not keys:
            missing = [_named(c) for c in cells if key not in c.values]
            said = f"'{name}'" if key == name else f"'{name}' ({key})"
            hint = (
                "; score it into the cells first (rerun them adding it to metrics.names: the "
                "stored ranked lists are rescored, nothing is retrieved again)"
                if known
                else did_you_mean(key, shared)
            )
            raise HarnessError(
                f"metric {said} is not in {', '.join(missing) or 'every folder'}{hint}; shared "
                f"metrics: {', '.join(shared)}"
            )
        out += keys
    return list(dict.fromkeys(out))


def strata_of(cell: Evaluation) -> list[tuple[str, np.ndarray]]:
    """('overall', all-true mask), then ('hop=2', mask), ... in display order."""
    n = len(cell.query_ids)
    out = [("overall", np.ones(n, dtype=bool))]
    for strat, labels in cell.strata.items():
        if strat == "cluster":  # dozens of small strata; --winrate compares across clusters
            continue
        arr = np.asarray(labels, dtype=object)
        out += [(f"{strat}={lab}", arr == lab) for lab in label_order(list(labels))]
    return out


def compare_cells(cells: Sequence[Evaluation], opts: Options) -> tuple[list[str], list[Row]]:
    """Every (candidate, metric, stratum) test with Holm-adjusted p-values and verdicts."""
    check_comparable(cells)
    metrics = select_metrics(cells, opts.metrics)
    check_sections(cells, metrics)
    base = cells[0]
    strata = strata_of(base)
    tests: list[tuple[int, str, str]] = []
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    for ci, cand in enumerate(cells[1:], start=1):
        order = {q: i for i, q in enumerate(cand.query_ids)}
        align = np.array([order[q] for q in base.query_ids], dtype=np.int64)
        for m in metrics:
            a, b = base.values[m], cand.values[m][align]
            for name, mask in strata:
                tests.append((ci, m, name))
                pairs.append((a[mask], b[mask]))
    # all at once: tests over the same queries share their random draws (the costly part)
    results = stats.compare_many(
        pairs,
        permutations=opts.permutations,
        samples=opts.bootstrap,
        seed=opts.seed,
        kinds=[aggregate_of(m) for _, m, _ in tests],
    )
    rows: list[Row] = []
    for (ci, m, name), r in zip(tests, results):
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
    from metrics.registry import higher_is_better

    # outdated@K and answer_rank improve downwards: the verdict reads the gain, not the sign;
    # in the units the value is shown in (points, or ranks for answer_rank)
    gain = scale(r.metric) * r.result.delta * (1 if higher_is_better(r.metric) else -1)
    if not r.gated:
        return f"not gated (n < {opts.min_queries})"
    if p_holm < opts.alpha:
        if gain < -opts.max_drop:
            return "**REGRESSION**"
        return "better" if gain > 0 else f"worse, within {opts.max_drop:.2f}{_unit(r.metric)}"
    return "no significant change"


def labels(cells: Sequence[Evaluation]) -> list[str]:
    """Retriever names, or the folders when two cells share a name (main vs branch)."""
    names = [c.retriever for c in cells]
    if len(set(names)) == len(names):
        return names
    return [
        str(c.path) if c.path is not None else f"{c.retriever} ({i})" for i, c in enumerate(cells)
    ]


def _folder(cell: Evaluation) -> str:
    return f"`{cell.path}`" if cell.path is not None else "(not saved)"


def regressions(rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if r.verdict == "**REGRESSION**"]


def _unit(metric: str) -> str:
    """The unit a Δ of `metric` is printed with: points for a share, none (the metric's own
    units, ranks for answer_rank) otherwise."""
    return " points" if in_percent(metric) else ""


def _plain_note(metrics: Sequence[str], text: str) -> str:
    """' (<the metrics that are not shares>: <text>)', or '' when every metric is a share."""
    plain = [m for m in metrics if not in_percent(m)]
    return f" ({', '.join(plain)}: {text})" if plain else ""


def _p(x: float) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:.4f}" if x >= 1e-4 else "<0.0001"


# the per-stratum table's columns: stratum, n, the two means, Δ, CI, three p, verdict
PAIRED_ALIGN = ["left", *["right"] * 4, "left", *["right"] * 3, "left"]


def render(cells: Sequence[Evaluation], metrics: list[str], rows: list[Row], opts: Options) -> str:
    """The Markdown report: header, one table per candidate and metric, the gate's result."""
    base = cells[0]
    label = labels(cells)
    n_gated = sum(r.gated for r in rows)
    gate_note = _plain_note(metrics, f"{opts.max_drop:.2f} in its own units")
    lines = [f"# Retrieval comparison: {base.corpus}", ""]
    lines += markdown(
        ["role", "retriever", "folder", "depth"],
        [
            ["baseline" if i == 0 else "candidate", c.retriever, _folder(c), str(c.depth)]
            for i, c in enumerate(cells)
        ],
        left=3,
    )
    ci = "without a CI (bootstrap 0)"
    if opts.bootstrap:
        ci = f"with its {opts.bootstrap:,}-resample paired bootstrap 95% CI"
    lines += [
        "",
        f"Benchmark `{base.corpus}`, checksum `{base.checksum}`, {len(base.query_ids)} queries, "
        f"aligned by query id. Values are percentages and Δ = candidate − baseline is in points"
        f"{_plain_note(metrics, 'not a share; values and Δ as they are')}, {ci}. p: paired "
        f"randomization test ({opts.permutations:,} sign flips, seed {opts.seed}) and paired "
        f"t-test; Holm adjusts the randomization p over the {n_gated} gated tests. Gate: a drop "
        f"of more than {opts.max_drop:.2f} points{gate_note} with Holm p < {opts.alpha:g}, "
        f"overall and in strata with at least {queries(opts.min_queries)}.",
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
    if len(cells) > 2:
        lines += overview(cells, metrics, rows)
    for ci in range(1, len(cells)):
        lines += ["", f"## {label[ci]} vs {label[0]}"]
        for m in metrics:
            body = []
            for r in rows:
                if r.candidate != ci or r.metric != m:
                    continue
                x = r.result
                body.append(
                    [r.stratum, str(x.n), display(m, x.mean_a), display(m, x.mean_b)]
                    + [display(m, x.delta, True), _interval(m, x.ci), _p(x.p_randomization)]
                    + [_p(x.p_ttest), _p(r.p_holm), r.verdict]
                )
            header = ["stratum", "n", label[0], label[ci], "Δ", "95% CI", "p (rand.)", "p (t)"]
            lines += ["", f"### {m}", ""]
            lines += markdown([*header, "p (Holm)", "verdict"], body, align=PAIRED_ALIGN)
    bad = regressions(rows)
    lines.append("")
    if bad:
        found = "; ".join(
            f"{label[r.candidate]} {r.metric} {r.stratum} "
            f"{display(r.metric, r.result.delta, True)}{_unit(r.metric)} (Holm p {_p(r.p_holm)})"
            for r in bad
        )
        lines.append(f"**Result: FAIL.** {len(bad)} regression(s): {found}.")
    else:
        lines.append(
            f"**Result: PASS.** No gated metric dropped by more than {opts.max_drop:.2f} points"
            f"{gate_note} with Holm p < {opts.alpha:g}."
        )
    return "\n".join(lines) + "\n"


def overview(cells: Sequence[Evaluation], metrics: list[str], rows: Sequence[Row]) -> list[str]:
    """Markdown lines: one row per candidate and metric, overall (Δ, CI, Holm p, verdict),
    with the strata where that pair regressed; the per-stratum tables follow it."""
    label = labels(cells)
    body = []
    for ci in range(1, len(cells)):
        for m in metrics:
            mine = [r for r in rows if r.candidate == ci and r.metric == m]
            top = next((r for r in mine if r.stratum == "overall"), None)
            if top is None:
                continue
            x = top.result
            bad = [r.stratum for r in mine if r.stratum != "overall" and r in regressions(mine)]
            body.append(
                [label[ci], m, display(m, x.delta, True), _interval(m, x.ci)]
                + [_p(x.p_randomization), _p(top.p_holm), top.verdict, ", ".join(bad) or "none"]
            )
    header = ["candidate", "metric", "Δ", "95% CI", "p (rand.)", "p (Holm)", "verdict"]
    title = f"## Overview: {len(cells) - 1} candidates against {label[0]} (overall)"
    align = ["left", "left", "right", "left", "right", "right", "left", "left"]
    return ["", title, "", *markdown([*header, "regressions in strata"], body, align=align)]


def _interval(metric: str, ci) -> str:
    return f"[{display(metric, ci[0], True)}, {display(metric, ci[1], True)}]"


def frame(cells: Sequence[Evaluation], rows: Sequence[Row]):
    """The paired tests as a DataFrame, one row each (values as fractions, not points)."""
    import pandas as pd

    names = labels(cells)
    return pd.DataFrame.from_records(
        [
            {
                "baseline": names[0],
                "candidate": names[r.candidate],
                "metric": r.metric,
                "stratum": r.stratum,
                "n": r.result.n,
                "mean_baseline": r.result.mean_a,
                "mean_candidate": r.result.mean_b,
                "delta": r.result.delta,
                "ci_low": r.result.ci[0],
                "ci_high": r.result.ci[1],
                "p_randomization": r.result.p_randomization,
                "p_ttest": r.result.p_ttest,
                "p_holm": r.p_holm,
                "gated": r.gated,
                "verdict": r.verdict.strip("*").lower(),
            }
            for r in rows
        ]
    )
