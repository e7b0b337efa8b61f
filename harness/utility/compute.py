"""ΔSePer per query: the generator's belief in the reference answers with the top-K passages,
minus its belief without retrieval (docs/utility.md#definition).

For each query with answers: one closed-book prompt (shared by every retriever and K: it does
not depend on the run) and one prompt per distinct top-K list. Each distinct prompt is sampled
N times once (cache kind `gen`); the samples' entailment with the references (kind `nli`) and,
for the hard variant, with each other (kind `nli-cluster`) are computed once per generation.
Everything is content-addressed, so a rerun, or another retriever that retrieves the same top
K, reads the cache and builds no model."""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.errors import ConfigError, HarnessError, check_int, guarded_call
from harness.core.paths import cache_dir
from harness.core.progress import Progress
from harness.core.run import Run
from harness.core.types import Benchmark, Query, is_number
from harness.utility.cache import Store, content_key
from harness.utility.models import Given, Lazy, model_of
from harness.utility.seper import cluster, hard_seper, sequence_weights, soft_seper
from harness.utility.spec import UtilitySpec, canonical_json

log = logging.getLogger("harness.utility")

FAMILIES = ("dseper", "dseper_hard", "seper")
CHUNK = 64  # prompts (or NLI entries) per step: the cache is written after each, so a crash
# loses at most one step's work
DECODING = ("samples", "temperature", "top_p", "max_new_tokens", "seed")  # a generation's key


@dataclass(frozen=True)
class _Task:
    """One prompt of one query: what its NLI entries depend on."""

    prompt: str
    question: str
    references: tuple[str, ...]


def references(query: Query) -> tuple[str, ...]:
    """The query's reference answers, or () when ΔSePer is undefined for it (no answer, or
    unanswerable from the corpus: there is nothing the passages could make more believable)."""
    if query.answerable == "no":
        return ()
    return tuple(dict.fromkeys(a.strip() for a in query.answers if a and a.strip()))


def passages_text(bench: Benchmark, ids: Sequence[str], spec: UtilitySpec) -> str:
    """The top passages in rank order, each through its template, one per line; ids the
    corpus lacks are left out (ranks count the passages shown)."""
    lines = []
    for cid in ids:
        chunk = bench.corpus.get(cid)
        if chunk is None:
            continue
        rank = len(lines) + 1
        if chunk.title:
            lines.append(spec.passage.format(rank=rank, title=chunk.title, text=chunk.text))
        else:
            lines.append(spec.passage_untitled.format(rank=rank, text=chunk.text))
    return "\n".join(lines)


def prompt_seed(seed: int, prompt: str) -> int:
    """A prompt's 64-bit sampling seed: from the run's seed and the prompt text only."""
    digest = hashlib.sha256(canonical_json([seed, prompt]).encode("utf-8")).hexdigest()
    return int(digest[:16], 16)


