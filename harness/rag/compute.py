"""End-to-end RAG per query (docs/rag.md): the generator answers each query closed-book and
with the top K of the run in its prompt; the judge marks each answer correct or not against
the query's acceptable answers.

Every distinct prompt is answered once (cache kind `gen`, content-addressed by the prompt,
the generator's identity and the decoding settings): the closed-book prompt does not depend
on the run, so every retriever shares it, and a rerun, or another retriever with the same top
K, reads the cache and builds no model."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from harness.core.errors import HarnessError, guarded_call
from harness.core.paths import cache_dir
from harness.core.run import Run
from harness.core.types import Benchmark
from harness.rag.garage import (
    ATTRIBUTION,
    GARAGE,
    attribution_values,
    citing,
    garage_values,
    references,
)
from harness.rag.judges import (
    LABELS,
    Item,
    Lexical,
    LLMJudge,
    NLIJudge,
    agreement,
    asks_of,
    deflection,
    exact_match,
    reads,
    token_f1,
)
from harness.rag.spec import RagSpec
from harness.utility.cache import Store, content_key
from harness.utility.compute import generations, passages_text
from harness.utility.models import Given, Lazy, model_of, target_class
from metrics.answers import answer_defined, answer_form

JUDGED = ("e2e", "closed_book", "rag_gain", "parametric_gain")  # need reference answers
# GaRAGe's (docs/rag.md#garage): reference answers and a judge that reads eligibility and
# sentence support; attribution: the passages the reference answer cites
DEFLECTION = ("deflected", "clarified")  # read from the answer alone, on every query


def section_values(
    bench: Benchmark,
    run: Run,
    metrics: Sequence,
    spec: RagSpec,
    generator: Any = None,
    judge: Any = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Per-query values (benchmark order) of the rag `metrics` and what they cost, with the
    judging report (per metric: unreadable verdicts and labels, exact match, token F1,
    agreement with the lexical judge). The judged and GaRAGe families are NaN for a query
    without an acceptable answer or marked unanswerable, and where the judge's verdict could
    not be read; attribution is defined where the query lists the passages its reference
    answer cites; deflected@K and clarified@K on every query. `generator`, `judge`: objects
    to use instead of the spec's."""
    clock = time.perf_counter()
    seconds: dict[str, float] = {}
    loaded: list[str] = []
    gen = model_of(generator, spec.generator, "generator", "rag.generator", loaded)
    store = Store(spec.cache if spec.cache is not None else cache_dir() / "rag")
    chosen = _judge(spec, judge, store, loaded)
    families = {m.family.name for m in metrics}

    def ks(names) -> list[int]:
        return sorted({m.k for m in metrics if m.family.name in names and m.k is not None})

    judged_ks, garage_ks, cite_ks, deflect_ks = (
        ks(JUDGED), ks(GARAGE), ks(ATTRIBUTION), ks(DEFLECTION)
    )  # fmt: skip
    for ask, metric in sorted(asks_of(metrics).items()):
        _can_or_fail(chosen, ask, metric)
    # a judge reads the references whole: "A" (vitamin A) is one, though no chunk is searched
    # for it (answer_forms)
    forms = [[f for f in map(answer_form, q.answers) if f] for q in bench.queries]
    has_ref = [answer_defined(q, f) for q, f in zip(bench.queries, forms)]
    asks_judged = bool(families & set(JUDGED))
    if (asks_judged or garage_ks) and not any(has_ref):
        raise HarnessError(
            f"benchmark '{bench.name}' has no answerable query with a reference answer, so "
            "end-to-end RAG has nothing to judge: give its queries 'answer' or 'answers' "
            "(docs/rag.md), or ask only for deflected, clarified and attribution_*"
        )
    cites = [bool(q.citations) for q in bench.queries]
    if cite_ks and not any(cites):
        raise HarnessError(
            f"benchmark '{bench.name}' has no query listing the passages its reference answer "
            "cites, so attribution has nothing to score: give queries 'citations' (chunk "
            "ids, docs/rag.md#garage), or leave attribution_* out"
        )
    prompts: list[dict[int | None, str]] = []
    for i, q in enumerate(bench.queries):
        closed = spec.prompt_closed.format(question=q.text)
        ids = run[q.query_id].ids
        ref = has_ref[i]
        asked: dict[int | None, str] = {None: closed} if ref and asks_judged else {}
        wanted = {
            *deflect_ks,
            *(cite_ks if cites[i] else ()),
            *((*judged_ks, *garage_ks) if ref else ()),
        }
        for k in sorted(wanted):
            text = passages_text(bench, ids[:k], spec)
            # nothing retrieved is no retrieval: the closed-book prompt
            asked[k] = spec.prompt.format(question=q.text, passages=text) if text else closed
        prompts.append(asked)
    distinct = list(dict.fromkeys(p for asked in prompts for p in asked.values()))
    seconds["prompts"] = time.perf_counter() - clock

    clock = time.perf_counter()
    decoding = dict(samples=1, temperature=spec.temperature, top_p=1.0,
                    max_new_tokens=spec.max_new_tokens, seed=spec.seed)  # fmt: skip
    _, generated, hits = generations(distinct, decoding, gen, store, "end-to-end RAG")
    seconds["generation"] = time.perf_counter() - clock

    def answer(i: int, k: int | None) -> str:
        return generated[prompts[i][k]][0][0]

    clock = time.perf_counter()
    n = len(bench.queries)
    asked_of = Asker(chosen, store)
    items, at = [], []
    for i, asked in enumerate(prompts):
        refs = references(bench.queries[i])
        for key in asked:
            if has_ref[i] and asks_judged and (key is None or key in judged_ks):
                items.append(Item(bench.queries[i].text, answer(i, key), refs))
                at.append((i, key))
    report: dict[str, Any] = {}
    correct = {key: np.full(n, np.nan) for key in (None, *judged_ks)}
    if items:
        verdicts = asked_of("judge", items)
        for (i, key), v in zip(at, verdicts):
            correct[key][i] = np.nan if v is None else float(v)
        report = _report(items, at, verdicts, isinstance(chosen, Lexical))
    garage = garage_values(bench, run, metrics, answer, has_ref, asked_of, report)
    kinds = _deflection(bench, prompts, answer, deflect_ks, chosen, asked_of, report)
    seconds["judge"] = time.perf_counter() - clock

    values: dict[str, np.ndarray] = {}
    perfrecall = _perfrecall(bench, run, metrics)
    for m in metrics:
        family = m.family.name
        if family == "closed_book":
            values[m.name] = correct[None]
        elif family == "e2e":
            values[m.name] = correct[m.k]
        elif family == "rag_gain":
            values[m.name] = correct[m.k] - correct[None]
        elif family == "parametric_gain":
            values[m.name] = correct[m.k] - perfrecall[m.k]
        elif family in DEFLECTION:
            said = "declines" if family == "deflected" else "clarifies"
            values[m.name] = np.array(
                [np.nan if x is None else float(x == said) for x in kinds[m.k]]
            )
        elif family in ATTRIBUTION:
            values[m.name] = attribution_values(bench, run, m, answer)
        else:
            values[m.name] = garage[m.name]
    counts = {
        "empty_answers": sum(not generated[p][0][0].strip() for p in distinct),
        "queries": n,
        "with_reference": sum(has_ref) if asks_judged or garage_ks else n,
        "prompts": len(distinct),
        "generation_hits": hits,
        "judge": spec.judge if judge is None else f"{type(judge).__name__}, passed in",
        "judged": len(items),
        "questions": asked_of.asked - len(items),  # GaRAGe's and deflection's
        "unreadable": sum(e["unreadable"] for e in report.values()),
        "verdict_hits": asked_of.hits,
        "report": report,
        "models_loaded": loaded,
        "cache": str(store.root),
        "seconds": seconds,
    }
    if cite_ks:
        counts["attribution"] = citing(bench, cite_ks, answer)
    return values, counts


