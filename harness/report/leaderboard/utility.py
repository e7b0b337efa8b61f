"""The leaderboard's utility table per corpus: how much each retriever's top K raises a
generator's belief in the reference answer (ΔSePer@K, soft and hard kernels), that belief
itself (SePer@K) and Coverage@K beside it, so retrieval and utility read side by side
(docs/utility.md). Built by the RAG tables' `shaped_table`."""

from __future__ import annotations

from harness.report.leaderboard.rag import Shape

COLUMNS = (("ΔSePer", "dseper"), ("ΔSePer hard", "dseper_hard"), ("SePer", "seper"))


def _model(section: dict) -> str:
    return str(section.get("model") or section.get("target") or section.get("object") or "?")


def _describe(section: dict) -> str:
    gen, nli = _model(section.get("generator") or {}), _model(section.get("nli") or {})
    return f"generator: {gen}; NLI model: {nli}"


UTILITY = Shape(
    "utility",
    "dseper",
    (*COLUMNS, ("Cov", "coverage")),
    (),
    "retrieval utility, ΔSePer (percentage points) and SePer (%)",
    "ΔSePer: the generator's belief in the reference answer with the top K in its prompt "
    "minus its belief with none (soft kernel: each sampled answer weighted by its "
    "entailment of the reference; hard: answers clustered by bidirectional entailment); "
    "SePer: the belief with the top K; unanswerable queries left out (docs/utility.md)",
    holds=frozenset(f for _, f in COLUMNS),
    section="utility",
    describe=_describe,
    average=False,
)
