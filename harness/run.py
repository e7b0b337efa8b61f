"""One evaluation cell: load a benchmark, retrieve, score, aggregate by stratum, write results."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness import provenance, results, semantic_report, strata_file
from harness.benchmarks import load_benchmark
from harness.errors import ConfigError
from harness.evaluate import BootstrapSpec, aggregate, per_query
from harness.strata import stratify
from metrics.registry import metrics_for
from retrievers import build_retriever

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


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


def run_cell(cfg: Mapping[str, Any]) -> CellResult:
    """Run one (retriever, corpus) cell from a resolved config dict."""
    started = time.perf_counter()
    timings: dict[str, float] = {}
    force = cfg.get("force", False)
    if not isinstance(force, bool):
        raise ConfigError(f"force must be true or false, got {force!r}")
    cfg = {k: v for k, v in cfg.items() if k != "force"}  # not part of what a cell depends on
    depth = cfg["retrieval"]["depth"]
    if not isinstance(depth, int) or depth <= 0:
        raise ConfigError(f"retrieval.depth must be a positive integer, got {depth!r}")
    metrics = metrics_for(cfg["metrics"]["names"], cfg["metrics"]["k"], depth)
    level = cfg["metrics"].get("relevance_level", 1)
    if isinstance(level, bool) or not isinstance(level, int) or level < 1:
        raise ConfigError(f"metrics.relevance_level must be an integer >= 1, got {level!r}")
    ci = _bootstrap_spec(cfg.get("stats") or {})
    runtime = {
        k: cfg.get(k, d) for k, d in (("device", "auto"), ("cache", True), ("cache_dir", None))
    }
    retriever = build_retriever(cfg["retriever"], runtime)
    _check_name("retriever.name", retriever.name)
    results_dir = Path(cfg["results"]["dir"]).expanduser()
    if cfg["results"]["write"]:
        results.check_writable(results_dir)

    t = time.perf_counter()
    bench = load_benchmark(cfg["corpus"])
    _check_name("corpus.name", bench.name)
    timings["load_s"] = time.perf_counter() - t
    notes: list[str] = []
    doc, strata_path, hint = None, None, None
    if cfg.get("strata") and cfg.get("extractor"):
        t = time.perf_counter()
        doc, strata_path, note = strata_file.for_run(cfg, bench)
        if doc is None:
            hint = note
        elif note:
            notes.append(note)
        timings["strata_s"] = time.perf_counter() - t

    if cfg["results"]["write"] and not force:
        cell_dir = results_dir / bench.name / retriever.name
        done = _up_to_date(cell_dir, cfg, bench, doc, strata_path)
        if done is not None:
            return done

    t = time.perf_counter()
    retriever.index(bench.corpus)
    timings["index_s"] = time.perf_counter() - t
    t = time.perf_counter()
    run = retriever.search(bench.queries, depth=depth)
    timings["search_s"] = time.perf_counter() - t

    t = time.perf_counter()
    values = per_query(bench, run, metrics, level=level)
    strata = stratify(bench)
    if doc is not None:
        strata.update(semantic_report.labels(bench, doc))
    aggregated = aggregate(values, strata, ci)
    variance = semantic_report.variance(values, strata)
    semantic = None
    if doc is not None:
        min_queries = cfg["strata"]["min_queries"]
        semantic = semantic_report.section(values, strata, doc, strata_path, min_queries)
    timings["evaluate_s"] = time.perf_counter() - t
    coverage = _run_coverage(bench, run, retriever)

    cell_dir = None
    if cfg["results"]["write"]:
        cell_dir = results_dir / bench.name / retriever.name
        files = {
            "metrics.json": results.to_json(
                _metrics_doc(cfg, bench, retriever.name, [m.name for m in metrics], aggregated)
                | {"variance": variance, "semantic": semantic, "run": coverage}
                | {"diagnostics": _diagnostics(bench, retriever)}
            ),
            "per_query.csv": results.per_query_csv(bench, strata, values),
            "run.trec": results.run_trec(bench, run),
            "qrels.trec": results.qrels_trec(bench),
            "config.yaml": _yaml(cfg),
        }
        timings["total_s"] = time.perf_counter() - started
        files["timings.json"] = results.to_json(
            {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), **timings}
        )
        results.write_cell(cell_dir, files)
    timings["total_s"] = time.perf_counter() - started
    return CellResult(
        corpus=bench.name,
        retriever=retriever.name,
        n_queries=len(bench.queries),
        metric_names=[m.name for m in metrics],
        aggregated=aggregated,
        cell_dir=cell_dir,
        timings=timings,
        notes=notes + _messages(retriever, coverage),
        variance=variance,
        semantic=semantic,
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
        old = json.loads((cell_dir / "metrics.json").read_text(encoding="utf-8"))
        same = (
            old.get("schema") == results.SCHEMA
            and "diagnostics" in old  # older cells lack it: recompute them
            and old["config"] == json.loads(results.to_json(cfg))
            and old["benchmark"]["checksum"] == bench.checksum
        )
        semantic = old.get("semantic")
        if doc is None:
            same = same and semantic is None
        else:
            same = same and semantic is not None
            same = same and semantic["strata_file"] == str(strata_path)
            same = same and semantic["params"] == json.loads(results.to_json(doc["params"]))
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
    except (OSError, ValueError, KeyError, TypeError):  # unreadable or older layout: recompute
        return None


def _diagnostics(bench, retriever) -> dict[str, Any]:
    """SPEC 6 corpus diagnostics the cell gets for free: gold redundancy always, Similarity
    when the retriever embedded the corpus (python -m harness.diagnose picks the embedder)."""
    from harness.diagnose import gold_redundancy

    return {
        "gold_redundancy": gold_redundancy(bench),
        "similarity": getattr(retriever, "corpus_similarity", None),
    }


def _bootstrap_spec(cfg: Mapping[str, Any]) -> BootstrapSpec | None:
    samples = cfg.get("bootstrap", 1000)
    confidence = cfg.get("confidence", 0.95)
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 0:
        raise ConfigError(f"stats.bootstrap must be an integer >= 0 (0 = no CIs), got {samples!r}")
    if not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ConfigError(f"stats.confidence must be between 0 and 1, got {confidence!r}")
    if samples == 0:
        return None
    return BootstrapSpec(samples, float(confidence), int(cfg.get("seed", 0)))


def _run_coverage(bench, run, retriever) -> dict[str, Any]:
    """Which benchmark queries the run has no ranking for (they score 0), plus what the
    retriever itself reports (a run file's unknown ids, for example)."""
    missing = [q.query_id for q in bench.queries if q.query_id not in run]
    out: dict[str, Any] = {"queries_without_results": len(missing), "examples": missing[:5]}
    notes = getattr(retriever, "notes", None)
    if notes:
        out["retriever_notes"] = notes
    return out


def _messages(retriever, coverage: Mapping[str, Any]) -> list[str]:
    out = []
    if coverage["queries_without_results"]:
        n = coverage["queries_without_results"]
        out.append(
            f"{n} benchmark quer{'y has' if n == 1 else 'ies have'} no results in the run and "
            f"score 0 (e.g. {', '.join(map(repr, coverage['examples']))})"
        )
    messages = getattr(retriever, "messages", None)
    return out + (messages() if messages else [])


def _check_name(key: str, name: str) -> None:
    if not isinstance(name, str) or not _SAFE_NAME.match(name):
        raise ConfigError(
            f"{key} '{name}' cannot name a results folder; use letters, digits, '.', '_' and '-'"
        )


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
