"""`harness.evaluate(...)` -> Evaluation (harness.cell.result): the numbers a cell reports."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.cell.result import Evaluation
from harness.core.errors import ConfigError
from harness.core.types import Benchmark, Run

log = logging.getLogger("harness.api")

DEFAULT_METRICS = ("coverage", "perfrecall", "ndcg", "mrr")
DEFAULT_K = (5, 10)
DEFAULT_DEPTH = 100  # what a retriever retrieves (retrieval.depth)


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
    notes = messages(retriever, coverage) + utility_notes(scored.utility)
    for note in notes:
        log.info(note)
    return Evaluation(
        scored,
        [m.name for m in chosen],
        bench.name,
        run.name,
        bench.checksum,
        depth,
        tuple(ids),
        config,
        benchmark=bench,
        run=run,
        # the similarity now: the retriever is not kept
        record={"run": coverage, "similarity": corpus_similarity(retriever)},
        notes=notes,
    )


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
