"""One evaluation cell: load a benchmark, retrieve, score, aggregate by stratum, write results."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from harness.cell import store as results
from harness.cell.plan import CellPlan, check_name
from harness.core import provenance
from harness.core.errors import HarnessError
from harness.core.files import check_writable, to_json
from harness.core.types import Benchmark, Run
from harness.data.benchmarks import load_benchmark
from harness.strata import apply as semantic_report
from harness.strata import file as strata_file
from harness.strata.hop import stratify
from metrics.evaluate import BootstrapSpec, aggregate, per_query
from metrics.registry import Metric
from retrievers import as_run, build_retriever


@dataclass(frozen=True)
class CellResult:
    """What a cell produced: the aggregated numbers, the metric names and where files went."""

    corpus: str
    retriever: str
    n_queries: int
    metric_names: list[str]
    aggregated: dict[str, Any]
    cell_dir: Path | None
    timings: dict[str, float]
    notes: list[str] = field(default_factory=list)
    variance: dict[str, Any] = field(default_factory=dict)
    semantic: dict[str, Any] | None = None
    strata_hint: str | None = None  # how to get semantic strata, when there are none
    skipped: bool = False  # the cell on disk was up to date (same config and data checksum)


@dataclass(frozen=True)
class Scored:
    """A run scored against a benchmark: per-query values, strata labels, the aggregates by
    stratum, the variance each stratification explains and the semantic block (or None)."""

    values: dict[str, np.ndarray]
    strata: dict[str, list[str]]
    aggregated: dict[str, Any]
    variance: dict[str, Any]
    semantic: dict[str, Any] | None


def score(
    bench: Benchmark,
    run: Run,
    metrics: Sequence[Metric],
    *,
    level: int = 1,
    bootstrap: BootstrapSpec | None = None,
    strata_doc: Mapping[str, Any] | None = None,
    strata_path: Path | None = None,
    min_queries: int = 5,
    extra_strata: Mapping[str, list[str]] | None = None,
) -> Scored:
    """Score `run` on `bench`: the numbers a cell reports (the CLI and the Python API alike).
    `extra_strata` adds stratifications of the caller's (one label per query, in order)."""
    values = per_query(bench, run, metrics, level=level)
    strata = stratify(bench)
    if strata_doc is not None:
        strata.update(semantic_report.labels(bench, strata_doc))
    strata.update(extra_strata or {})
    aggregated = aggregate(values, strata, bootstrap)
    variance = semantic_report.variance(values, strata)
    semantic = None
    if strata_doc is not None:
        semantic = semantic_report.section(values, strata, strata_doc, strata_path, min_queries)
    return Scored(values, strata, aggregated, variance, semantic)


def cell_files(
    config: Mapping[str, Any],
    bench: Benchmark,
    run: Run,
    metric_names: Sequence[str],
    scored: Scored,
    *,
    coverage: Mapping[str, Any],
    diagnostics: Mapping[str, Any],
    timings: Mapping[str, float],
) -> dict[str, str]:
    """The text of every file of a cell folder."""
    return {
        "metrics.json": to_json(
            _metrics_doc(config, bench, run.name, list(metric_names), scored.aggregated)
            | {"variance": scored.variance, "semantic": scored.semantic, "run": coverage}
            | {"diagnostics": diagnostics}
        ),
        "per_query.csv": results.per_query_csv(bench, scored.strata, scored.values),
        "run.trec": results.run_trec(bench, run),
        "qrels.trec": results.qrels_trec(bench),
        "config.yaml": _yaml(config),
        "timings.json": to_json(
            {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), **timings}
        ),
    }


def run_cell(cfg: Mapping[str, Any]) -> CellResult:
    """Run one (retriever, corpus) cell from a resolved config dict."""
    started = time.perf_counter()
    timings: dict[str, float] = {}
    plan = CellPlan.from_config(cfg)
    cfg = plan.config
    retriever = build_retriever(plan.retriever, plan.runtime.as_kwargs())
    check_name("retriever.name", retriever.name)
    if plan.write:
        check_writable(plan.results_dir)

    t = time.perf_counter()
    bench = load_benchmark(plan.corpus)
    check_name("corpus.name", bench.name)
    timings["load_s"] = time.perf_counter() - t
    notes: list[str] = []
    doc, strata_path, hint = None, None, None
    if plan.semantic:
        t = time.perf_counter()
        doc, strata_path, note = strata_file.for_run(cfg, bench)
        if doc is None:
            hint = note
        elif note:
            notes.append(note)
        timings["strata_s"] = time.perf_counter() - t

    cell_dir = plan.results_dir / bench.name / retriever.name
    if plan.write and not plan.force:
        done = _up_to_date(cell_dir, cfg, bench, doc, strata_path)
        if done is not None:
            return done

    t = time.perf_counter()
    retriever.index(bench.corpus)
    timings["index_s"] = time.perf_counter() - t
    t = time.perf_counter()
    run = as_run(retriever.search(bench.queries, depth=plan.depth), retriever.name, plan.depth)
    timings["search_s"] = time.perf_counter() - t

    t = time.perf_counter()
    min_queries = cfg["strata"]["min_queries"] if doc is not None else 5
    scored = score(
        bench,
        run,
        plan.metrics,
        level=plan.relevance_level,
        bootstrap=plan.bootstrap,
        strata_doc=doc,
        strata_path=strata_path,
        min_queries=min_queries,
    )
    timings["evaluate_s"] = time.perf_counter() - t
    coverage = run_coverage(bench, run, retriever)

    if plan.write:
        timings["total_s"] = time.perf_counter() - started
        files = cell_files(
            cfg,
            bench,
            run,
            plan.metric_names,
            scored,
            coverage=coverage,
            diagnostics=corpus_diagnostics(bench, retriever),
            timings=timings,
        )
        results.write_cell(cell_dir, files)
    timings["total_s"] = time.perf_counter() - started
    return CellResult(
        corpus=bench.name,
        retriever=retriever.name,
        n_queries=len(bench.queries),
        metric_names=plan.metric_names,
        aggregated=scored.aggregated,
        cell_dir=cell_dir if plan.write else None,
        timings=timings,
        notes=notes + messages(retriever, coverage),
        variance=scored.variance,
        semantic=scored.semantic,
        strata_hint=hint,
    )