def utility_values(
    bench: Benchmark,
    run: Run,
    ks: Iterable[int],
    spec: UtilitySpec,
    *,
    families: Sequence[str] = FAMILIES,
    generator: Any = None,
    nli: Any = None,
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """{"dseper@5": [one value per query, in bench.queries order], ...} for each family and K,
    and a stats dict (prompts, cache hits and misses, NLI pairs, models_loaded, seconds per
    stage). dseper@K = SePer_soft(q, top K) - SePer_soft(q); dseper_hard@K the same with the
    clustering kernel; seper@K = SePer_soft(q, top K). NaN for a query without references.
    `generator` / `nli`: objects to use instead of building them from the spec."""
    ks = _check_ks(ks)
    families = _check_families(families)
    clock = time.perf_counter()
    seconds: dict[str, float] = {}
    loaded: list[str] = []
    gen = model_of(generator, spec.generator, "generator", "utility.generator", loaded)
    ent = model_of(nli, spec.nli, "nli", "utility.nli", loaded)
    store = Store(spec.cache if spec.cache is not None else cache_dir() / "utility")
    closed = any(f != "seper" for f in families)
    hard = "dseper_hard" in families

    # prompts: per query, {None: closed book, k: with the top k}
    plan: list[dict[int | None, _Task] | None] = []
    for q in bench.queries:
        refs = references(q)
        if not refs:
            plan.append(None)
            continue
        closed_prompt = spec.prompt_closed.format(question=q.text)
        tasks: dict[int | None, _Task] = {}
        if closed:
            tasks[None] = _Task(closed_prompt, q.text, refs)
        ids = run[q.query_id].ids
        for k in ks:
            text = passages_text(bench, ids[:k], spec)
            # nothing retrieved is no retrieval: the closed-book prompt (ΔSePer 0)
            prompt = spec.prompt.format(question=q.text, passages=text) if text else closed_prompt
            tasks[k] = _Task(prompt, q.text, refs)
        plan.append(tasks)
    tasks_all = list(dict.fromkeys(t for p in plan if p for t in p.values()))
    prompts = list(dict.fromkeys(t.prompt for t in tasks_all))
    seconds["prompts"] = time.perf_counter() - clock

    clock = time.perf_counter()
    decoding = {k: getattr(spec, k) for k in DECODING}
    gen_keys, samples, gen_hits = generations(prompts, decoding, gen, store)
    seconds["generation"] = time.perf_counter() - clock

    clock = time.perf_counter()
    nli_stats = {"hits": 0, "misses": 0, "pairs": 0}
    how = (gen_keys, samples, spec, ent, store, nli_stats)
    ref_entries = _nli_entries("nli", tasks_all, *how)
    cluster_entries = _nli_entries("nli-cluster", tasks_all, *how) if hard else {}
    seconds["nli"] = time.perf_counter() - clock

    clock = time.perf_counter()
    soft_of: dict[_Task, float] = {}
    hard_of: dict[_Task, float] = {}
    for task in tasks_all:
        answers = samples[task.prompt]
        weights = sequence_weights([lps for _, lps in answers], spec.length_normalize)
        entry = ref_entries[task]
        where = {t: i for i, t in enumerate(entry["texts"])}
        index = [where[text] for text, _ in answers]
        to_ref = [[row[d] for d in index] for row in entry["to_ref"]]
        soft_of[task] = soft_seper(weights, to_ref)
        if hard:
            from_ref = [[row[d] for d in index] for row in entry["from_ref"]]
            matrix = cluster_entries[_Task(task.prompt, task.question, ())]
            cwhere = {t: i for i, t in enumerate(matrix["texts"])}
            cidx = [cwhere[text] for text, _ in answers]
            labels = cluster(
                [text for text, _ in answers], _lookup(matrix["matrix"], cidx), spec.threshold
            )
            hard_of[task] = hard_seper(weights, labels, to_ref, from_ref, spec.threshold)

    def value(family: str, tasks, k: int) -> float:
        if tasks is None:
            return math.nan
        if family == "seper":
            return soft_of[tasks[k]]
        of = soft_of if family == "dseper" else hard_of
        return of[tasks[k]] - of[tasks[None]]

    values = {f"{f}@{k}": [value(f, t, k) for t in plan] for f in families for k in ks}
    seconds["score"] = time.perf_counter() - clock

    stats = {
        "queries": sum(p is not None for p in plan),
        "prompts": len(prompts),
        "samples": spec.samples,
        "generation_hits": gen_hits,
        "generation_misses": len(prompts) - gen_hits,
        "nli_hits": nli_stats["hits"],
        "nli_misses": nli_stats["misses"],
        "nli_pairs": nli_stats["pairs"],
        "models_loaded": loaded,
        "cache": str(store.root),
        "seconds": seconds,
    }
    return values, stats


def _lookup(matrix: list[list[float]], index: list[int]):
    """entail(i, j) over samples, read from the matrix of their distinct texts."""
    return lambda i, j: matrix[index[i]][index[j]]


def _check_ks(ks: Iterable[int]) -> list[int]:
    out = sorted(set(ks))
    for k in out:
        check_int(k, "utility K")
    return out


def _check_families(families: Sequence[str]) -> list[str]:
    out = list(dict.fromkeys(families))
    for f in out:
        if f not in FAMILIES:
            raise ConfigError(f"unknown utility metric family '{f}'; valid: {', '.join(FAMILIES)}")
    return out


def generations(
    prompts: list[str], decoding: Mapping[str, Any], gen: Given | Lazy, store: Store, what="ΔSePer"
) -> tuple[dict[str, str], dict[str, list[tuple[str, list[float]]]], int]:
    """Each prompt's cache key and its samples (text, token log-probs) at `decoding` (a value
    for each of DECODING): from the cache, else generated in steps of CHUNK prompts, each step
    written before the next (`what` names the progress)."""
    n, seed = decoding["samples"], decoding["seed"]
    base = {"generator": gen.identity(), **decoding}
    keys = {p: content_key("gen", {**base, "prompt": p}) for p in prompts}
    samples: dict[str, list[tuple[str, list[float]]]] = {}
    missing = []
    for p in prompts:
        entry = store.get("gen", keys[p], _gen_shape(n))
        if entry is not None:
            samples[p] = [(s["text"], [float(x) for x in s["logprobs"]]) for s in entry["samples"]]
        else:
            missing.append(p)
    hits = len(prompts) - len(missing)
    if missing:
        model = gen.get()
        with Progress(len(missing), f"{what}: sampling answers", "prompt") as bar:
            for start in range(0, len(missing), CHUNK):
                part = missing[start : start + CHUNK]
                seeds = [prompt_seed(seed, p) for p in part]
                got = guarded_call(
                    "the generator", model.sample, part, n=n,
                    temperature=decoding["temperature"], top_p=decoding["top_p"],
                    max_new_tokens=decoding["max_new_tokens"], seeds=seeds,
                )  # fmt: skip
                _check_samples(got, len(part), n)
                for p, answers in zip(part, got):
                    clean = [(str(t), [float(x) for x in lps]) for t, lps in answers]
                    samples[p] = clean
                    store.put(
                        "gen",
                        keys[p],
                        {"samples": [{"text": t, "logprobs": lps} for t, lps in clean]},
                    )
                bar.update(len(part))
    return keys, samples, hits


def _check_samples(got: Any, prompts: int, n: int) -> None:
    if not isinstance(got, list) or len(got) != prompts:
        raise HarnessError(
            f"the generator returned {len(got) if isinstance(got, list) else type(got).__name__}"
            f" answer lists for {prompts} prompts; sample() must give {n} (text, log-probs) "
            f"per prompt"
        )
    bad = next((a for a in got if not isinstance(a, (list, tuple)) or len(a) != n), None)
    if bad is not None:
        raise HarnessError(
            f"the generator returned {_short(bad)} for a prompt; sample() must give, per "
            f"prompt, a list of {n} (text, log-probs) pair{'s' if n > 1 else ''}"
        )
    for answers in got:
        for sample in answers:
            ok = isinstance(sample, (tuple, list)) and len(sample) == 2
            if not ok or not isinstance(sample[0], str) or not isinstance(sample[1], list):
                raise HarnessError(
                    f"the generator returned {_short(sample)} as an answer; sample() must give "
                    "(text, [token log-probabilities]) pairs, the text a string"
                )
            if not all(is_number(x) for x in sample[1]):
                raise HarnessError(
                    f"the generator returned log-probabilities {_short(sample[1])}; each must "
                    "be a number"
                )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# Shapes of cache entries, checked on reading: a file that parses but was cut, edited or
# written by other code is a miss, not a crash. Each check says what is wrong, or None.


def _grid(rows: Any, n: int, size: int, diagonal: bool = True) -> bool:
    """`rows` is n lists of `size` numbers (anything on the diagonal when not `diagonal`)."""
    return (
        isinstance(rows, list)
        and len(rows) == n
        and all(
            isinstance(row, list)
            and len(row) == size
            and all((i == j and not diagonal) or is_number(x) for j, x in enumerate(row))
            for i, row in enumerate(rows)
        )
    )


def _gen_shape(n: int) -> Callable[[dict], str | None]:
    """A `gen` entry: N samples, each a text and its numeric token log-probabilities."""

    def check(entry: dict) -> str | None:
        samples = entry.get("samples")
        if not isinstance(samples, list) or len(samples) != n:
            return f"does not hold {n} samples"
        for s in samples:
            lps = s.get("logprobs") if isinstance(s, dict) else None
            if not (
                isinstance(s, dict)
                and isinstance(s.get("text"), str)
                and isinstance(lps, list)
                and all(is_number(x) for x in lps)
            ):
                return "holds a sample without a text and numeric log-probabilities"
        return None

    return check


def _texts_shape(entry: dict) -> str | None:
    texts = entry.get("texts")
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        return "holds no list of answer texts"
    return None


def _nli_shape(references: int) -> Callable[[dict], str | None]:
    """An `nli` entry: answer texts, and per reference one probability per text each way."""

    def check(entry: dict) -> str | None:
        problem = _texts_shape(entry)
        if problem is not None:
            return problem
        size = len(entry["texts"])
        for name in ("to_ref", "from_ref"):
            if not _grid(entry.get(name), references, size):
                return f"holds no {references} x {size} probabilities under {name}"
        return None

    return check


def _cluster_shape(entry: dict) -> str | None:
    """An `nli-cluster` entry: answer texts and their square matrix (diagonal unused)."""
    problem = _texts_shape(entry)
    if problem is not None:
        return problem
    size = len(entry["texts"])
    ok = _grid(entry.get("matrix"), size, size, diagonal=False)
    return None if ok else f"holds no {size} x {size} probability matrix"


def _covers(entry: dict | None, answers: list) -> bool:
    """An NLI entry holds every answer text of its generation (a generation computed again,
    after its entry was lost, may differ on a GPU: then the entry is computed again too)."""
    return entry is not None and {t for t, _ in answers} <= set(entry.get("texts", ()))


def _nli_text(question: str, answer: str, with_question: bool) -> str:
    return f"{question} {answer}" if with_question else answer


def _nli_entries(
    kind: str,
    tasks: list[_Task],
    gen_keys: Mapping[str, str],
    samples: Mapping[str, list],
    spec: UtilitySpec,
    ent: Given | Lazy,
    store: Store,
    stats: dict[str, int],
) -> dict[_Task, dict]:
    """The entries of `kind` for each task: kind `nli` holds a task's distinct answer texts
    and E(answer ⊢ reference), E(reference ⊢ answer) for every reference; kind `nli-cluster`
    the entailment matrix of the distinct answers of a (prompt, question), keyed by a task
    without references, from which clustering at any τ follows. An entry comes from the cache
    where one holds every answer text of its prompt (its key: the NLI model's identity, the
    generation, the question and references as read, with_question); the rest are computed in
    steps of CHUNK, each step's distinct pairs in one call, each step written before the
    next."""
    wq, clusters = spec.with_question, kind == "nli-cluster"
    if clusters:
        tasks = [_Task(t.prompt, t.question, ()) for t in tasks]
    units = list(dict.fromkeys(tasks))

    def key(u: _Task) -> str:
        payload = {"generation": gen_keys[u.prompt], "question": u.question if wq else None}
        if not clusters:
            payload["references"] = list(u.references)
        return content_key(kind, {"nli": ident, **payload, "with_question": wq})

    def forms(u: _Task, texts: Iterable[str]) -> list[str]:
        return [_nli_text(u.question, x, wq) for x in texts]

    def pairs_of(u: _Task) -> tuple[list[str], list[tuple[str, str]]]:
        texts = list(dict.fromkeys(text for text, _ in samples[u.prompt]))
        answers = forms(u, texts)
        if clusters:
            pairs = [(a, b) for i, a in enumerate(answers) for j, b in enumerate(answers) if i != j]
        else:
            pairs = [p for r in forms(u, u.references) for a in answers for p in ((a, r), (r, a))]
        return texts, pairs

    def fill(u: _Task, texts: list[str], probs: Mapping[tuple[str, str], float]) -> dict:
        answers = forms(u, texts)
        if clusters:
            matrix = [[None if i == j else probs[(a, b)] for j, b in enumerate(answers)]
                      for i, a in enumerate(answers)]  # fmt: skip
            return {"texts": texts, "matrix": matrix}
        refs = forms(u, u.references)
        to_ref = [[probs[(a, r)] for a in answers] for r in refs]
        from_ref = [[probs[(r, a)] for a in answers] for r in refs]
        return {"texts": texts, "to_ref": to_ref, "from_ref": from_ref}

    ident = ent.identity()
    keys = {u: key(u) for u in units}
    out: dict = {}
    todo = []
    for u in units:
        shape = _cluster_shape if clusters else _nli_shape(len(u.references))
        entry = store.get(kind, keys[u], shape)
        if _covers(entry, samples[u.prompt]):
            out[u] = entry
        else:
            todo.append(u)
    stats["hits"] += len(out)
    stats["misses"] += len(todo)
    if not todo:
        return out
    model = ent.get()
    label = "ΔSePer: entailment" + (" (clusters)" if kind == "nli-cluster" else "")
    with Progress(len(todo), label, "entry") as bar:
        for start in range(0, len(todo), CHUNK):
            part = todo[start : start + CHUNK]
            made = [pairs_of(u) for u in part]
            pairs = list(dict.fromkeys(p for _, ps in made for p in ps))
            got = guarded_call("the NLI model", model.entailment, pairs) if pairs else []
            if len(got) != len(pairs):
                raise HarnessError(
                    f"the NLI model returned {len(got)} probabilities for {len(pairs)} pairs"
                )
            probs = {p: float(x) for p, x in zip(pairs, got)}
            stats["pairs"] += len(pairs)
            for u, (texts, _) in zip(part, made):
                entry = fill(u, texts, probs)
                store.put(kind, keys[u], entry)
                out[u] = entry
            bar.update(len(part))
    return out


def section_values(
    bench, run, metrics: Sequence, spec: UtilitySpec, generator: Any = None, nli: Any = None
) -> tuple[dict, dict]:
    """Per-query values of the utility `metrics` and what they cost; `generator`, `nli`: the
    caller's objects (else loaded from the spec, only on a cache miss)."""
    families = tuple(dict.fromkeys(m.family.name for m in metrics))
    ks = sorted({m.k for m in metrics})
    computed, counts = utility_values(
        bench, run, ks, spec, families=families, generator=generator, nli=nli
    )
    return {m.name: computed[m.name] for m in metrics}, counts


def section_notes(counts: Mapping[str, Any]) -> list[str]:
    """One line on what the utility metrics cost: prompts, what came from the cache, which
    models had to be loaded (none on a cached rerun)."""
    loaded = ", ".join(counts["models_loaded"]) or "none"
    return [
        f"utility: {counts['queries']} queries, {counts['prompts']} prompts x "
        f"{counts['samples']} samples ({counts['generation_hits']} from the cache), "
        f"{counts['nli_pairs']} NLI pairs ({counts['nli_hits']} cached entries); "
        f"models loaded: {loaded}; cache {counts['cache']}"
    ]
