"""Hybrid retrieval: fuse the rankings of several retrievers.

`rrf`: reciprocal rank fusion, score(d) = sum over parts of w / (k + rank(d)), rank from 1,
k = 60 (Cormack et al., 2009); a chunk absent from a part's list gets nothing from it.
`weighted`: each part's scores min-max normalised per query over its retrieved list, then
summed with the configured weights (absent = 0). Each part retrieves `part_depth` chunks
(at least the requested depth) before fusion; the fused list is canonical (ties by id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.core.errors import POSITIVE, ConfigError, check_int
from harness.core.run import Run, canonical
from harness.core.types import Chunk, Query
from retrievers.base import call

FUSIONS = ("rrf", "weighted")


class Hybrid:
    """Several retrievers searched independently, their lists fused per query."""

    def __init__(
        self,
        *,
        name: str,
        parts: Mapping[str, Any],
        fusion: str = "rrf",
        rrf_k: float = 60,
        weights: Mapping[str, float] | None = None,
        part_depth: int = 1000,
    ):
        if fusion not in FUSIONS:
            raise ConfigError(f"unknown retriever.fusion '{fusion}'; valid: {', '.join(FUSIONS)}")
        if not isinstance(rrf_k, (int, float)) or rrf_k < 0:
            raise ConfigError(f"retriever.rrf_k must be a number >= 0, got {rrf_k!r}")
        part_depth = check_int(part_depth, "retriever.part_depth", what=POSITIVE)
        weights = dict(weights or {})
        unknown = sorted(set(weights) - set(parts))
        if unknown:
            raise ConfigError(
                f"retriever.weights names {', '.join(unknown)}, which are not parts of this "
                f"hybrid; parts: {', '.join(parts)}"
            )
        for key, w in weights.items():
            if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
                raise ConfigError(f"retriever.weights.{key} must be a number >= 0, got {w!r}")
        self.name = name
        self.parts = dict(parts)
        self.fusion = fusion
        self.rrf_k = float(rrf_k)
        self.weights = {key: float(weights.get(key, 1.0)) for key in self.parts}
        self.part_depth = part_depth
        self._vocab: dict[str, int] = {}

    def index(self, corpus: Mapping[str, Chunk]) -> None:
        for part in self.parts.values():
            call(part, "index", corpus)
        self._vocab = {cid: i for i, cid in enumerate(corpus)}

    @property
    def corpus_embeddings(self):
        """The first dense part's corpus embeddings, if any part is dense."""
        for part in self.parts.values():
            if getattr(part, "corpus_embeddings", None) is not None:
                return part.corpus_embeddings
        return None

    def search(self, queries: Sequence[Query], *, depth: int) -> Run:
        """Fuse the parts' lists for each query into one canonical ranking of `depth`."""
        deep = max(depth, self.part_depth)
        runs = {  # a plug-in part may answer with a dict or a DataFrame, as a retriever may
            key: Run.of(call(part, "search", queries, depth=deep), name=part.name, depth=deep,
                        where=f"hybrid part '{key}' search(): ")
            for key, part in self.parts.items()
        }  # fmt: skip
        fused = {}
        for q in queries:
            scores: dict[str, float] = {}
            for key, run in runs.items():
                ranking = run[q.query_id]
                w = self.weights[key]
                if self.fusion == "rrf":
                    contrib = [w / (self.rrf_k + r) for r in range(1, len(ranking.ids) + 1)]
                else:
                    contrib = [w * s for s in _min_max(ranking.scores)]
                for cid, c in zip(ranking.ids, contrib):
                    scores[cid] = scores.get(cid, 0.0) + c
            if scores or any(q.query_id in run for run in runs.values()):
                fused[q.query_id] = canonical(scores, depth, self._vocab)
        return Run(self.name, fused, depth)

    def messages(self) -> list[str]:
        out = []
        for part in self.parts.values():
            msgs = getattr(part, "messages", None)
            out += [f"{part.name}: {m}" for m in (msgs() if msgs else [])]
        return out


def _min_max(scores: Sequence[float]) -> list[float]:
    """Scores scaled to [0, 1] within one list; a list of equal scores maps to 1."""
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi == lo:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]
