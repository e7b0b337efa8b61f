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
from types import SimpleNamespace
from typing import Any

import numpy as np

from harness.core.errors import HarnessError
from harness.core.paths import cache_dir
from harness.core.run import Run
from harness.core.types import Benchmark
from harness.rag.spec import RagSpec
from harness.utility.cache import Store
from harness.utility.compute import generations, passages_text
from harness.utility.models import Given, Lazy
from metrics.answers import answer_defined, answer_forms, normalize


def judged_correct(answer: str, forms: Sequence[str]) -> bool:
    """The lexical judge: the answer holds an acceptable answer, both in answer_recall's
    normal form (lowercase, punctuation and a/an/the dropped), at word boundaries."""
    text = f" {normalize(answer)} "
    return any(form in text for form in forms)


def rag_values(
    bench: Benchmark, run: Run, metrics: Sequence, spec: RagSpec, generator: Any = None
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Per-query values (benchmark order) of the rag `metrics` (e2e@K, closed_book,
    rag_gain@K, parametric_gain@K; NaN for a query without an acceptable answer or marked
    unanswerable) and what they cost. `generator`: an object to use instead of the spec's."""
    clock = time.perf_counter()
    seconds: dict[str, float] = {}
    loaded: list[str] = []
    gen = (
        Given(generator, "generator")
        if generator is not None
        else Lazy(spec.generator, "generator", "rag.generator", loaded)
    )
    store = Store(spec.cache if spec.cache is not None else cache_dir() / "rag")
    ks = sorted({m.k for m in metrics if m.k is not None})
    forms = [answer_forms(q) for q in bench.queries]
    defined = [answer_defined(q, f) for q, f in zip(bench.queries, forms)]
    if not any(defined):
        raise HarnessError(
            f"benchmark '{bench.name}' has no answerable query with a reference answer, so "
            "end-to-end RAG has nothing to judge: give its queries 'answer' or 'answers' "
            "(docs/rag.md), or leave e2e, closed_book, rag_gain and parametric_gain out"
        )
    prompts: list[dict[int | None, str] | None] = []
    for q, ok in zip(bench.queries, defined):
        if not ok:
            prompts.append(None)
            continue
        closed = spec.prompt_closed.format(question=q.text)
        asked: dict[int | None, str] = {None: closed}
        ids = run[q.query_id].ids
        for k in ks:
            text = passages_text(bench, ids[:k], spec)
            # nothing retrieved is no retrieval: the closed-book prompt
            asked[k] = spec.prompt.format(question=q.text, passages=text) if text else closed
        prompts.append(asked)
    distinct = list(dict.fromkeys(p for asked in prompts if asked for p in asked.values()))
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
    correct = {key: np.full(n, np.nan) for key in (None, *ks)}
    for i, asked in enumerate(prompts):
        for key, prompt in (asked or {}).items():
            correct[key][i] = float(judged_correct(answers[prompt][0][0], forms[i]))
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
    counts = {
        "queries": sum(defined),
        "prompts": len(distinct),
        "generation_hits": hits,
        "judge": spec.judge,
        "judged": sum(len(a) for a in prompts if a),
        "models_loaded": loaded,
        "cache": str(store.root),
        "seconds": seconds,
    }
    return values, counts


def _perfrecall(bench: Benchmark, run: Run, metrics: Sequence) -> dict[int, np.ndarray]:
    """PerfRecall@K per query at each K parametric_gain is asked at."""
    from metrics.evaluate import per_query
    from metrics.registry import parse_metric

    ks = sorted({m.k for m in metrics if m.family.name == "parametric_gain"})
    wanted = [parse_metric(f"perfrecall@{k}") for k in ks]
    got = per_query(bench, run, wanted) if wanted else {}
    return {k: got[m.name] for k, m in zip(ks, wanted)}
