"""The two model protocols of the utility estimator.

A generator samples answers and gives each one's token log-probabilities; an NLI model gives
entailment probabilities. What keys the cache: for an object handed in (`generator=`, `nli=`),
its `identity()`, which must change whenever its outputs would; for a class built from the
config (backend `custom`), its `target` and `options` alone (its `identity()` is not consulted,
so that a cached rerun builds no model): change an option, e.g. a `version`, when the class's
outputs change."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

Sample = tuple[str, list[float]]  # an answer's text and its tokens' log-probabilities
SIGNATURES = {
    "generator": "identity() and sample(prompts, *, n, temperature, top_p, max_new_tokens, seeds)",
    "nli": "identity() and entailment(pairs)",
    # end-to-end RAG's judge (harness.rag.judges): items have question, answer, references
    "judge": "identity() and judge(items) -> [True | False | None], or GaRAGe's "
    "eligibility(items), support(claims), deflection(items) (docs/rag.md)",
}
# the methods a role needs one of
METHODS = {
    "generator": ("sample",),
    "nli": ("entailment",),
    "judge": ("judge", "eligibility", "support", "deflection"),
}


@runtime_checkable
class Generator(Protocol):
    def identity(self) -> dict: ...

    def sample(
        self,
        prompts: Sequence[str],
        *,
        n: int,
        temperature: float,
        top_p: float,
        max_new_tokens: int,
        seeds: Sequence[int],
    ) -> list[list[Sample]]:
        """`n` sampled answers per prompt. `seeds[i]` seeds prompt i's samples; a generator
        should give the same answers for the same (prompt, seed) however prompts are batched."""
        ...


@runtime_checkable
class NLI(Protocol):
    def identity(self) -> dict: ...

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(premise entails hypothesis) for each (premise, hypothesis) pair."""
        ...
