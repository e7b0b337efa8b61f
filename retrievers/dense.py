"""Dense retrieval = an encoder (sentence-transformers or an embeddings API) + a search backend.

Corpus and query embeddings go through the content-addressed cache (retrievers.embed_cache),
so a rerun of the same cell loads them and never loads the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import ConfigError, HarnessError
from harness.core.run import Run
from harness.core.types import Chunk, Query
from retrievers.embed_cache import default_root, encode_cached, fill_cache
from retrievers.search import InnerProductSearch

ENCODERS = ("sentence-transformers", "openai")


@dataclass(frozen=True)
class CorpusEmbeddings:
    """The corpus embeddings a dense retriever indexed, with who made them."""

    embedder: str  # the retriever's name
    model: str | None
    matrix: np.ndarray


class Dense:
    """Embed the corpus once (cached), embed queries (cached), search by inner product."""

    def __init__(
        self,
        *,
        name: str,
        encoder: Any = "sentence-transformers",
        search: Mapping[str, Any] | None = None,
        shard_size: int = 1024,
        device: Any = "auto",
        cache: bool = True,
        cache_dir: str | None = None,
        progress: bool = True,
        **encoder_params: Any,
    ):
        if not isinstance(encoder, str):  # an encoder object (a plug-in, or from the API)
            from retrievers.object_encoder import ObjectEncoder

            self.encoder = ObjectEncoder(encoder, name=name, **encoder_params)
            devices = ["cpu"]
        elif encoder not in ENCODERS:
            raise ConfigError(
                f"unknown retriever.encoder '{encoder}'; valid: {', '.join(ENCODERS)}"
            )
        elif encoder == "openai":
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
        self.corpus_embeddings: CorpusEmbeddings | None = None
        self.notes: dict[str, Any] = {}  # metrics.json records them (the index searched)

    @classmethod
    def from_encoder(
        cls, encoder: Any, *, name: str, cache_id: str | None = None, **options: Any
    ) -> Dense:
        """A dense retriever around any object with `encode(texts)` (or `encode_queries` and
        `encode_corpus`), with the search backends. The embedding cache is used only under an
        explicit `cache_id` naming the model and its settings: an object's weights cannot be
        fingerprinted, and a key without them would hand one model's embeddings to another."""
        if cache_id is None:
            options["cache"] = False
        return cls(name=name, encoder=encoder, cache_id=cache_id, **options)

    def embed(self, texts: Sequence[str], role: str, label: str):
        """Embeddings of `texts` as `role` ("document" or "query"), through the cache."""
        emb, stats = encode_cached(texts=texts, **self._cached(role, label))
        self.cache_stats[role] = stats
        return emb

    def _cached(self, role: str, label: str) -> dict[str, Any]:
        """What the embedding cache's functions take besides the texts."""
        return {
            "encode": lambda batch: self.encoder.encode(batch, role),
            "identity": self.encoder.identity(role),
            "root": self.root,
            "shard_size": self.shard_size,
            "label": label,
            "progress": self.progress,
        }

    def fill(
        self, texts: Sequence[str], role: str, label: str, part: tuple[int, int] = (0, 1)
    ) -> dict[str, Any]:
        """Encode into the cache the cache shards of slice `part` = (i, n) of the embeddings
        of `texts` that it lacks, as embed() would, without holding the whole matrix.
        Returns what fill_cache reports (shards reused and encoded, the cache folder)."""
        if self.root is None:
            raise ConfigError(
                "filling the embedding cache needs it on; drop cache=false (or set cache=true)"
            )
        return fill_cache(texts=texts, part=part, **self._cached(role, label))

    @staticmethod
    def corpus_texts(corpus: Mapping[str, Chunk]) -> list[str]:
        """The texts index() embeds, in corpus order (the embedding cache keys on them)."""
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
        return texts

    @staticmethod
    def query_texts(queries: Sequence[Query]) -> list[str]:
        """The texts search() embeds."""
        return [q.text for q in queries]

    def index(self, corpus: Mapping[str, Chunk]) -> None:
        """Embed every chunk (from the cache where possible) and build the search index."""
        texts = self.corpus_texts(corpus)
        emb = self.embed(texts, "document", f"{self.name}: corpus")
        # kept (the search index holds the same matrix) so a cell can record the corpus
        # Similarity under these embeddings at O(M·d)
        self.corpus_embeddings = CorpusEmbeddings(
            self.name, getattr(self.encoder, "model_id", None), emb
        )
        self.backend.build(emb, list(corpus))
        self.notes = {"search": self.backend.describe()}
        provenance = getattr(self.encoder, "provenance", None)
        if provenance is not None:  # the model as loaded: its resolved revision
            self.notes["model"] = provenance()

    def search(self, queries: Sequence[Query], *, depth: int) -> Run:
        """Top `depth` chunks per query by inner product (cosine when normalised)."""
        if not queries:
            return Run(self.name, {}, depth)
        emb = self.embed(self.query_texts(queries), "query", f"{self.name}: queries")
        rankings = self.backend.search(emb, depth)
        return Run(self.name, {q.query_id: r for q, r in zip(queries, rankings)}, depth)

    def messages(self) -> list[str]:
        """A line on how much came from the embedding cache, and one on the search index."""
        plan = self.backend.plan
        search = [f"search: {plan.why}"] if plan is not None else []
        if self.root is None:
            return ["embedding cache off (cache=false): everything was encoded afresh", *search]
        parts = []
        for role, label in (("document", "corpus"), ("query", "queries")):
            s = self.cache_stats.get(role)
            if s:
                parts.append(f"{label} {_cache_use(s['cached'], s['encoded'])}")
        cache = [f"embeddings ({self.root}): {'; '.join(parts)}"] if parts else []
        return cache + search


def _cache_use(cached: int, encoded: int) -> str:
    """What the cache gave and what was encoded: 'all 8 shards from the cache', '8 shards
    encoded and saved', '2 of 8 shards from the cache, 6 encoded and saved'."""
    total = cached + encoded
    shards = "1 shard" if total == 1 else f"{total} shards"
    if not encoded:
        return f"{'' if total == 1 else 'all '}{shards} from the cache"
    if not cached:
        return f"{shards} encoded and saved"
    return f"{cached} of {shards} from the cache, {encoded} encoded and saved"
