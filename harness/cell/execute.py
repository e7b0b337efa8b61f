"""One evaluation cell: load a benchmark, retrieve, score, aggregate by stratum, write results."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from harness.cell import store as results
from harness.cell.identity import cell_name, describe_difference, identity, text_of
from harness.cell.plan import CellPlan, check_name
from harness.cell.result import Evaluation
from harness.cell.sections import SECTIONS, cost_notes, cost_timings, section_values
from harness.core.errors import HarnessError
from harness.core.files import check_writable, to_json
from harness.core.run import Run
from harness.core.run.files import apply_unknown_ids, extra_queries_note, unknown_ids_note
from harness.core.types import Benchmark
from harness.data.benchmarks import load_benchmark
from harness.data.relevance import RelevanceSpec, judge
from harness.strata import apply as semantic_report
from harness.strata import file as strata_file
from harness.strata.hop import stratify
from metrics.evaluate import aggregate, per_query, with_ties
from metrics.registry import Metric
from metrics.strata_stats import StrataSpec
from retrievers import build_retriever
from retrievers.base import call

log = logging.getLogger("harness.cell")


class Scored:
    """A run scored against a benchmark. The per-query values, the strata labels and the
    means by stratum are computed at once; the statistics (bootstrap CIs, tie ranges, VRR
    against chance, the semantic block, the deflection section) when first asked for, then
    kept: a notebook that reads the means pays for nothing else, a cell's files ask for all."""

    def __init__(
        self,
        plan: CellPlan,
        bench: Benchmark,
        run: Run,
        metrics,
        values,
        strata,
        doc,
        path,
        costs,
    ):
        self.plan, self.bench, self.run, self.metrics = plan, bench, run, tuple(metrics)
        self.values, self.strata = values, strata
        self.costs: Mapping[str, Any] = costs  # {section: what its model metrics cost}
        self._doc, self._path = doc, path
        self.kept: dict[str, Any] = {}  # what a rescore carries of a section's stored block

    def complete(self) -> Scored:
        """Every statistic computed now (what a cell's files hold), e.g. inside a timer."""
        self.aggregated, self.variance, self.semantic, self.protocols, self.rag  # noqa: B018
        return self

    @cached_property
    def means(self) -> dict[str, Any]:
        """n, mean and excluded per metric, overall and per stratum (no statistics)."""
        return aggregate(self.values, self.strata)

    @cached_property
    def ties(self) -> Mapping[str, Any]:
        """Metric -> Tied (metrics.ties): each query's range over the orders of tied scores."""
        from metrics.ties import tie_bounds  # imported when asked for (a shown cell never is)

        return tie_bounds(self.bench, self.run, self.metrics, self.values)

    @cached_property
    def intervals(self) -> dict[str, Any]:
        """The means with their bootstrap CIs (the means alone when stats.bootstrap is 0)."""
        if self.plan.bootstrap is None:
            return self.means
        return aggregate(self.values, self.strata, self.plan.bootstrap)

    @cached_property
    def aggregated(self) -> dict[str, Any]:
        """The means with their CIs and tie ranges: what metrics.json's `results` holds."""
        return with_ties(self.intervals, self.values, self.strata, self.ties)

    @cached_property
    def variance(self) -> dict[str, Any]:
        """σ, VRR and VRR against chance per metric and stratification."""
        spec = self.plan.strata
        return semantic_report.variance(
            self.values,
            self.strata,
            min_queries=spec.min_queries,
            permutations=spec.permutations,
            seed=spec.seed,
        )

    @cached_property
    def semantic(self) -> dict[str, Any] | None:
        """The semantic block (None without a strata file)."""
        if self._doc is None:
            return None
        doc, path, spec = self._doc, self._path, self.plan.strata
        return semantic_report.section(self.values, self.strata, doc, path, spec)

    @cached_property
    def protocols(self) -> dict[str, Any]:
        """The deflection section (docs/protocols.md), when some query is unanswerable."""
        from metrics.deflection import deflection

        ks = sorted({m.k for m in self.metrics if m.k is not None})
        block = deflection(self.bench, self.run, ks, self.plan.relevance.distractors)
        return {} if block is None else {"deflection": block}

    @cached_property
    def rag(self) -> dict[str, Any]:
        """End-to-end RAG's block: RARE's coverage types per K when e2e@K and closed_book
        were scored (metrics.rag: {K: {queries, intersection, retrieval_only,
        parametric_only, complementary}}), GaRAGe's deflection rates per K when deflected@K
        was ({K: {insufficient, sufficient}}: the top K held no relevant passage, or some),
        and the judging report (per metric: unreadable verdicts, labels, exact match, token
        F1, agreement with the lexical judge or the phrase detector)."""
        from metrics.evaluate import per_query as scores
        from metrics.rag import coverage_types, deflection_split, relevant
        from metrics.registry import parse_metric

        out: dict[str, Any] = {}
        closed = self.values.get("closed_book")
        ks = [m.k for m in self.metrics if m.family.name == "e2e"]
        if closed is not None and ks:
            have = {k: self.values.get(f"perfrecall@{k}") for k in ks}
            wanted = [parse_metric(f"perfrecall@{k}") for k, v in have.items() if v is None]
            got = scores(self.bench, self.run, wanted).values()
            have.update({m.k: v for m, v in zip(wanted, got)})
            out["coverage_types"] = {
                str(k): coverage_types(self.values[f"e2e@{k}"], closed, have[k]) for k in ks
            }
        split = {}
        for m in self.metrics:
            if m.family.name == "deflected":
                found = [relevant(q).isdisjoint(self.run[q.query_id].ids[: m.k])
                         for q in self.bench.queries]  # fmt: skip
                split[str(m.k)] = deflection_split(self.values[m.name], found)
        if split:
            out["deflection"] = split
        judging = (self.costs.get("rag") or {}).get("report")
        judging = judging or (self.kept.get("rag") or {}).get("judging")
        return out | ({"judging": judging} if judging else {})


