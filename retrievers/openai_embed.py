"""Embeddings from an OpenAI-compatible `/embeddings` endpoint (text-embedding-3-large etc.).

The API key is read from the environment variable named in the config, at request time only;
it is never stored on the encoder's identity, written to results, or printed. Requests are
batched and go through harness.core.http.ApiClient (no redirects, capped retries).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.core.errors import POSITIVE, HarnessError, check_flag, check_int
from harness.core.http import ApiClient, masked_url


class OpenAIEncoder:
    kind = "openai"

    def __init__(
        self,
        *,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key_env: str = "OPENAI_API_KEY",
        dimensions: int | None = None,
        batch_size: int = 256,
        max_retries: int = 6,
        backoff_s: float = 1.0,
        timeout_s: float = 120.0,
        max_wait_s: float = 60.0,
        max_total_s: float = 600.0,
        normalize: bool = True,
        query_prompt: str | None = None,
        document_prompt: str | None = None,
    ):
        batch_size = check_int(batch_size, "retriever.batch_size", what=POSITIVE)
        if dimensions is not None:
            what = "a positive integer (or null: the model's own)"
            dimensions = check_int(dimensions, "retriever.dimensions", what=what)
        self.api = ApiClient(
            base_url=base_url,
            api_key_env=api_key_env,
            section="retriever",
            max_retries=max_retries,
            backoff_s=backoff_s,
            timeout_s=timeout_s,
            max_wait_s=max_wait_s,
            max_total_s=max_total_s,
        )
        self.model_id = model
        self.base_url = self.api.base_url
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.normalize = check_flag(normalize, "retriever.normalize")
        self.prompts = {"query": query_prompt, "document": document_prompt}
        self.usage_tokens = 0

    def identity(self, role: str) -> dict[str, Any]:
        return {
            "encoder": self.kind,
            "model": self.model_id,
            "base_url": self.base_url,
            "dimensions": self.dimensions,
            "prompt": self.prompts[role],
            "normalize": self.normalize,
        }

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        """float32 embeddings, one row per text, in order."""
        key = self.api.key(self.model_id)
        prefix = self.prompts[role] or ""
        rows: list[list[float]] = []
        for s in range(0, len(texts), self.batch_size):
            batch = [prefix + t for t in texts[s : s + self.batch_size]]
            rows += self._request(batch, key)
        emb = np.asarray(rows, dtype=np.float32)
        if self.normalize and len(emb):
            norms = np.linalg.norm(emb, axis=1, keepdims=True)
            emb = emb / np.where(norms == 0, 1, norms)
        return emb

    def _request(self, batch: list[str], key: str) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.model_id, "input": batch, "encoding_format": "float"}
        if self.dimensions:
            body["dimensions"] = self.dimensions
        return self.api.post(
            "embeddings",
            body,
            key=key,
            parse=lambda payload: self._parse(payload, len(batch)),
            what=f"for model {self.model_id}",
        )

    def _parse(self, payload: Any, n: int) -> list[list[float]]:
        try:
            items = sorted(payload["data"], key=lambda d: d["index"])
            vectors = [item["embedding"] for item in items]
        except (KeyError, TypeError):
            raise HarnessError(
                f"{masked_url(self.base_url)}/embeddings returned no 'data' list of embeddings"
            ) from None
        if len(vectors) != n:
            raise HarnessError(
                f"{masked_url(self.base_url)}/embeddings returned {len(vectors)} embeddings "
                f"for {n} inputs"
            )
        usage = payload.get("usage") or {}
        self.usage_tokens += int(usage.get("total_tokens", 0) or 0)
        return vectors
