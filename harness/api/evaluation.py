"""`harness.evaluate(...)` -> Evaluation (harness.cell.result): the numbers a cell reports."""

from __future__ import annotations

import json
import logging
import numbers
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.cell.result import Evaluation
from harness.core.errors import ConfigError, HarnessError, did_you_mean
from harness.core.files import to_json
from harness.core.run import Run
from harness.core.types import Benchmark

log = logging.getLogger("harness.api")


def evaluate(
    benchmark: Benchmark | str | Path,
    run_or_retriever: Any,
    metrics: str | Sequence[str] | None = None,
    k: int | Sequence[int] | None = None,
    strata: Mapping[str, Any] | str | Path | None = None,
    *,
    name: str | None = None,
    depth: int | None = None,
    relevance_level: int | None = None,
    no_relevant: str | None = None,
    bootstrap: int | None = None,
    confidence: float | None = None,
    seed: int | None = None,
    min_queries: int | None = None,
    permutations: int | None = None,
    unknown_ids: str | None = None,
    fields: Sequence[str] | None = None,
    relevance: Mapping[str, Any] | None = None,
    utility: Mapping[str, Any] | None = None,
    rag: Mapping[str, Any] | None = None,
    generator: Any = None,
    nli: Any = None,
    judge: Any = None,
) -> Evaluation:
    """Score a run, a retriever, an encoder or a retriever config name on a benchmark.

    The settings are the config's (harness.core.confs.HarnessConf; None: its default, as
    `python -m harness` has it): `metrics` (metrics.names, or a metrics config: `"rare"`,
    `"standard"`, `"all"`; default RARE's four) at `k` (metrics.k, default [5, 10]),
    `relevance_level`, `no_relevant` (`"zero"`: a judged query without a relevant document
    scores 0 on the standard metrics, as in trec_eval and ir_measures; default `"skip"`: it
    is left out of their means), `depth` (retrieval.depth; None: a run is scored whole, as trec_eval
    reads every line, and a retriever retrieves 100), `bootstrap`, `confidence`, `seed`
    (stats.*), `min_queries`, `permutations`, `fields` (strata.*), `unknown_ids`
    (run.unknown_ids), `relevance` (the `relevance` section's settings that differ, merged
    key by key: `{"grades": {"RELATED": 0}}`, docs/protocols.md), `utility` (those of
    conf/utility/seper.yaml that differ, for ΔSePer, docs/utility.md) and `rag` (those of
    conf/rag/e2e.yaml that differ, for end-to-end RAG, docs/rag.md; or a shipped config's
    name: `rag="garage"`, which `metrics="garage"` also brings).

    `strata`: extra stratifications, `{name: labels in query order or {query_id: label}}`,
    or the path of a semantic strata file (python -m harness.stratify); hop strata are
    always there. `min_queries`: strata smaller than this are pooled for VRR;
    `permutations`: random partitions behind VRR's chance level (0 = none). `unknown_ids`:
    ranked chunk ids the corpus lacks stay at their rank, scored as the qrels judge them
    (`"keep"`, as trec_eval) or are removed (`"drop"`); either way they are counted in
    `notes`. `fields`: query fields reported like hop (`["dynamism"]`; numeric ones in
    tertiles). `generator`, `nli` and `judge` (end-to-end RAG's): model objects of your own
    to use instead of the configured ones."""
    from harness.api.loading import load_benchmark
    from harness.cell.execute import result_of, score
    from harness.cell.plan import CellPlan, api_words
    from harness.cell.sections import SECTIONS
    from harness.core.confs import named_config
    from harness.core.paths import group_options
    from harness.core.run.files import apply_unknown_ids
    from harness.data.relevance import judge as apply_relevance
    from metrics.registry import metrics_for

    names, ks, chosen = _metric_names(metrics, k)
    settings = {
        "names": names,
        "k": ks,
        "relevance_level": relevance_level,
        "no_relevant": no_relevant,
        # until the run is known (names are checked before retrieval); 0 is refused there
        "depth": 2**62 if depth is None else depth,
        "bootstrap": bootstrap,
        "confidence": confidence,
        "seed": seed,
        "min_queries": min_queries,
        "permutations": permutations,
        "fields": [fields] if isinstance(fields, str) else fields,
        "unknown_ids": unknown_ids,
    }
    try:
        asked = metrics_for(names, ks, 2**62, relevance_level or 1)
    except ConfigError as exc:  # the keywords the caller wrote, not their config keys
        raise type(exc)(api_words(str(exc))) from None
    if relevance is not None and not isinstance(relevance, Mapping):
        raise ConfigError(
            f"relevance must map settings to values, e.g. {{'outdated_for': []}}; got {relevance!r}"
        )
    sections = {"relevance": dict(relevance)} if relevance else {}
    given = {"utility": utility, "rag": rag}
    objects = {"generator": generator, "nli": nli, "judge": judge}
    for s in SECTIONS:  # a model section: its shipped config with the caller's settings over it
        settings_of = given[s.key]
        option = chosen.get(s.key, s.option)  # metrics="garage" brings conf/rag/garage.yaml
        if isinstance(settings_of, str):  # a shipped config by name: rag="garage"
            option, settings_of = settings_of, {}
        elif settings_of is not None and not isinstance(settings_of, Mapping):
            raise ConfigError(
                f"{s.key} must be a shipped config's name ({', '.join(group_options(s.key))}) "
                f"or map settings to values (those of conf/{s.key}/{option}.yaml that differ), "
                f"e.g. {{'cache': '/scratch/{s.key}'}}; got {settings_of!r}"
            )
        if s.names(asked):
            sections[s.key] = named_config(s.key, option, dict(settings_of or {}))
            for role, key in s.objects:  # an object with a key of its own (the rag judge)
                if key != role and objects[role] is not None:  # replaces what the plan checks
                    sections[s.key][key] = _record(objects[role])
        elif settings_of or isinstance(given[s.key], str):
            raise ConfigError(
                f"{s.key}= is given but no {s.key} metric is asked for; add one to metrics "
                f"(docs/{s.key}.md), or leave {s.key}= out"
            )
    used = {role for s in SECTIONS if s.key in sections for role, _ in s.objects}
    unused = [role for role, obj in objects.items() if obj is not None and role not in used]
    if unused:
        raise ConfigError(
            f"{unused[0]}= is given but no metric asked for uses one (ΔSePer: dseper, seper; "
            "end-to-end RAG: e2e, closed_book, eligibility, ..., docs/rag.md); add one, or "
            f"leave {unused[0]}= out"
        )
    described = {"name": name, "type": "python", "object": _describe(run_or_retriever)}
    plan = CellPlan.from_settings(described, {}, settings, sections)
    from harness.data import noted

    bench = load_benchmark(benchmark)
    with noted() as judged:  # labels naming chunks the corpus lacks, gold groups emptied
        bench = apply_relevance(bench, plan.relevance)
    run, retriever = _run_of(run_or_retriever, bench, depth, name)
    if depth is None:  # a K past the end of a short list is fine (the list is not cut)
        plan = plan.with_depth(max([run.depth, *(m.k for m in plan.metrics if m.k is not None)]))
    built = getattr(retriever, "config", None)  # a config's retriever records its settings
    if isinstance(built, Mapping):
        plan.config["retriever"] = dict(built)
    plan.config["retriever"]["name"] = run.name
    for s in SECTIONS:
        for role, key in s.objects if s.key in sections else ():
            obj = objects[role]
            if obj is not None:  # the caller's model object, recorded by its type and identity
                plan.config[s.key][key] = _record(obj)
    plan.config["corpus"].update(name=bench.name, source=bench.source)
    ids = [q.query_id for q in bench.queries]
    run, unknown = apply_unknown_ids(
        run, bench.vocab, ids, plan.unknown_ids, lambda: bench.vocab_table
    )
    doc, doc_path, custom = _strata(strata, bench, plan.config)
    models = {s.key: tuple(objects[role] for role, _ in s.objects) for s in SECTIONS}
    scored = score(plan, bench, run, doc=doc, strata_path=doc_path, extra=custom, models=models)
    # how tables name it: the config's display_name, unless the caller renamed it
    shown = name or plan.config["retriever"].get("display_name") or run.name
    label = {"display_name": str(shown), "variant": {}}
    result = result_of(plan, bench, run, scored, retriever, unknown, label=label)
    result.notes[:0] = [*bench.notes, *judged]  # what loading noted: a notebook shows no log
    for note in result.notes:
        log.info(note)
    return result