def score(
    plan: CellPlan,
    bench: Benchmark,
    run: Run,
    *,
    metrics: Sequence[Metric] | None = None,
    doc: Mapping[str, Any] | None = None,
    strata_path: Path | None = None,
    extra: Mapping[str, list[str]] | None = None,
    carried: Mapping[str, np.ndarray] | None = None,
    models: Mapping[str, Any] | None = None,
) -> Scored:
    """Score `run` on `bench` (judged: harness.data.relevance.judge) with the plan's settings:
    the numbers a cell reports (the CLI and the Python API alike). `metrics` replaces the
    plan's; `doc` is a semantic strata document (read from `strata_path`); `extra` adds the
    caller's stratifications (one label per query, in order); the plan's sections compute
    the model metrics (ΔSePer) with `models` ({section: the caller's model objects}), unless
    `carried` holds their stored per-query values."""
    metrics = plan.metrics if metrics is None else metrics
    given, costs = section_values(bench, run, metrics, plan.sections, models or {}, carried or {})
    values = per_query(bench, run, metrics, given, no_relevant=plan.no_relevant)
    strata = stratify(bench, plan.fields)
    if doc is not None:
        strata.update(semantic_report.labels(bench, doc))
    strata.update(extra or {})
    return Scored(plan, bench, run, metrics, values, strata, doc, strata_path, costs)


