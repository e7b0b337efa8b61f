"""Any object that embeds text, used as a dense retriever's encoder: sentence-transformers
style (`encode(texts)`) or BEIR/MTEB style (`encode_queries(texts)`, `encode_corpus(texts)`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.core.errors import HarnessError, check_flag, guarded_call


class ObjectEncoder:
    """Wraps an encoder object; returns float32 rows, L2-normalised unless told otherwise.

    The embedding cache keys on `cache_id` (default: the retriever's name) and the object's
    class, never on its weights: give another `cache_id` (or name) when the model changes."""

    kind = "object"

    def __init__(
        self,
        obj: Any,
        *,
        name: str,
        cache_id: str | None = None,
        normalize: bool = True,
        batch_size: int | None = None,
    ):
        self.obj = obj
        self.model_id = (
            getattr(obj, "model_id", None) or f"{type(obj).__module__}.{type(obj).__qualname__}"
        )
        self.cache_id = cache_id or name
        self.normalize = check_flag(normalize, "normalize")
        self.batch_size = batch_size

    def identity(self, role: str) -> dict[str, Any]:
        return {
            "encoder": self.kind,
            "class": f"{type(self.obj).__module__}.{type(self.obj).__qualname__}",
            "cache_id": self.cache_id,
            "role": role if self._split() else None,
            "normalize": self.normalize,
        }

    def _split(self) -> bool:
        return callable(getattr(self.obj, "encode_queries", None)) and callable(
            getattr(self.obj, "encode_corpus", None)
        )

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        texts = list(texts)
        kwargs = {} if self.batch_size is None else {"batch_size": self.batch_size}
        if self._split():
            fn = self.obj.encode_queries if role == "query" else self.obj.encode_corpus
        else:
            fn = self.obj.encode
        out = guarded_call(f"encoder {self.model_id}", fn, texts, **kwargs)
        if hasattr(out, "detach"):  # a torch tensor
            out = out.detach().float().cpu().numpy()
        emb = np.asarray(out, dtype=np.float32)
        if emb.ndim != 2 or emb.shape[0] != len(texts):
            raise HarnessError(
                f"encoder {self.model_id} returned an array of shape {emb.shape} for "
                f"{len(texts)} texts; it must return one row per text"
            )
        if not np.all(np.isfinite(emb)):
            raise HarnessError(f"encoder {self.model_id} returned NaN or infinite values")
        if self.normalize and len(emb):
            norms = np.linalg.norm(emb, axis=1, keepdims=True)
            emb = emb / np.where(norms == 0, 1, norms)
        return np.ascontiguousarray(emb, dtype=np.float32)
