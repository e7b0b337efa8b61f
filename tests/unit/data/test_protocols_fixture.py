"""The `protocols` fixture benchmark (scripts/make_protocols_fixture.py), built from General-Wiki:
deterministic, the promised counts, removed gold truly absent, and readable by load_redqa."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from datetime import date

import pytest

from tests.conftest import GENERAL_WIKI, load_script

LABELS = {"ANSWER-THE-QUESTION", "RELATED", "OUTDATED", "UNKNOWN", "IRRELEVANT"}
COMPLEXITY = {
    "simple",
    "simple-w-condition",
    "set",
    "comparison",
    "aggregation",
    "multi-hop",
    "post-processing-heavy",
}


@pytest.fixture(scope="module")
def data(protocols_benchmark_path):
    return json.loads(protocols_benchmark_path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def source():
    return json.loads(GENERAL_WIKI.read_text(encoding="utf-8"))


def answerable(q: dict) -> str:
    """The record's answerable value as the design reads it (omitted = true)."""
    return {True: "yes", False: "no", "partial": "partial"}[q.get("answerable", True)]


def present(q: dict) -> list[bool]:
    return q.get("group_present", [True] * len(q["gold_chunk_groups"]))


def answers(q: dict) -> list[str]:
    return ([q["answer"]] if "answer" in q else []) + q.get("answers", [])


def squad_norm(text: str) -> str:
    """SQuAD-style normalisation, written independently of the script's."""
    text = re.sub(r"[^\w\s]", "", text.lower())
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def test_same_source_gives_the_same_bytes(protocols_benchmark_path, tmp_path):
    mod = load_script("make_protocols_fixture")
    out = tmp_path / "again.json"
    assert mod.main(["--source", str(GENERAL_WIKI), "--out", str(out)]) == 0
    text = out.read_bytes()
    assert text == protocols_benchmark_path.read_bytes()
    assert text.endswith(b"}\n")
    assert mod.render(mod.build(GENERAL_WIKI)).encode() == text


def test_counts_and_provenance(data):
    qs = data["queries"]
    assert len(qs) == 60
    roles = Counter(answerable(q) for q in qs)
    assert roles == {"yes": 40, "partial": 10, "no": 10}
    assert Counter(len(q["gold_chunk_groups"]) for q in qs) == {1: 15, 2: 15, 3: 15, 4: 15}
    meta = data["metadata"]
    assert meta["answerable"] == dict(roles)
    assert meta["total_queries"] == 60
    assert meta["source_sha256"] == hashlib.sha256(GENERAL_WIKI.read_bytes()).hexdigest()
    assert isinstance(meta["seed"], int)
    # the default (keys left out) is exercised too
    assert any("answerable" not in q for q in qs)
    assert any("group_present" not in q for q in qs)
    assert len({q["query_id"] for q in qs}) == 60


def test_group_present_matches_answerable(data):
    for q in data["queries"]:
        flags = present(q)
        assert len(flags) == len(q["gold_chunk_groups"])
        role = answerable(q)
        if role == "no":
            assert not any(flags)
        elif role == "partial":
            assert any(flags) and not all(flags) and len(flags) >= 2
        else:
            assert all(flags)


def test_queries_come_from_general_wiki(data, source):
    original = {q["query_id"]: q for q in source["queries"]}
    for q in data["queries"]:
        src = original[q["query_id"]]
        assert q["question"] == src["question"]
        assert [sorted(set(g)) for g in src["gold_chunk_groups"]] == q["gold_chunk_groups"]
    # gold pairwise disjoint: removing one query's gold never touches another's
    seen: Counter[str] = Counter(
        c for q in data["queries"] for c in {c for g in q["gold_chunk_groups"] for c in g}
    )
    assert max(seen.values()) == 1


def test_corpus_is_general_wiki_minus_removed_gold(data, source):
    corpus = data["corpus"]
    removed = {
        c
        for q in data["queries"]
        for g, here in zip(q["gold_chunk_groups"], present(q))
        if not here
        for c in g
    }
    assert removed and sorted(removed) == data["metadata"]["removed_chunks"]
    assert set(corpus) == set(source["corpus"]) - removed
    assert all(corpus[c]["content"] == source["corpus"][c]["content"] for c in corpus)
    assert data["metadata"]["total_corpus_chunks"] == len(corpus)
    for q in data["queries"]:
        for g, here in zip(q["gold_chunk_groups"], present(q)):
            assert all((c in corpus) == here for c in g), q["query_id"]
        assert all(c in corpus for c in q.get("labels") or {}), q["query_id"]


def test_unanswerable_answers_are_nowhere_in_the_corpus(data):
    texts = [" " + squad_norm(c["content"]) + " " for c in data["corpus"].values()]
    raw = [c["content"].lower() for c in data["corpus"].values()]
    unanswerable = [q for q in data["queries"] if answerable(q) == "no"]
    for q in unanswerable:
        assert answers(q), q["query_id"]
        for a in answers(q):
            norm = " " + squad_norm(a) + " "
            assert not any(norm in t for t in texts), (q["query_id"], a)
            assert not any(a.lower() in t for t in raw), (q["query_id"], a)