def run_cell(cfg: Mapping[str, Any], *, base: Mapping[str, Any] | None = None) -> Evaluation:
    """Run one (retriever, corpus) cell from a resolved config dict. `base` is the shipped
    config the retriever was chosen by (conf/retriever/<choice>.yaml): settings that differ
    from it name the cell's folder (harness.cell.identity)."""
    started = time.perf_counter()
    timings: dict[str, float] = {}
    plan = CellPlan.from_config(cfg)
    cfg = plan.config
    retriever = build_retriever(plan.retriever, plan.runtime)
    check_name("retriever.name", retriever.name)
    name, diff = cell_name(plan.retriever, base, plan.depth, retriever.name)
    label = {
        "display_name": _display(plan.retriever, base, diff, retriever.name),
        "variant": diff,
    }
    if plan.write:
        check_writable(plan.results_dir)
        shown = _up_to_date(plan, name, label)
        if shown is not None:
            return shown

    t = time.perf_counter()
    bench = judge(load_benchmark(plan.corpus), plan.relevance)
    check_name("corpus.name", bench.name)
    timings["load_s"] = time.perf_counter() - t
    notes: list[str] = []
    doc, strata_path, hint = None, None, None
    if plan.semantic:
        t = time.perf_counter()
        doc, strata_path, note, hint = strata_file.for_run(cfg, bench)
        notes += [note] if note else []
        timings["strata_s"] = time.perf_counter() - t

    cell_dir = plan.results_dir / bench.name / name
    stored = _stored(cell_dir, plan.force) if plan.write else None
    metrics = plan.metrics
    if stored is not None:
        verdict = _against_stored(stored, plan, bench, doc, strata_path, label)
        if verdict == "same":
            return _shown(stored, hint, plan.metric_names, notes)
        if verdict == "rescore":
            return _rescore(stored, plan, bench, doc, strata_path, label, notes, hint)
        if verdict:
            notes.append(verdict)
        mine, theirs = _identities(stored, plan)
        if mine == theirs:  # recomputed: still every metric the cell had
            metrics = _union(stored, plan)
            # stored model values belong to the old ranked list or data; a run without
            # their section has no model to compute them again
            for section in SECTIONS:
                dropped = [] if section.key in plan.sections else section.names(metrics)
                if dropped:
                    metrics = [m for m in metrics if m.name not in dropped]
                    notes.append(
                        f"{', '.join(dropped)} not recomputed (no {section.key} section in "
                        f"this run; add {section.add} with the cell's models to keep them)"
                    )

    t = time.perf_counter()
    call(retriever, "index", bench.corpus)
    timings["index_s"] = time.perf_counter() - t
    t = time.perf_counter()
    # the cell's name tags its run (a variant's settings included)
    found = call(retriever, "search", bench.queries, depth=plan.depth)
    run = Run.of(found, name=name, depth=plan.depth, where=f"retriever '{name}' search(): ")
    ids = [q.query_id for q in bench.queries]
    run, unknown = apply_unknown_ids(
        run, bench.vocab, ids, plan.unknown_ids, lambda: bench.vocab_table
    )
    timings["search_s"] = time.perf_counter() - t

    t = time.perf_counter()
    scored = score(plan, bench, run, metrics=metrics, doc=doc, strata_path=strata_path)
    scored.complete()
    timings["evaluate_s"] = time.perf_counter() - t
    timings.update(cost_timings(scored.costs))
    union = None if metrics is plan.metrics else metrics
    result = result_of(
        plan,
        bench,
        run,
        scored,
        retriever,
        unknown,
        metrics=union,
        label=label,
        notes=notes,
        timings=timings,
        strata_hint=hint,
    )
    if plan.write:
        timings["total_s"] = time.perf_counter() - started
        results.write_cell(cell_dir, result.files())
        result.path = cell_dir
    timings["total_s"] = time.perf_counter() - started
    return result


def result_of(plan, bench, run, scored, retriever, unknown, *, metrics=None, **more) -> Evaluation:
    """The result of scoring `run` (made by `retriever`; `unknown`: what apply_unknown_ids
    found) on `bench` under `plan`; `metrics`: the metrics scored when they are not the
    plan's (a stored cell's union). `more`: path, label, notes, timings, strata_hint."""
    coverage = run_coverage(bench, run, retriever, unknown)
    label = more.pop("label", {})
    notes = [*more.pop("notes", []), *messages(retriever, coverage), *cost_notes(scored.costs)]
    return Evaluation(
        scored,
        plan.metric_names,  # shown; a cell holds every metric scored (its union)
        bench.name,
        run.name,
        bench.checksum,
        plan.depth,
        tuple(q.query_id for q in bench.queries),
        _with_metrics(plan.config, metrics) if metrics is not None else plan.config,
        benchmark=bench,
        run=run,
        # the similarity now: the retriever is not kept
        record={"run": coverage, "similarity": corpus_similarity(retriever), **label},
        notes=notes,
        **more,
    )


def _display(retriever: Mapping[str, Any], base, diff: Mapping[str, Any], name: str) -> str:
    """How tables name the cell: the config's display_name (else the retriever's name; also
    when the name was changed but the display_name was not), plus what the variant changes."""
    shown = str(retriever.get("display_name") or name)
    if base is not None and retriever.get("name") != base.get("name"):
        if retriever.get("display_name") == base.get("display_name"):
            shown = name
    if diff:
        shown += " [" + ", ".join(f"{k}={_short(v)}" for k, v in diff.items()) + "]"
    return shown


