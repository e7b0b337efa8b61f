"""Embeddings from an OpenAI-compatible `/embeddings` endpoint (text-embedding-3-large etc.).

The API key is read from the environment variable named in the config, at request time only;
it is never stored on the encoder's identity, written to results, or printed. Requests are
batched; 429 and 5xx answers (and connection errors) are retried with exponential backoff,
honouring Retry-After.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.core.errors import ConfigError, HarnessError
from harness.core.http import post_json


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
        normalize: bool = True,
        query_prompt: str | None = None,
        document_prompt: str | None = None,
    ):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(
                f"retriever.batch_size must be a positive integer, got {batch_size!r}"
            )
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"retriever.max_retries must be an integer >= 0, got {max_retries!r}")
        self.model_id = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.backoff_s = float(backoff_s)
        self.timeout_s = float(timeout_s)
        self.normalize = bool(normalize)
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

    def _key(self) -> str:
        key = os.environ.get(self.api_key_env)
        if not key:
            raise HarnessError(
                f"{self.model_id} needs an API key in the environment variable "
                f"{self.api_key_env}; export {self.api_key_env}=... (it is never written anywhere)"
            )
        return key

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        """float32 embeddings, one row per text, in order."""
        key = self._key()
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
        return post_json(
            f"{self.base_url}/embeddings",
            body,
            headers={"Authorization": f"Bearer {key}"},
            parse=lambda payload: self._parse(payload, len(batch)),
            what=f"for model {self.model_id}",
            fix="raise retriever.max_retries",
            max_retries=self.max_retries,
            backoff_s=self.backoff_s,
            timeout_s=self.timeout_s,
        )

    def _parse(self, payload: Any, n: int) -> list[list[float]]:
        try:
            items = sorted(payload["data"], key=lambda d: d["index"])
            vectors = [item["embedding"] for item in items]
        except (KeyError, TypeError):
            raise HarnessError(
                f"{self.base_url}/embeddings returned no 'data' list of embeddings"
            ) from None
        if len(vectors) != n:
            raise HarnessError(
                f"{self.base_url}/embeddings returned {len(vectors)} embeddings for {n} inputs"
            )
        usage = payload.get("usage") or {}
        self.usage_tokens += int(usage.get("total_tokens", 0) or 0)
        return vectors