def _can_or_fail(judge, ask: str, metric: str) -> None:
    """The plan checked the configured judges (RagSpec.check); this catches an object
    handed in without the method."""
    if not can(judge, ask):
        what = type(judge.get()).__name__ if isinstance(judge, Given) else "the judge"
        raise HarnessError(
            f"{metric} needs a judge with {ask}(...); {what} has none: give it that method, "
            "or use rag.judge=llm (docs/rag.md#garage)"
        )


def can(judge, ask: str) -> bool:
    """Whether the judge answers `ask` (judges.reads); a custom class is asked without
    building it."""
    kinds = ((Lexical, "lexical"), (NLIJudge, "nli"), (LLMJudge, "llm"))
    kind = next((k for cls, k in kinds if isinstance(judge, cls)), "custom")
    if kind != "custom":
        return reads(kind, ask)
    obj = judge.get() if isinstance(judge, Given) else target_class(judge.spec, judge.where)
    return reads(kind, ask, obj)


class Asker:
    """Asks the judge one kind of question about many entries, through the verdict cache
    (a model judge's answers are cached by content: the judge's identity, the question
    asked, the entry), and checks every answer's shape; counts what it asked and what came
    from the cache."""

    def __init__(self, judge, store: Store):
        self.judge, self.store = judge, store
        self.asked = self.hits = 0

    def __call__(self, ask: str, entries: list) -> list:
        self.asked += len(entries)
        if isinstance(self.judge, Lexical) or not entries:
            return self.judge.judge(entries) if entries else []
        allowed = LABELS[ask]
        ident = self.judge.identity()
        extra = {} if ask == "judge" else {"ask": ask}  # a verdict's key as it always was
        keys = [content_key("verdict", {"judge": ident, **extra, **asdict(e)}) for e in entries]

        def shape(entry: dict) -> str | None:
            return None if _allowed(entry.get("verdict"), allowed) else "holds no verdict"

        cached = [self.store.get("verdict", key, shape) for key in keys]
        todo = [j for j, entry in enumerate(cached) if entry is None]
        got: Any = []
        if todo:
            model = self.judge.get() if isinstance(self.judge, (Given, Lazy)) else self.judge
            got = guarded_call("the judge", getattr(model, ask), [entries[j] for j in todo])
            got = list(got) if isinstance(got, (list, tuple)) else got
            if not isinstance(got, list) or len(got) != len(todo):
                count = len(got) if isinstance(got, list) else type(got).__name__
                raise HarnessError(
                    f"the judge's {ask}() returned {count} answers for {len(todo)} entries; "
                    "it must give one per entry"
                )
            got = [bool(v) if isinstance(v, np.bool_) else v for v in got]  # `score >= 0.5`
            bad = next((v for v in got if not _allowed(v, allowed)), 0)
            if bad != 0:
                said = " or ".join(repr(x) for x in allowed)
                raise HarnessError(
                    f"the judge's {ask}() returned {bad!r}; each answer must be {said} "
                    "(None: no verdict, counted)"
                )
        self.hits += len(entries) - len(todo)
        out = [None if c is None else c["verdict"] for c in cached]
        for j, v in zip(todo, got):
            out[j] = bool(v) if isinstance(v, bool) else v
            self.store.put("verdict", keys[j], {"verdict": out[j]})
        if all(v is None for v in out):  # a judge that reads nothing measures nothing
            what = "verdict" if ask == "judge" else f"{ask} label"
            check = (
                "rag.judge_model (an instruction-following model for the llm judge) and "
                "rag.judge_prompt"
                if isinstance(self.judge, LLMJudge)
                else f"its {ask}()"
            )
            raise HarnessError(
                f"the judge gave no readable {what} for any of the {len(out)} "
                f"{'sentences' if ask == 'support' else 'answers'}; check {check}"
            )
        return out