def _record(obj: Any) -> dict[str, Any]:
    return {"backend": "python", "object": _describe(obj), "identity": _identity(obj)}


def _metric_names(metrics, k) -> tuple[list[str], list[int], dict[str, str]]:
    """(metric names, K values, {section: its shipped config} a metrics config names) from
    evaluate's arguments; None: the schema's defaults."""
    from harness.core.confs import MetricsConf, named_config, sections_chosen
    from harness.core.paths import group_options

    default = MetricsConf()
    if k is None:
        ks = list(default.k)
    elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
        ks = [int(k)]  # numpy's integers too
    elif isinstance(k, (str, bytes)) or not isinstance(k, Iterable):
        raise ConfigError(
            f"k must be a positive integer or a list of them, e.g. k=[5, 10]; got {k!r}"
        )
    else:
        ks = [
            int(x) if isinstance(x, numbers.Integral) and not isinstance(x, bool) else x for x in k
        ]
    if metrics is None:
        return list(default.names), ks, {}
    if not isinstance(metrics, str) and not isinstance(metrics, Iterable):
        raise ConfigError(
            f"metrics must be a metric name, a list of them or a metric set; got {metrics!r}"
        )
    if isinstance(metrics, str) and metrics in group_options("metrics"):
        cfg = named_config("metrics", metrics)
        chosen = sections_chosen("metrics", metrics)
        return list(cfg["names"]), ks if k is not None else list(cfg["k"]), chosen
    if isinstance(metrics, str):
        configs = group_options("metrics")
        hint = did_you_mean(metrics, configs)
        if hint and "@" not in metrics:  # a metrics config mistyped, not a metric's name
            from metrics.registry import parse_metric

            try:
                parse_metric(metrics)
            except ConfigError:
                raise ConfigError(
                    f"metrics={metrics!r} is neither a metric nor a metrics config{hint}; "
                    f"configs: {', '.join(configs)}"
                ) from None
        return [metrics], ks, {}
    return [str(m) for m in metrics], ks, {}


