"""Dense retrieval = an encoder (sentence-transformers or an embeddings API) + a search backend.

Corpus and query embeddings go through the content-addressed cache (retrievers.embed_cache),
so a rerun of the same cell loads them and never loads the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, HarnessError
from harness.types import Chunk, Query, Run
from retrievers.embed_cache import default_root, encode_cached
from retrievers.search import InnerProductSearch

ENCODERS = ("sentence-transformers", "openai")


class Dense:
    """Embed the corpus once (cached), embed queries (cached), search by inner product."""

    def __init__(
        self,
        *,
        name: str,
        encoder: str = "sentence-transformers",
        search: Mapping[str, Any] | None = None,
        shard_size: int = 1024,
        device: Any = "auto",
        cache: bool = True,
        cache_dir: str | None = None,
        progress: bool = True,
        **encoder_params: Any,
    ):
        if encoder not in ENCODERS:
            raise ConfigError(
                f"unknown retriever.encoder '{encoder}'; valid: {', '.join(ENCODERS)}"
            )
        if encoder == "openai":
            from retrievers.openai_embed import OpenAIEncoder

            self.encoder = OpenAIEncoder(**encoder_params)
            devices = ["cpu"]
        else:
            from retrievers.encoders import SentenceTransformerEncoder

            self.encoder = SentenceTransformerEncoder(device=device, **encoder_params)
            devices = self.encoder.devices
        self.name = name
        self.shard_size = shard_size
        self.root = (
            (Path(cache_dir).expanduser() if cache_dir else default_root()) if cache else None
        )
        self.progress = progress
        self.backend = InnerProductSearch(devices=devices, **dict(search or {}))
        self.cache_stats: dict[str, dict[str, int]] = {}
        self.corpus_similarity: dict[str, Any] | None = None

    def embed(self, texts: Sequence[str], role: str, label: str):
        """Embeddings of `texts` as `role` ("document" or "query"), through the cache."""
        emb, stats = encode_cached(
            lambda batch: self.encoder.encode(batch, role),
            texts,
            identity=self.encoder.identity(role),
            root=self.root,
            shard_size=self.shard_size,
            label=label,
            progress=self.progress,
        )
        self.cache_stats[role] = stats
        return emb

    def index(self, corpus: Mapping[str, Chunk]) -> None:
        """Embed every chunk (from the cache where possible) and build the search index."""
        if not corpus:
            raise ConfigError("cannot index an empty corpus")
        texts = []
        for cid, chunk in corpus.items():
            if not chunk.index_text.strip():
                raise HarnessError(
                    f"chunk '{cid}' has empty text, which a dense encoder cannot embed; "
                    "fix or drop it in the benchmark file"
                )
            texts.append(chunk.index_text)
        emb = self.embed(texts, "document", f"{self.name}: corpus")
        from harness.diagnose import similarity

        # SPEC 6's corpus Similarity (%) costs O(M·d) here, so every dense cell records it.
        self.corpus_similarity = {
            "value": similarity(emb),
            "embedder": self.name,
            "model": getattr(self.encoder, "model_id", None)
            or getattr(self.encoder, "model", None),
        }
        self.backend.build(emb, list(corpus))

    def search(self, queries: Sequence[Query], *, depth: int) -> Run:
        """Top `depth` chunks per query by inner product (cosine when normalised)."""
        if not queries:
            return Run(self.name, {}, depth)
        emb = self.embed([q.text for q in queries], "query", f"{self.name}: queries")
        rankings = self.backend.search(emb, depth)
        return Run(self.name, {q.query_id: r for q, r in zip(queries, rankings)}, depth)

    def messages(self) -> list[str]:
        """One line on how much came from the embedding cache."""
        if self.root is None:
            return ["embedding cache off (cache=false): everything was encoded afresh"]
        parts = []
        for role, label in (("document", "corpus"), ("query", "queries")):
            s = self.cache_stats.get(role)
            if s:
                parts.append(f"{label} {s['cached']} of {s['cached'] + s['encoded']} shards")
        return [f"embeddings from the cache ({self.root}): {', '.join(parts)}"] if parts else []