def _allowed(value: Any, allowed: tuple) -> bool:
    # True == 1 in Python: a verdict must be a bool or None, a label a listed string
    if isinstance(value, bool) or value is None:
        return value in allowed and (value is None or True in allowed)
    return isinstance(value, str) and value in allowed


def _deflection(bench, prompts, answer, ks, judge, asked_of, report) -> dict[int, list]:
    """Per K, each query's answer as "answers", "declines" or "clarifies" (None: the
    judge's label could not be read): the judge's when it reads deflection, with its
    agreement with the phrase detector in the report, else the phrase detector's."""
    if not ks:
        return {}
    phrases = {k: [deflection(answer(i, k)) for i in range(len(prompts))] for k in ks}
    if not can(judge, "deflection"):
        return phrases
    items = [Item(q.text, answer(i, k), ()) for k in ks for i, q in enumerate(bench.queries)]
    got = asked_of("deflection", items)
    n, out = len(prompts), {}
    for j, k in enumerate(ks):
        out[k] = mine = got[j * n : (j + 1) * n]
        agree = {}
        for said in ("declines", "clarifies"):
            pairs = [(x if x is None else x == said, y == said) for x, y in zip(mine, phrases[k])]
            agree[said] = agreement(*zip(*pairs))
        report[f"deflection@{k}"] = {
            "answers": n,
            "unreadable": mine.count(None),
            "agreement_with_phrases": agree,
        }
    return out


