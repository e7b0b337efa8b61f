"""`harness.Experiment([...], benchmark)` -> one DataFrame row per system, with paired
significance against a baseline (PyTerrier's pt.Experiment is the model)."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from harness.core.errors import ConfigError

TESTS = ("randomization", "t")


def Experiment(  # noqa: N802 - named like the class-style entry point researchers know
    systems: Sequence[Any],
    benchmark: Any,
    metrics: str | Sequence[str] | None = None,
    k: int | Sequence[int] | None = None,
    *,
    names: Sequence[str] | None = None,
    baseline: int | str | None = 0,
    correction: str | None = "holm",
    test: str = "randomization",
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int = 0,
    depth: int | None = None,
    relevance_level: int | None = None,
    bootstrap: int = 0,
    relevance: Mapping[str, Any] | None = None,
    unknown_ids: str | None = None,
    no_relevant: str | None = None,
    utility: Mapping[str, Any] | None = None,
    rag: Mapping[str, Any] | None = None,
    generator: Any = None,
    nli: Any = None,
    judge: Any = None,
):
    """Evaluate every system (runs, retrievers, encoders or retriever config names) on one
    benchmark. `baseline`: a system's index or name (None: no significance columns).
    Columns: `name`, each metric's mean (fractions), and with a baseline, per metric,
    `<m> +` / `<m> -` (queries better / worse than the baseline), `<m> p` (paired
    randomization test, or t-test with test="t") and `<m> p_<correction>` with `<m> sig`
    (corrected p < alpha), the correction taken over the systems compared to the baseline;
    the counts are integers and `sig` a boolean, <NA> in the baseline's row. `depth`: as in
    harness.evaluate (a run is scored whole, a retriever retrieves 100), as is
    `relevance_level`.
    "Better" reads each metric's direction (a lower outdated@K or answer_rank is better).
    `relevance`, `unknown_ids`, `no_relevant` and the model sections' settings (`utility`,
    `rag`, `generator`, `nli`: ΔSePer, docs/utility.md; end-to-end RAG, docs/rag.md) are
    passed to harness.evaluate for every system."""
    import pandas as pd

    from harness.api.evaluation import evaluate
    from harness.api.loading import load_benchmark
    from harness.core.frames import is_frame
    from metrics import stats
    from metrics.registry import aggregate_of, higher_is_better

    if correction not in stats.CORRECTIONS:
        raise ConfigError(f"correction must be one of holm, bonferroni, None; got {correction!r}")
    if test not in TESTS:
        raise ConfigError(f"test must be 'randomization' or 't', got {test!r}")
    if (
        isinstance(systems, (str, Mapping))
        or is_frame(systems)
        or not isinstance(systems, Iterable)
    ):
        raise ConfigError(
            f"Experiment takes a list of systems (runs, retrievers, encoders or config names), "
            f"got one {type(systems).__name__}; e.g. Experiment([system], benchmark)"
        )
    systems = list(systems)
    if not systems:
        raise ConfigError("Experiment needs at least one system")
    if names is not None and len(names) != len(systems):
        raise ConfigError(f"{len(names)} names for {len(systems)} systems")
    by_name = isinstance(baseline, str)  # a system's name: found once the names are known
    if baseline is not None and not by_name:
        if (
            isinstance(baseline, bool)
            or not isinstance(baseline, numbers.Integral)
            or not 0 <= baseline < len(systems)
        ):
            raise ConfigError(
                f"baseline={baseline!r} is not the index (0..{len(systems) - 1}) or the name of "
                "a system"
            )
        baseline = int(baseline)
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ConfigError(f"alpha must be between 0 and 1, got {alpha!r}")
    bench = load_benchmark(benchmark)
    evals = [
        evaluate(
            bench,
            s,
            metrics,
            k,
            name=None if names is None else names[i],
            depth=depth,
            relevance_level=relevance_level,
            bootstrap=bootstrap,
            relevance=relevance,
            unknown_ids=unknown_ids,
            no_relevant=no_relevant,
            utility=utility,
            rag=rag,
            generator=generator,
            nli=nli,
            judge=judge,
        )
        for i, s in enumerate(systems)
    ]
    labels = list(names) if names is not None else [e.name for e in evals]
    if len(set(labels)) < len(labels):
        raise ConfigError(f"system names repeat ({', '.join(labels)}); pass names=[...]")
    if by_name:
        if baseline not in labels:
            raise ConfigError(
                f"baseline={baseline!r} is not a system's name; names: {', '.join(labels)}"
            )
        baseline = labels.index(baseline)
    measures = evals[0].metrics
    rows = []
    for label, e in zip(labels, evals):
        means = e.scored.means["overall"]["mean"]  # the numbers evaluate reports, to the bit
        row: dict[str, Any] = {"name": label}
        row |= {m: np.nan if means[m] is None else means[m] for m in measures}
        rows.append(row)
    df = pd.DataFrame(rows)
    if baseline is None or len(evals) < 2:
        return df
    base = evals[baseline]
    others = [i for i in range(len(evals)) if i != baseline]
    # one engine for every paired comparison: tests over the same queries share their draws
    tested = stats.compare_many(
        [(base.values[m], evals[i].values[m]) for m in measures for i in others],
        permutations=0 if test == "t" else permutations,
        samples=0,
        seed=seed,
        kinds=[aggregate_of(m) for m in measures for _ in others],
    )
    results = iter(tested)
    for m in measures:
        plus = pd.array([pd.NA] * len(evals), dtype="Int64")
        minus = plus.copy()
        p = [np.nan] * len(evals)
        for i in others:
            r = next(results)
            up, down = (r.better, r.worse) if higher_is_better(m) else (r.worse, r.better)
            plus[i], minus[i] = up, down
            p[i] = r.p_ttest if test == "t" else (r.p_randomization if r.n else 1.0)
        df[f"{m} +"], df[f"{m} -"], df[f"{m} p"] = plus, minus, p
        sig_p = p
        if correction is not None:
            corrected = [np.nan] * len(evals)
            for i, x in zip(others, stats.adjust([p[i] for i in others], correction)):
                corrected[i] = x
            df[f"{m} p_{correction}"] = corrected
            sig_p = corrected
        df[f"{m} sig"] = pd.array(
            [pd.NA if i == baseline else bool(sig_p[i] < alpha) for i in range(len(evals))],
            dtype="boolean",
        )
    return df
