"""End-to-end RAG per query (docs/rag.md): the generator answers each query closed-book and
with the top K of the run in its prompt; the judge marks each answer correct or not against
the query's acceptable answers.

Every distinct prompt is answered once (cache kind `gen`, content-addressed by the prompt,
the generator's identity and the decoding settings): the closed-book prompt does not depend
on the run, so every retriever shares it, and a rerun, or another retriever with the same top
K, reads the cache and builds no model."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from types import SimpleNamespace
from typing import Any

import numpy as np

from harness.core.errors import HarnessError
from harness.core.paths import cache_dir
from harness.core.run import Run
from harness.core.types import Benchmark
from harness.rag.judges import (
    Item,
    Lexical,
    LLMJudge,
    NLIJudge,
    agreement,
    deflection,
    exact_match,
    token_f1,
)
from harness.rag.spec import RagSpec
from harness.utility.cache import Store, content_key
from harness.utility.compute import generations, guarded_call, passages_text
from harness.utility.models import Given, Lazy, model_of
from metrics.answers import answer_defined, answer_forms

JUDGED = ("e2e", "closed_book", "rag_gain", "parametric_gain")  # need reference answers
DEFLECTION = ("deflected", "clarified")  # read from the answer alone, on every query


def rag_values(
    bench: Benchmark,
    run: Run,
    metrics: Sequence,
    spec: RagSpec,
    generator: Any = None,
    judge: Any = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Per-query values (benchmark order) of the rag `metrics` and what they cost, with the
    judging report (unreadable verdicts, exact match, token F1, agreement with the lexical
    judge). e2e@K, closed_book, rag_gain@K, parametric_gain@K are NaN for a query without an
    acceptable answer or marked unanswerable, and where the judge's verdict could not be
    read; deflected@K and clarified@K are defined on every query. `generator`, `judge`:
    objects to use instead of the spec's."""
    clock = time.perf_counter()
    seconds: dict[str, float] = {}
    loaded: list[str] = []
    gen = model_of(generator, spec.generator, "generator", "rag.generator", loaded)
    store = Store(spec.cache if spec.cache is not None else cache_dir() / "rag")
    judged_ks = sorted({m.k for m in metrics if m.family.name in JUDGED and m.k is not None})
    asks_judged = any(m.family.name in JUDGED for m in metrics)
    deflect_ks = sorted({m.k for m in metrics if m.family.name in DEFLECTION})
    forms = [answer_forms(q) for q in bench.queries]
    defined = [asks_judged and answer_defined(q, f) for q, f in zip(bench.queries, forms)]
    if asks_judged and not any(defined):
        raise HarnessError(
            f"benchmark '{bench.name}' has no answerable query with a reference answer, so "
            "end-to-end RAG has nothing to judge: give its queries 'answer' or 'answers' "
            "(docs/rag.md), or leave e2e, closed_book, rag_gain and parametric_gain out"
        )
    prompts: list[dict[int | None, str]] = []
    for q, ok in zip(bench.queries, defined):
        closed = spec.prompt_closed.format(question=q.text)
        ids = run[q.query_id].ids
        asked: dict[int | None, str] = {None: closed} if ok else {}
        for k in sorted({*(judged_ks if ok else ()), *deflect_ks}):
            text = passages_text(bench, ids[:k], spec)
            # nothing retrieved is no retrieval: the closed-book prompt
            asked[k] = spec.prompt.format(question=q.text, passages=text) if text else closed
        prompts.append(asked)
    distinct = list(dict.fromkeys(p for asked in prompts for p in asked.values()))
    seconds["prompts"] = time.perf_counter() - clock

    clock = time.perf_counter()
    decoding = SimpleNamespace(
        samples=1,
        temperature=spec.temperature,
        top_p=1.0,
        max_new_tokens=spec.max_new_tokens,
        seed=spec.seed,
    )
    _, answers, hits = generations(distinct, decoding, gen, store, "end-to-end RAG")
    seconds["generation"] = time.perf_counter() - clock

    clock = time.perf_counter()
    n = len(bench.queries)
    items, at = [], []
    for i, (asked, ok) in enumerate(zip(prompts, defined)):
        refs = tuple(a for a in bench.queries[i].answers if a and a.strip())
        for key, prompt in asked.items() if ok else ():
            if key is None or key in judged_ks:
                items.append(Item(bench.queries[i].text, answers[prompt][0][0], refs))
                at.append((i, key))
    verdicts, verdict_hits, report = [], 0, {}
    correct = {key: np.full(n, np.nan) for key in (None, *judged_ks)}
    if items:
        chosen = _judge(spec, judge, store, loaded)
        verdicts, verdict_hits = _verdicts(chosen, items, store)
        if not any(v is not None for v in verdicts):
            raise HarnessError(
                f"the judge gave no readable verdict for any of the {len(items)} answers; "
                "check rag.judge_model (an instruction-following model for the llm judge) "
                "and rag.judge_prompt"
            )
        for (i, key), v in zip(at, verdicts):
            correct[key][i] = np.nan if v is None else float(v)
        report = _report(items, at, verdicts, isinstance(chosen, Lexical))
    kinds = {k: [deflection(answers[asked[k]][0][0]) for asked in prompts] for k in deflect_ks}
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
            values[m.name] = np.array([float(x == said) for x in kinds[m.k]])
    counts = {
        "queries": sum(defined) if asks_judged else n,
        "prompts": len(distinct),
        "generation_hits": hits,
        "judge": spec.judge if judge is None else f"{type(judge).__name__}, passed in",
        "judged": len(items),
        "unreadable": sum(v is None for v in verdicts),
        "verdict_hits": verdict_hits,
        "report": report,
        "models_loaded": loaded,
        "cache": str(store.root),
        "seconds": seconds,
    }
    return values, counts


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


def _verdicts(judge, items: list[Item], store: Store) -> tuple[list[bool | None], int]:
    """The judge's verdicts, checked (one per item, each True, False or None), and how many
    came from the cache: a model judge's verdicts are cached by content (the judge's
    identity, the question, the answer, the references); the lexical one costs nothing."""
    if isinstance(judge, Lexical) or not items:
        return judge.judge(items), 0
    ident = judge.identity()
    keys = [content_key("verdict", {"judge": ident, **asdict(it)}) for it in items]
    cached = [store.get("verdict", key, _verdict_shape) for key in keys]
    todo = [j for j, entry in enumerate(cached) if entry is None]
    got: list = []
    if todo:
        model = judge.get() if isinstance(judge, (Given, Lazy)) else judge
        got = guarded_call("the judge", model.judge, [items[j] for j in todo])
        got = list(got) if isinstance(got, (list, tuple)) else got
        if not isinstance(got, list) or len(got) != len(todo):
            count = len(got) if isinstance(got, list) else type(got).__name__
            raise HarnessError(
                f"the judge returned {count} verdicts for {len(todo)} answers; judge(items) "
                "must give one per item"
            )
        bad = next((v for v in got if v not in (True, False, None) or isinstance(v, float)), 0)
        if bad != 0:
            raise HarnessError(
                f"the judge returned the verdict {bad!r}; each must be True, False or None "
                "(None: no verdict, counted)"
            )
    out = [None if c is None else c["verdict"] for c in cached]
    for j, v in zip(todo, got):
        out[j] = None if v is None else bool(v)
        store.put("verdict", keys[j], {"verdict": out[j]})
    return out, len(items) - len(todo)


def _verdict_shape(entry: dict) -> str | None:
    return None if entry.get("verdict") in (True, False, None) else "holds no verdict"


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