class _NoRetriever:
    """Stands for a run that came without a retriever (nothing to report about it)."""


def _run_of(obj: Any, bench: Benchmark, depth: int | None, name: str | None):
    """(Run, the retriever that made it or a stand-in) for any accepted input: data (a Run, a
    dict) through Run.of, everything else through retrievers.as_retriever. `depth` None keeps
    a run's own depth (a run file's too) and gives a retriever the schema's retrieval.depth."""
    from harness.cell.plan import check_name
    from harness.core.confs import RetrievalConf
    from harness.core.frames import is_frame
    from harness.core.run.files import check_queries
    from retrievers import as_retriever
    from retrievers.base import call
    from retrievers.run_file import RunFile

    if isinstance(obj, Evaluation):  # scored before: its ranked lists, scored again here
        obj = (
            obj.run if obj.run is not None else Run.from_trec(obj.path / "run.trec", name=obj.name)
        )
    if isinstance(obj, (Run, Mapping)) or is_frame(obj):
        run = Run.of(obj, name=name, depth=depth)
        ranked = [q for q in run.query_ids() if run[q].size]  # {"q1": {}} ranks nothing
        check_queries(ranked, {q.query_id for q in bench.queries}, "evaluate(): ")
        return run, _NoRetriever()
    shown = obj.__name__ if isinstance(obj, type) else type(obj).__name__
    retriever = as_retriever(obj, name=name, where=f"evaluate(..., {shown})")
    if not isinstance(retriever, RunFile):  # a run file is named by its file, as it is
        check_name("the retriever's name", retriever.name)
        depth = RetrievalConf().depth if depth is None else depth
    call(retriever, "index", bench.corpus)
    found = call(retriever, "search", bench.queries, depth=depth)
    where = f"retriever '{retriever.name}' search(): "
    # a Run keeps its own name unless the caller gave one; a dict takes the retriever's
    named = name or getattr(found, "name", retriever.name)
    return Run.of(found, name=named, depth=depth, where=where), retriever


def _strata(strata, bench: Benchmark, config: Mapping[str, Any]):
    """(semantic strata document or None, its path, {name: labels}) from the `strata`
    argument. A strata file must be of this benchmark's data and, for a labelled or dated
    one, of these relevance settings (as the command line checks it)."""
    if strata is None:
        return None, None, {}
    if isinstance(strata, (str, Path)):
        from harness.strata.build import relevance_param
        from harness.strata.file import load, mismatch

        path = Path(strata).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"strata file not found: {path}; build it with python -m harness.stratify"
            )
        doc = load(path)
        why = mismatch(doc, bench.checksum, relevance_param(config, bench))
        if why is not None:
            raise HarnessError(
                f"strata file {path} does not fit this evaluation: {why}; build one for it "
                "with python -m harness.stratify"
            )
        return doc, path, {}
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
            if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
                raise ConfigError(
                    f"strata['{key}'] is {labels!r}; give a label per query in benchmark order "
                    "(a list) or a {query_id: label} mapping"
                )
            labels = [str(x) for x in labels]
            if len(labels) != len(ids):
                raise ConfigError(
                    f"strata['{key}'] has {len(labels)} labels for {len(ids)} queries; give one "
                    "per query in benchmark order, or a {query_id: label} mapping"
                )
            out[str(key)] = labels
        if key in ("hop", "relevant", "overall"):
            raise ConfigError(f"strata name '{key}' is taken; pick another name")
    return None, None, out


def _identity(obj: Any) -> Any:
    """A model object's identity() as JSON values (None when it has none: the section's
    checks say so when it is used)."""
    try:
        return json.loads(to_json(obj.identity()))
    except (AttributeError, TypeError, ValueError):
        return None


def _describe(obj: Any) -> str:
    if isinstance(obj, (str, Path)):
        return str(obj)
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"