_CELL_FILES = ("metrics.json", "per_query.csv", "run.trec", "qrels.trec", "config.yaml")


def _up_to_date(cell_dir: Path, cfg, bench, doc, strata_path) -> CellResult | None:
    """The cell already on disk, when it was computed with this exact config, on data with
    this checksum and with the same semantic strata (or none); else None (compute it)."""
    import json

    if not all((cell_dir / f).is_file() for f in _CELL_FILES):
        return None
    try:
        old = results.read_metrics(cell_dir)
        same = (
            "diagnostics" in old  # older cells lack it: recompute them
            and old["config"] == json.loads(to_json(cfg))
            and old["benchmark"]["checksum"] == bench.checksum
        )
        semantic = old.get("semantic")
        if doc is None:
            same = same and semantic is None
        else:
            same = same and semantic is not None
            same = same and semantic["strata_file"] == str(strata_path)
            same = same and semantic["params"] == json.loads(to_json(doc["params"]))
        if not same:
            return None
        return CellResult(
            corpus=bench.name,
            retriever=old["retriever"],
            n_queries=len(bench.queries),
            metric_names=list(old["metrics"]),
            aggregated=old["results"],
            cell_dir=cell_dir,
            timings={},
            notes=[
                f"{cell_dir} is up to date (same config, data checksum and strata); "
                "shown from disk, force=true recomputes it"
            ],
            variance=old.get("variance") or {},
            semantic=semantic,
            skipped=True,
        )
    except (
        HarnessError,
        OSError,
        ValueError,
        KeyError,
        TypeError,
    ):  # unreadable or older: recompute
        return None


def corpus_diagnostics(bench, retriever) -> dict[str, Any]:
    """Corpus diagnostics (docs/metrics.md#corpus-diagnostics) every cell records: gold
    redundancy always, Similarity when the retriever embedded the corpus."""
    from harness.strata.diagnostics import gold_redundancy, similarity

    emb = getattr(retriever, "corpus_embeddings", None)
    sim = None
    if emb is not None:
        sim = {"value": similarity(emb.matrix), "embedder": emb.embedder, "model": emb.model}
    return {"gold_redundancy": gold_redundancy(bench), "similarity": sim}


def run_coverage(bench, run, retriever) -> dict[str, Any]:
    """Which benchmark queries the run has no ranking for (they score 0), plus what the
    retriever itself reports (a run file's unknown ids, for example)."""
    missing = [q.query_id for q in bench.queries if q.query_id not in run]
    out: dict[str, Any] = {"queries_without_results": len(missing), "examples": missing[:5]}
    notes = getattr(retriever, "notes", None)
    if notes:
        out["retriever_notes"] = notes
    return out


def messages(retriever, coverage: Mapping[str, Any]) -> list[str]:
    out = []
    if coverage["queries_without_results"]:
        n = coverage["queries_without_results"]
        out.append(
            f"{n} benchmark quer{'y has' if n == 1 else 'ies have'} no results in the run and "
            f"score 0 (e.g. {', '.join(map(repr, coverage['examples']))})"
        )
    extra = getattr(retriever, "messages", None)
    return out + (extra() if extra else [])


def _metrics_doc(cfg, bench, retriever_name, metric_names, aggregated) -> dict[str, Any]:
    """Everything about the cell except timings, so reruns give byte-identical files."""
    return {
        "schema": results.SCHEMA,
        "corpus": bench.name,
        "retriever": retriever_name,
        "benchmark": {
            "checksum": bench.checksum,
            "source": bench.source,
            "n_queries": len(bench.queries),
            "n_chunks": len(bench.corpus),
            "metadata": bench.metadata,
        },
        "depth": cfg["retrieval"]["depth"],
        "metrics": metric_names,
        "results": aggregated,
        "config": cfg,
        "provenance": {"versions": provenance.versions(), "git": provenance.git_state()},
        "timings_file": "timings.json",
    }


def _yaml(cfg: Mapping[str, Any]) -> str:
    from omegaconf import OmegaConf

    return OmegaConf.to_yaml(OmegaConf.create(dict(cfg)))
