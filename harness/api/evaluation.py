"""`harness.evaluate(...)` -> Evaluation: the numbers a cell reports, as pandas DataFrames."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import ConfigError, HarnessError
from harness.core.types import Benchmark, Run

log = logging.getLogger("harness.api")

DEFAULT_METRICS = ("coverage", "perfrecall", "ndcg", "mrr")
DEFAULT_K = (5, 10)
DEFAULT_DEPTH = 100  # what a retriever retrieves (retrieval.depth)


class Evaluation:
    """One system scored on one benchmark (what one CLI cell holds)."""

    def __init__(self, benchmark: Benchmark, run: Run, metric_names, scored, config, extra):
        self.benchmark = benchmark
        self.run = run
        self.metrics = list(metric_names)
        self.scored = scored
        self.config = config
        self._extra = extra  # coverage, similarity, notes

    @property
    def name(self) -> str:
        return self.run.name

    @property
    def notes(self) -> list[str]:
        """What the command line would print as notes: queries without results, run ids the
        benchmark does not know, the embedding cache (also logged to the `harness` logger)."""
        return list(self._extra["notes"])

    @property
    def values(self) -> dict[str, np.ndarray]:
        """Metric -> per-query values in benchmark query order (NaN where undefined)."""
        return self.scored.values

    def _strata_rows(self, agg: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """(overall, its summary), then (`<stratification>=<label>`, summary) for each stratum."""
        rows = [("overall", agg["overall"])]
        for strat, by in agg.items():
            if strat != "overall":
                rows += [(f"{strat}={label}", s) for label, s in by.items()]
        return rows

    @property
    def means(self):
        """DataFrame: one row per stratum (overall, hop=1, ...), columns n and each metric's
        mean (fractions, not %); no statistics are computed for it."""
        import pandas as pd

        records = [
            {"stratum": stratum, "n": s["n"]}
            | {m: np.nan if s["mean"][m] is None else s["mean"][m] for m in self.metrics}
            for stratum, s in self._strata_rows(self.scored.means)
        ]
        return pd.DataFrame.from_records(records).set_index("stratum")

    @property
    def summary(self):
        """DataFrame: one row per stratum (overall, hop=1, ...), columns n, each metric's mean
        and, with bootstrap CIs, `<metric> ci_low` / `<metric> ci_high` (fractions, not %).
        The CIs are bootstrapped on first use (`means` has the same rows without them)."""
        import pandas as pd

        rows = self._strata_rows(self.scored.intervals)
        records = []
        for stratum, s in rows:
            rec: dict[str, Any] = {"stratum": stratum, "n": s["n"]}
            for m in self.metrics:
                rec[m] = np.nan if s["mean"][m] is None else s["mean"][m]
            for m in self.metrics:
                if "ci" in s:
                    lo, hi = s["ci"][m] or (np.nan, np.nan)
                    rec[f"{m} ci_low"], rec[f"{m} ci_high"] = lo, hi
            records.append(rec)
        return pd.DataFrame.from_records(records).set_index("stratum")

    @property
    def variance(self):
        """DataFrame indexed by (metric, stratification): σ_overall, σ_within, VRR, its chance
        level, the chance-corrected VRR, the permutation p-value, the number of strata and the
        queries pooled as `small` (docs/stratification.md#variance-explained-vrr)."""
        import pandas as pd

        records = [
            {"metric": m, "stratification": strat, "sigma_overall": block["sigma_overall"], **e}
            for m in self.metrics
            for block in [self.scored.variance[m]]
            for strat, e in block["by"].items()
        ]
        return pd.DataFrame.from_records(records).set_index(["metric", "stratification"])

    @property
    def beyond_hop(self):
        """DataFrame indexed by (metric, signal): what Δ (dispersion) and J (alignment) explain
        once hop is known: VRR of hop, of the hop × tertile cells, the gain, its chance level
        (tertiles shuffled within hop), the chance-corrected gain and the p-value; None
        without semantic strata."""
        import pandas as pd

        records = [
            {"metric": m, "signal": signal, **e}
            for m in self.metrics
            for signal, e in (self.scored.variance[m].get("beyond_hop") or {}).items()
        ]
        if not records:
            return None
        return pd.DataFrame.from_records(records).set_index(["metric", "signal"])

    @property
    def population(self):
        """DataFrame indexed by metric: the plain mean, the population-weighted estimate over
        the semantic clusters (each weighted by its share of the corpus's chunks), its bounds,
        the uncovered mass and the plain mean's estimated bias; None without semantic strata."""
        import pandas as pd

        if self.scored.semantic is None:
            return None
        est = self.scored.semantic["population"]["estimate"]
        records = []
        for m in self.metrics:
            e = dict(est[m])
            lo, hi = e.pop("bounds") or (None, None)
            blo, bhi = e.pop("bias_bounds") or (None, None)
            records.append(
                {"metric": m, **e, "low": lo, "high": hi, "bias_low": blo, "bias_high": bhi}
            )
        return pd.DataFrame.from_records(records).set_index("metric").astype(float)

    @property
    def deflection(self):
        """DataFrame of the retrieval-side deflection section (docs/protocols.md): per
        answerable value (yes / partial / no), the number of queries and the top-1 score's
        distribution, plus AUROC columns for telling answerable from unanswerable queries by
        the top score; None when every query is answerable."""
        import pandas as pd

        block = self.scored.protocols.get("deflection")
        if block is None:
            return None
        records = []
        for value, summary in block["top1"].items():
            rec = {"answerable": value, "queries": block["n"].get(value, 0)}
            rec.update({f"top1_{k}": v for k, v in summary.items()})
            records.append(rec)
        df = pd.DataFrame.from_records(records).set_index("answerable")
        df.attrs["auroc"] = dict(block["auroc"])
        df.attrs["distractors"] = dict(block.get("distractors") or {})
        return df

    @property
    def per_query(self):
        """DataFrame indexed by query id: its strata, number of gold groups, every metric."""
        import pandas as pd

        b = self.benchmark
        data: dict[str, Any] = dict(self.scored.strata)
        data["n_groups"] = [len(q.groups) for q in b.queries]
        data.update(self.scored.values)
        index = pd.Index([q.query_id for q in b.queries], name="query_id")
        return pd.DataFrame(data, index=index)

    @property
    def ties(self):
        """DataFrame indexed by (stratum, metric): the mean, the lowest and highest mean over
        every order of tied scores (`low`, `high`), the expected mean under a random order
        (`expected`, NaN where not tractable) and the number of queries whose value depends
        on ties (`queries`); fractions. See docs/metrics.md#ties."""
        import pandas as pd

        rows = self._strata_rows(self.scored.aggregated)
        records = []
        for stratum, s in rows:
            for m in self.metrics:
                low, high = (s.get("ties") or {}).get(m) or (np.nan, np.nan)
                expected = (s.get("ties_expected") or {}).get(m)
                records.append(
                    {
                        "stratum": stratum,
                        "metric": m,
                        "mean": np.nan if s["mean"][m] is None else s["mean"][m],
                        "low": low,
                        "high": high,
                        "expected": np.nan if expected is None else expected,
                        "queries": (s.get("tie_queries") or {}).get(m, 0),
                    }
                )
        return pd.DataFrame.from_records(records).set_index(["stratum", "metric"])

    @property
    def per_query_ties(self):
        """DataFrame indexed by query id: `<metric> low`, `<metric> high` and `<metric>
        expected` per metric, each query's range over the orders of its tied scores (NaN
        where the metric is undefined, or the expectation not tractable)."""
        import pandas as pd

        tied = self.scored.ties  # computed once, by score()
        data: dict[str, Any] = {}
        for m in self.metrics:
            t = tied.get(m)
            if t is not None:
                data |= {f"{m} low": t.low, f"{m} high": t.high, f"{m} expected": t.expected}
        index = pd.Index([q.query_id for q in self.benchmark.queries], name="query_id")
        return pd.DataFrame(data, index=index)

    def to_latex(self, *, caption: str | None = None, label: str | None = None) -> str:
        """The summary's means as a booktabs LaTeX table with two decimals: shares in percent
        (* 100), metrics that are not shares (answer_rank, a mean rank) as they are."""
        from metrics.registry import in_percent

        df = self.summary[["n", *self.metrics]].copy()
        shares = [m for m in self.metrics if in_percent(m)]
        df[shares] = df[shares] * 100
        cap = caption or f"{self.name} on {self.benchmark.name} ({len(self.run)} queries ranked)"
        return df.to_latex(float_format="%.2f", na_rep="-", caption=cap, label=label, escape=True)

    def to_cell(self):
        """The evaluation as a Cell (what compare and the leaderboard read)."""
        from harness.cell.store import Cell

        b = self.benchmark
        return Cell(
            path=Path(f"<{self.name}>"),
            retriever=self.name,
            corpus=b.name,
            checksum=b.checksum,
            depth=self.config["retrieval"]["depth"],
            relevance_level=self.config["metrics"]["relevance_level"],
            query_ids=tuple(q.query_id for q in b.queries),
            strata={k: tuple(v) for k, v in self.scored.strata.items()},
            values=dict(self.scored.values),
            doc={},
        )

    def save(self, folder: str | Path, *, overwrite: bool = False) -> Path:
        """Write the cell files the CLI writes (metrics.json, per_query.csv, run.trec, qrels.trec,
        config.yaml, timings.json) into `folder`; an existing folder is replaced only with
        `overwrite=True`."""
        from harness.cell.execute import cell_files, corpus_diagnostics
        from harness.cell.store import write_cell

        folder = Path(folder).expanduser()
        if folder.exists() and any(folder.iterdir()) and not overwrite:
            raise HarnessError(
                f"{folder} already holds files; pick another folder or pass overwrite=True"
            )
        files = cell_files(
            self.config,
            self.benchmark,
            self.run,
            self.metrics,
            self.scored,
            coverage=self._extra["coverage"],
            diagnostics=corpus_diagnostics(self.benchmark, self._extra["similarity"]),
            timings={},
        )
        write_cell(folder, files)
        return folder

    def __repr__(self) -> str:
        return f"<Evaluation {self.name} on {self.benchmark.name}: {len(self.metrics)} metrics>"

    def _repr_html_(self) -> str:  # notebooks show the summary table
        return self.summary._repr_html_()


def evaluate(
    benchmark: Benchmark | str | Path,
    run_or_retriever: Any,
    metrics: str | Sequence[str] | None = None,
    k: int | Sequence[int] | None = None,
    strata: Mapping[str, Any] | str | Path | None = None,
    *,
    name: str | None = None,
    depth: int | None = None,
    relevance_level: int = 1,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    min_queries: int = 5,
    permutations: int = 1000,
    unknown_ids: str = "keep",
    fields: Sequence[str] = (),
    relevance: Mapping[str, Any] | None = None,
    utility: Mapping[str, Any] | None = None,
    generator: Any = None,
    nli: Any = None,
) -> Evaluation:
    """Score a run, a retriever, an encoder or a retriever config name on a benchmark.

    `metrics`: metric names (`["ndcg", "recall@100"]`) or a metrics config (`"rare"`,
    `"standard"`, `"all"`); default RARE's four at `k` (default [5, 10]). `strata`: extra
    stratifications, `{name: labels in query order or {query_id: label}}`, or the path of a
    semantic strata file (python -m harness.stratify); hop strata are always there.
    `min_queries`: strata smaller than this are pooled for VRR (and the worst cluster is
    taken among clusters this large); `permutations`: random partitions behind VRR's chance
    level and p-value (0 = none; seed `seed`). `unknown_ids`: ranked chunk ids the corpus
    lacks stay at their rank as non-relevant (`"keep"`, as trec_eval) or are removed, later
    ranks moving up (`"drop"`); either way they are counted in `notes`. `fields`: query fields
    reported like hop (`["dynamism", "popularity"]`; numeric ones in tertiles). `relevance`:
    the `relevance` config section's settings that differ from the defaults (label grades,
    dated relevance; docs/protocols.md), e.g. `{"grades": {"RELATED": 0}}`. `utility`: the
    settings of conf/utility/seper.yaml that differ, for the utility metrics (ΔSePer,
    docs/utility.md), e.g. `{"generator": {"model": "Qwen/Qwen2.5-0.5B-Instruct"}}`;
    `generator` and `nli`: model objects of your own to use instead of the configured ones."""
    from harness.api.loading import load_benchmark
    from harness.cell.execute import (
        corpus_similarity,
        messages,
        run_coverage,
        score,
        utility_notes,
    )
    from harness.cell.plan import bootstrap_spec, strata_fields, strata_spec
    from harness.core.runio import apply_unknown_ids, check_unknown_ids
    from harness.data.relevance import RelevanceSpec, judge
    from metrics.registry import metrics_for

    check_unknown_ids(unknown_ids, "unknown_ids")
    reading = RelevanceSpec.from_config(relevance)
    fields = strata_fields(list(fields) if not isinstance(fields, str) else fields)
    bench = judge(load_benchmark(benchmark), reading)
    names, ks = _metric_names(metrics, k)
    # a run (object, mapping or file) keeps its own depth, as trec_eval reads every line; a
    # retriever retrieves DEFAULT_DEPTH. Names are checked before any retrieval.
    asked = metrics_for(names, ks, depth or 2**62, relevance_level)
    spec = bootstrap_spec({"bootstrap": bootstrap, "confidence": confidence, "seed": seed})
    reporting = strata_spec(
        {"min_queries": min_queries, "permutations": permutations}, {"seed": seed}
    )
    run, retriever = _run_of(run_or_retriever, bench, depth, name)
    if depth is None:  # a K past the end of a short list is fine (the list is not cut)
        depth = max([run.depth, *(m.k for m in asked if m.k is not None)])
    chosen = metrics_for(names, ks, depth, relevance_level)
    ids = [q.query_id for q in bench.queries]
    run, unknown = apply_unknown_ids(run, bench.vocab, ids, unknown_ids, lambda: bench.vocab_table)
    doc, doc_path, custom = _strata(strata, bench)
    section, models = _utility(chosen, utility, generator, nli)
    scored = score(
        bench,
        run,
        chosen,
        bootstrap=spec,
        strata_doc=doc,
        strata_path=doc_path,
        spec=reporting,
        extra_strata=custom,
        fields=fields,
        relevance=reading,
        utility=models,
    )
    coverage = run_coverage(bench, run, retriever, unknown)
    config = {
        "retriever": {"name": run.name, "type": "python", "object": _describe(run_or_retriever)},
        "corpus": {"name": bench.name, "source": bench.source},
        "metrics": {"names": list(names), "k": list(ks), "relevance_level": relevance_level},
        "retrieval": {"depth": depth},
        "run": {"unknown_ids": unknown_ids},
        "stats": {"bootstrap": bootstrap, "confidence": confidence, "seed": seed},
        "strata": {**reporting.as_config(), "fields": list(fields)},
        "relevance": reading.as_config(),
    }
    if section is not None:
        config["utility"] = section
    extra = {
        "coverage": coverage,
        "similarity": corpus_similarity(retriever),  # now: the retriever is not kept
        "notes": messages(retriever, coverage) + utility_notes(scored.utility),
    }
    for note in extra["notes"]:
        log.info(note)
    return Evaluation(bench, run, [m.name for m in chosen], scored, config, extra)


def _utility(chosen, overrides, generator, nli) -> tuple[dict | None, Any]:
    """The utility section (conf/utility/seper.yaml with `overrides`) and what score() takes:
    (spec, generator, nli); (None, None) when no utility metric is asked for. A model object
    of the caller's is recorded by its type in the section."""
    if not any(m.family.kind == "utility" for m in chosen):
        return None, None
    from harness.core.confs import named_config
    from harness.utility.spec import UtilitySpec

    section = named_config("utility", "seper", dict(overrides or {}))
    spec = UtilitySpec.from_config(section)
    for key, obj in (("generator", generator), ("nli", nli)):
        if obj is not None:
            section[key] = {"backend": "python", "object": _describe(obj)}
    return section, (spec, generator, nli)


def _metric_names(metrics, k) -> tuple[list[str], list[int]]:
    from harness.core.confs import named_config
    from harness.core.paths import group_options

    ks = list(DEFAULT_K) if k is None else ([k] if isinstance(k, int) else list(k))
    if metrics is None:
        return list(DEFAULT_METRICS), ks
    if isinstance(metrics, str) and metrics in group_options("metrics"):
        cfg = named_config("metrics", metrics)
        return list(cfg["names"]), ks if k is not None else list(cfg["k"])
    if isinstance(metrics, str):
        return [metrics], ks
    return [str(m) for m in metrics], ks


class _NoRetriever:
    """Stands for a run that came without a retriever (nothing to report about it)."""


def _run_of(obj: Any, bench: Benchmark, depth: int | None, name: str | None):
    """(Run, the retriever that made it or a stand-in) for any accepted input: data (a Run, a
    dict) through Run.of, everything else through retrievers.as_retriever. `depth` None keeps
    a run's own depth (a run file's too) and gives a retriever DEFAULT_DEPTH."""
    from harness.cell.plan import check_name
    from retrievers import as_retriever, as_run
    from retrievers.run_file import RunFile

    if isinstance(obj, (Run, Mapping)):
        return Run.of(obj, name=name, depth=depth), _NoRetriever()
    retriever = as_retriever(obj, name=name, where=f"evaluate(..., {type(obj).__name__})")
    if not isinstance(retriever, RunFile):  # a run file is named by its file, as it is
        check_name("the retriever's name", retriever.name)
        depth = DEFAULT_DEPTH if depth is None else depth
    retriever.index(bench.corpus)
    run = as_run(retriever.search(bench.queries, depth=depth), retriever.name, depth)
    return (run if not name or run.name == name else Run.of(run, name=name)), retriever


def _strata(strata, bench: Benchmark):
    """(semantic strata document or None, its path, {name: labels}) from the `strata` argument."""
    if strata is None:
        return None, None, {}
    if isinstance(strata, (str, Path)):
        from harness.strata.file import load

        path = Path(strata).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"strata file not found: {path}; build it with python -m harness.stratify"
            )
        return load(path), path, {}
    if not isinstance(strata, Mapping):
        raise ConfigError("strata must be a strata file path or {name: labels}")
    ids = [q.query_id for q in bench.queries]
    out: dict[str, list[str]] = {}
    for key, labels in strata.items():
        if isinstance(labels, Mapping):
            missing = [q for q in ids if q not in labels]
            if missing:
                raise ConfigError(
                    f"strata['{key}'] has no label for query '{missing[0]}' ({len(missing)} "
                    "missing); give a label for every query"
                )
            out[str(key)] = [str(labels[q]) for q in ids]
        else:
            labels = [str(x) for x in labels]
            if len(labels) != len(ids):
                raise ConfigError(
                    f"strata['{key}'] has {len(labels)} labels for {len(ids)} queries; give one "
                    "per query in benchmark order, or a {query_id: label} mapping"
                )
            out[str(key)] = labels
        if key in ("hop", "overall"):
            raise ConfigError(f"strata name '{key}' is taken; pick another name")
    return None, None, out


def _describe(obj: Any) -> str:
    if isinstance(obj, (str, Path)):
        return str(obj)
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"