def _judge(spec: RagSpec, given: Any, store: Store, loaded: list[str]):
    """The judge the spec names (its model built on first use), or the object handed in."""
    if given is not None:
        return Given(given, "judge")
    if spec.judge == "lexical":
        return Lexical()
    where = "rag.judge_model"
    if spec.judge == "nli":
        return NLIJudge(Lazy(spec.judge_model, "nli", where, loaded), spec.judge_threshold)
    if spec.judge == "llm":
        model = Lazy(spec.judge_model, "generator", where, loaded)
        return LLMJudge(model, spec.judge_prompt, store, generations)
    return Lazy(spec.judge_model, "judge", where, loaded)


def _report(items: list[Item], at: list, verdicts: list, lexical_judge: bool) -> dict[str, Any]:
    """Per metric (closed_book, e2e@K): unreadable verdicts, exact match and token F1 (the
    means over the answers judged), and, for a judge other than lexical, its agreement with
    the lexical judge (share and Cohen's kappa)."""
    lexical = None if lexical_judge else Lexical().judge(items)
    out: dict[str, Any] = {}
    for key in dict.fromkeys(k for _, k in at):
        rows = [j for j, (_, k) in enumerate(at) if k == key]
        name = "closed_book" if key is None else f"e2e@{key}"
        em = [exact_match(items[j].answer, items[j].references) for j in rows]
        f1 = [token_f1(items[j].answer, items[j].references) for j in rows]
        entry = {
            "answers": len(rows),
            "unreadable": sum(verdicts[j] is None for j in rows),
            "exact_match": sum(em) / len(rows),
            "token_f1": sum(f1) / len(rows),
        }
        if lexical is not None:
            pairs = ([verdicts[j] for j in rows], [lexical[j] for j in rows])
            entry["agreement_with_lexical"] = agreement(*pairs)
        out[name] = entry
    return out


def _perfrecall(bench: Benchmark, run: Run, metrics: Sequence) -> dict[int, np.ndarray]:
    """PerfRecall@K per query at each K parametric_gain is asked at."""
    from metrics.evaluate import per_query
    from metrics.registry import parse_metric

    ks = sorted({m.k for m in metrics if m.family.name == "parametric_gain"})
    wanted = [parse_metric(f"perfrecall@{k}") for k in ks]
    got = per_query(bench, run, wanted) if wanted else {}
    return {k: got[m.name] for k, m in zip(ks, wanted)}


def section_notes(counts: Mapping[str, Any]) -> list[str]:
    """One line on what end-to-end RAG cost: prompts answered, cache hits, what the judge
    was asked and could not answer, models loaded (none on a cached rerun); and a line on
    attribution that cannot work as asked (no answer cites, or citations of no chunk)."""
    loaded = ", ".join(counts["models_loaded"]) or "none"
    unreadable = counts["unreadable"]
    lost = [f"{n}: {e['unreadable']}" for n, e in counts["report"].items() if e["unreadable"]]
    judge = [f"{counts['judged']} verdicts"] if counts["judged"] else []
    if counts.get("questions"):
        judge.append(f"{counts['questions']} labels (GaRAGe's, deflection)")
    if counts["judge"] != "lexical":
        judge.append(f"{counts['verdict_hits']} of them answered before (its cache)")
    if unreadable:
        judge.append(f"{unreadable} unreadable ({', '.join(lost)}; NaN)")
    queries = f"{counts['queries']} queries"
    if counts.get("with_reference") not in (None, counts["queries"]):
        queries += f" ({counts['with_reference']} with a reference answer)"
    out = [
        f"rag: {queries}, {counts['prompts']} prompts ({counts['generation_hits']} answers "
        f"from the cache); judge {counts['judge']}: {', '.join(judge) or 'nothing asked'}; "
        f"models loaded: {loaded}; cache {counts['cache']}"
    ]
    if counts["prompts"] and counts.get("empty_answers") == counts["prompts"]:
        out.append(
            f"rag: the generator's answer to every one of the {counts['prompts']} prompts is "
            "empty, so every judged value is 0; check the generator (max_new_tokens, its "
            "chat template, a model that follows instructions)"
        )
    cites = counts.get("attribution")
    if cites and cites["answers"] and not cites["citing"]:
        out.append(
            f"rag: none of the {cites['answers']} answers scored for attribution cites a "
            "passage with an [n] marker, so attribution is 0; the prompt must ask for "
            "citations (rag=garage's does: metrics=garage or +rag=garage)"
        )
    if cites and cites["not_in_corpus"]:
        out.append(
            f"rag: {cites['not_in_corpus']} chunk id(s) the reference answers cite are not in "
            f"the corpus (e.g. {', '.join(map(repr, cites['examples']))}); no answer can cite "
            "them, so attribution recall stays below 1 there"
        )
    return out