def test_answers_are_spans_of_the_last_gold_chunk(data, source):
    for q in data["queries"]:
        first = answers(q)[0]
        assert first.strip()
        last = q["gold_chunk_groups"][-1]
        assert any(first in source["corpus"][c]["content"] for c in last), q["query_id"]
    assert any(len(set(answers(q))) > 1 for q in data["queries"])
    assert any("answer" in q and "answers" in q for q in data["queries"])


def test_metadata_fields(data):
    qs = data["queries"]
    for q in qs:
        m = q["metadata"]
        assert m["dynamism"] in {"fast", "slow", "static"}
        assert m["complexity"] in COMPLEXITY
        assert m["popularity"] in {"head", "torso", "tail"}
        assert m["source"] in {"web", "private"}
        assert m["question_words"] == len(q["question"].split())
    for key in ("dynamism", "popularity", "source"):
        assert len({q["metadata"][key] for q in qs}) > 1, key
    assert len({q["metadata"]["complexity"] for q in qs}) >= 5
    multi = [q for q in qs if len(q["gold_chunk_groups"]) >= 2]
    assert sum(q["metadata"]["complexity"] == "multi-hop" for q in multi) > len(multi) / 2
    assert 0 < sum("category" not in q["metadata"] for q in qs) < 10
    assert len({q["metadata"]["question_words"] for q in qs}) > 10  # tertiles have room


def test_dates_give_stale_and_current_fast_questions(data):
    corpus = data["corpus"]
    stale = current = 0
    for q in data["queries"]:
        asked = date.fromisoformat(q["date"])
        assert asked.year == 2024
        gold = [c for g, here in zip(q["gold_chunk_groups"], present(q)) if here for c in g]
        for c in gold + list(q.get("labels") or {}):
            assert "date" in corpus[c], (q["query_id"], c)
        if q["metadata"]["dynamism"] == "fast" and gold:
            ages = [(asked - date.fromisoformat(corpus[c]["date"])).days for c in gold]
            stale += max(ages) > 7
            current += max(ages) <= 7
    assert stale >= 2 and current >= 2
    assert 0 < sum("date" in c for c in corpus.values()) < len(corpus)


def test_labels(data):
    qs = data["queries"]
    for q in qs:
        labels = q.get("labels") or {}
        assert set(labels.values()) <= LABELS
        gold = {c for g, here in zip(q["gold_chunk_groups"], present(q)) if here for c in g}
        if labels and answerable(q) != "no":
            assert all(labels.get(c) in {"ANSWER-THE-QUESTION", "OUTDATED"} for c in gold)
    used = Counter(v for q in qs for v in (q.get("labels") or {}).values())
    assert set(used) == LABELS
    # OUTDATED gold only for fast questions; some of them keep a current member in the group
    kept_current = 0
    for q in qs:
        labels = q.get("labels") or {}
        for g in q["gold_chunk_groups"]:
            if any(labels.get(c) == "OUTDATED" for c in g):
                assert q["metadata"]["dynamism"] == "fast"
                kept_current += any(labels.get(c) == "ANSWER-THE-QUESTION" for c in g)
    assert kept_current >= 1
    # deflection: some unanswerable queries have distractors, others no labels at all
    no = [q for q in qs if answerable(q) == "no"]
    with_distractors = [
        q for q in no if {"RELATED", "OUTDATED"} & set((q.get("labels") or {}).values())
    ]
    assert 0 < len(with_distractors) < len(no)
    # grounding: the share of relevant labelled passages falls in every bin
    bins = set()
    for q in qs:
        labels = q.get("labels")
        if labels:
            share = sum(v != "IRRELEVANT" for v in labels.values()) / len(labels)
            bins.add("low" if share < 1 / 3 else "high" if share > 2 / 3 else "mid")
    assert bins == {"low", "mid", "high"}


def test_load_redqa_reads_it(protocols_benchmark_path, data):
    from harness.core.errors import HarnessError
    from harness.data.benchmarks import load_redqa

    try:
        bench = load_redqa(protocols_benchmark_path, name="protocols")
    except HarnessError as err:  # pragma: no cover - only while the loader lags the design
        pytest.skip(f"load_redqa does not read the design-17 keys yet: {err}")
    assert len(bench.queries) == 60
    assert len(bench.corpus) == len(data["corpus"])
    by_id = {q.query_id: q for q in bench.queries}
    assert Counter(q.answerable for q in bench.queries) == {"yes": 40, "partial": 10, "no": 10}
    for rec in data["queries"]:
        q = by_id[rec["query_id"]]
        flags = present(rec)
        assert q.hop == len(rec["gold_chunk_groups"])
        assert set(q.groups) == {
            frozenset(g) for g, here in zip(rec["gold_chunk_groups"], flags) if here
        }
        assert set(q.absent) == {
            frozenset(g) for g, here in zip(rec["gold_chunk_groups"], flags) if not here
        }
        assert q.answers == tuple(dict.fromkeys(answers(rec)))
        assert q.date == date.fromisoformat(rec["date"])
        assert dict(q.fields) == rec["metadata"]
        assert (dict(q.labels) if q.labels is not None else None) == rec.get("labels")
    dated = [c for c in bench.corpus.values() if c.date is not None]
    assert len(dated) == sum("date" in c for c in data["corpus"].values())
    # removed gold is absent, not "judged but not in corpus"
    assert "judged_not_in_corpus" not in bench.metadata