def _short(value: Any) -> str:
    """A setting as the cell name writes it (`false`, `null`), cut at 24 characters."""
    text = text_of(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _stored(cell_dir: Path, force: bool, quiet: bool = False) -> Evaluation | None:
    """The cell in `cell_dir` as read back, or None when there is none (or it cannot be
    read: then it is recomputed, as an interrupted write would be). A cell of a schema this
    version does not know (written by a newer one?) is replaced only with `force`."""
    needed = [f for f in results.CELL_FILES if f != "timings.json"]  # timings are optional
    if not all((cell_dir / f).is_file() for f in needed):
        return None
    try:
        old = Evaluation.from_disk(cell_dir)  # per_query.csv checked too
        old.config["retriever"], old.config["retrieval"]["depth"]
    except results.UnknownSchema as exc:
        if not force:
            raise HarnessError(f"{exc}; force=true replaces it") from None
        if not quiet:
            log.info(f"{exc}; replaced (force=true)")
        return None
    except (HarnessError, OSError, ValueError, KeyError, TypeError) as exc:
        why = str(exc) if isinstance(exc, HarnessError) else f"missing or bad field {exc}"
        if not quiet:
            log.info(f"the stored cell is damaged ({why}); computing it again")
        return None
    return old


def _identities(stored: Evaluation, plan: CellPlan) -> tuple[dict[str, Any], dict[str, Any]]:
    """(this run's identity, the stored cell's), both as JSON values."""
    mine = json.loads(to_json(identity(plan.retriever, plan.depth)))
    config = stored.config
    retriever = config["retriever"]
    if retriever.get("type") == "run_file" and not retriever.get("sha256"):
        # written before run files were identified by their checksum, or through the API:
        # its file cannot be told, so it is taken for this one (migrate: recomputed, a note)
        retriever = {**retriever, "sha256": plan.retriever.get("sha256")}
    return mine, identity(retriever, config["retrieval"]["depth"])


def _unpinned(ident: Mapping[str, Any]) -> dict[str, Any]:
    return {**ident, "retriever": {**ident["retriever"], "sha256": None}}


def _union(stored: Evaluation, plan: CellPlan) -> list:
    """The stored cell's metrics and the ones asked for, in registry order (group first)."""
    from metrics.registry import ordered, parse_metric

    had = [parse_metric(n) for n in stored.values]
    union = ordered([*had, *plan.metrics], registry_order=True)
    # the stored cell holds nothing more: the order asked for (the bytes of a fresh run)
    return plan.metrics if {m.name for m in union} == set(plan.metric_names) else union


def _with_metrics(cfg: Mapping[str, Any], metrics) -> dict[str, Any]:
    """`cfg` with metrics.names written out as the cell's full metric list (names carry
    their relevance levels, so the level is 1)."""
    config = dict(cfg)
    config["metrics"] = {
        **cfg["metrics"],
        "names": [m.name for m in metrics],
        "k": sorted({m.k for m in metrics if m.k is not None}) or [1],
        "relevance_level": 1,
    }
    return config


def _against_stored(stored: Evaluation, plan: CellPlan, bench, doc, strata_path, label) -> str:
    """What to do with the stored cell: "same" (show it), "rescore" (score its stored
    ranked list with the metrics asked for, no retrieval), or a note saying why it is
    recomputed. A cell of another retriever config is never replaced without force."""
    cell_dir = stored.path
    mine, theirs = _identities(stored, plan)
    if mine != theirs:
        if not plan.force and _unpinned(mine) == _unpinned(theirs):
            raise HarnessError(
                f"{cell_dir} holds a cell of another version of this run file (checksum "
                f"{str(theirs['retriever']['sha256'])[:19]}… there, "
                f"{str(mine['retriever']['sha256'])[:19]}… here): give this one its own "
                "retriever.name, or add force=true to replace that cell"
            )
        if not plan.force:
            raise HarnessError(
                f"{cell_dir} holds a cell of another retriever config "
                f"({describe_difference(mine, theirs)}); give this one its own "
                f"retriever.name, or add force=true to replace that cell"
            )
        return f"{cell_dir} held another retriever config; replaced (force=true)"
    if stored.checksum != bench.checksum:
        if not plan.force:
            raise HarnessError(
                f"{cell_dir} holds a cell computed on other data (checksum "
                f"{stored.checksum[:19]}…, this data {bench.checksum[:19]}…): the data changed, "
                f"or two benchmarks share the name '{bench.name}'; give this one its own "
                f"corpus.name, or add force=true to replace that cell"
            )
        return f"{cell_dir} was computed on other data; replaced (force=true)"
    if plan.force:
        return ""
    if stored.earlier:
        return f"{cell_dir} was written by an earlier version ({stored.earlier}); recomputed"
    config = stored.config
    theirs = config["run"]["unknown_ids"]
    if theirs != plan.unknown_ids:
        # Not a rescore: under drop, run.trec no longer holds the ids keep would score.
        return (
            f"{cell_dir} was computed with run.unknown_ids={theirs}; recomputed with "
            f"run.unknown_ids={plan.unknown_ids}"
        )
    semantic = stored.scored.semantic
    same = (
        set(plan.metric_names) <= set(stored.values)
        and config.get("stats") == json.loads(to_json(plan.config.get("stats")))
        and stored.record.get("display_name") == label["display_name"]
        and _stored_spec(config) == plan.strata.as_config()
        and _stored_reading(config) == _reading(plan)
        and (config.get("metrics") or {}).get("no_relevant", "skip") == plan.no_relevant
        and _sections_same(config, plan)
    )
    if doc is None:
        same = same and semantic is None
    else:
        same = same and semantic is not None
        same = same and semantic["strata_file"] == semantic_report.strata_name(strata_path)
        same = same and semantic["params"] == json.loads(to_json(doc["params"]))
    return "same" if same else "rescore"


def _sections_same(config: Mapping[str, Any], plan: CellPlan) -> bool:
    """A run that asks for a section's metrics reuses stored values only when they were made
    with the same models and settings."""
    return all(
        not s.names(plan.metrics) or not s.difference(config.get(s.key), plan.config[s.key])
        for s in SECTIONS
    )


def _reading(plan: CellPlan) -> dict[str, Any]:
    """How a cell reads the benchmark's labels, dates and fields (relevance.*, strata.fields)."""
    return json.loads(to_json({"relevance": plan.relevance.as_config(), "fields": plan.fields}))


def _stored_reading(config: Mapping[str, Any]) -> dict[str, Any]:
    """The same for a stored cell's config."""
    fields = (config.get("strata") or {}).get("fields") or []
    relevance = RelevanceSpec.from_config(config["relevance"]).as_config()
    return {"relevance": relevance, "fields": fields}


def _stored_spec(config: Mapping[str, Any]) -> dict[str, Any]:
    """The strata reporting settings a stored cell was made with."""
    strata = config.get("strata") or {}
    return {k: strata.get(k) for k in StrataSpec().as_config()}


def _up_to_date(plan: CellPlan, name: str, label) -> Evaluation | None:
    """The stored cell, shown from disk, when it is up to date and that can be decided from
    the data files' checksum alone (a RedQA file, a BEIR folder: no parsing, no judging);
    None otherwise, and the run goes on the ordinary road (which decides it from the data)."""
    from harness.data.benchmarks import data_files, files_checksum

    building = plan.semantic and plan.config["strata"].get("mode") == "build"
    local = None if plan.force or building else data_files(plan.corpus)
    if local is None:
        return None
    corpus, files = local
    check_name("corpus.name", corpus)
    # before hashing, so that a fresh cell reads its data once; notes wait for the run's own read
    stored = _stored(plan.results_dir / corpus / name, plan.force, quiet=True)
    if stored is None or stored.earlier:
        return None
    # what the up-to-date check needs of a benchmark, unparsed: no labels or dates are known
    # (a changed `relevance` already makes the stored cell differ)
    data = SimpleNamespace(name=corpus, checksum=files_checksum(files), metadata={})
    if stored.checksum != data.checksum:
        return None
    doc, strata_path, note, hint = None, None, None, None
    if plan.semantic:
        doc, strata_path, note, hint = strata_file.for_run(plan.config, data)
    if _against_stored(stored, plan, data, doc, strata_path, label) != "same":
        return None
    return _shown(stored, hint, plan.metric_names, [note] if note else [])


def _shown(stored: Evaluation, hint, shown: Sequence[str], notes: Sequence[str]) -> Evaluation:
    """The up-to-date stored cell, showing the metrics asked for."""
    wanted = set(shown)
    stored.metrics = [n for n in stored.metrics if n in wanted]
    stored.notes = [
        *notes,
        f"{stored.path} is up to date (same retriever config, data checksum, metrics and "
        "strata); shown from disk, force=true recomputes it",
    ]
    stored.timings, stored.strata_hint, stored.skipped = {}, hint, True
    return stored


def _rescore(stored: Evaluation, plan, bench, doc, strata_path, label, notes, hint) -> Evaluation:
    """Score the cell's stored ranked list with its metrics and the ones asked for (the
    union: metric sets never displace each other) and rewrite the cell; no retrieval."""
    from harness.core.run.files import read_run

    started = time.perf_counter()
    cell_dir = stored.path
    union = _union(stored, plan)
    added = [m.name for m in union if m.name not in stored.values]
    scores = read_run(cell_dir / "run.trec")  # as scored: run.unknown_ids was applied to it
    run = Run.from_scores(stored.retriever, scores, plan.depth, bench.vocab)
    config = _with_metrics(plan.config, union)
    # the cell's own model values (costly) stay, with the settings they were made with,
    # when this run asks for none of them; a run that asks for one computes them all
    kept = [s for s in SECTIONS if s.names(union) and not s.names(plan.metrics)]
    carried = {n: stored.values[n] for s in kept for n in s.names(union)}
    for s in kept:
        config[s.key] = stored.config.get(s.key)
    scored = score(
        plan, bench, run, metrics=union, doc=doc, strata_path=strata_path, carried=carried
    )
    # a carried section's stored block (what its models reported) stays
    scored.kept.update({s.key: getattr(stored.scored, s.key, None) for s in kept})
    scored.complete()
    timings = {k: v for k, v in stored.timings.items() if k.endswith("_s")}
    timings.update(cost_timings(scored.costs))
    timings["rescore_s"] = time.perf_counter() - started
    what = f"added {', '.join(added)}" if added else "updated its statistics and strata"
    for s in SECTIONS:
        if s.names(plan.metrics) and s.difference(stored.config.get(s.key), plan.config[s.key]):
            what += f"; its {s.key} metrics scored with the new {s.key} settings"
    result = Evaluation(
        scored,
        plan.metric_names,  # what was asked for; the cell holds the union
        bench.name,
        stored.retriever,
        bench.checksum,
        plan.depth,
        tuple(q.query_id for q in bench.queries),
        config,
        path=cell_dir,
        benchmark=bench,
        run=run,
        record={k: stored.record.get(k) for k in ("run", "diagnostics")} | dict(label),
        notes=[
            *notes,
            f"{cell_dir}: scored its stored ranked list (no retrieval); {what}",
            *cost_notes(scored.costs),
        ],
        timings=timings,
        strata_hint=hint,
    )
    results.write_cell(cell_dir, result.files())
    result.timings = {"total_s": timings["rescore_s"]}
    return result


def corpus_similarity(retriever) -> dict[str, Any] | None:
    """The corpus Similarity under the retriever's embeddings (None when it has none)."""
    emb = getattr(retriever, "corpus_embeddings", None)
    if emb is None:
        return None
    from harness.strata.diagnostics import similarity

    return {"value": similarity(emb.matrix), "embedder": emb.embedder, "model": emb.model}


def run_coverage(bench, run, retriever, unknown_ids=None) -> dict[str, Any]:
    """Which benchmark queries the run has no ranking for (they score 0), the ranked chunk
    ids the corpus lacks (`unknown_ids`: what apply_unknown_ids found, kept or dropped), plus
    what the retriever itself reports (a run file's unknown ids over the whole file)."""
    missing = [q.query_id for q in bench.queries if not run[q.query_id].size]  # absent or empty
    out: dict[str, Any] = {"queries_without_results": len(missing), "examples": missing[:5]}
    ids = {q.query_id for q in bench.queries}
    extra = [q for q in run.query_ids() if q not in ids]  # given as data: a run file drops its own
    if extra:
        out["queries_not_in_benchmark"] = {"count": len(extra), "examples": extra[:5]}
    if unknown_ids is not None:
        out["unknown_ids"] = dict(unknown_ids)
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
    if "queries_not_in_benchmark" in coverage:
        u = coverage["queries_not_in_benchmark"]
        out.append(extra_queries_note(u["count"], u["examples"]))
    unknown = unknown_ids_note(coverage.get("unknown_ids"))
    if unknown:
        out.append(unknown)
    extra = getattr(retriever, "messages", None)
    return out + (extra() if extra else [])
