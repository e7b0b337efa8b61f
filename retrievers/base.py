"""The retriever protocol every retriever module implements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from harness.types import Chunk, Query, Run


class Retriever(Protocol):
    """Index a corpus once, then return a canonical Run for a batch of queries."""

    name: str

    def index(self, corpus: Mapping[str, Chunk]) -> None:
        """Build whatever the retriever needs to search `corpus`."""

    def search(self, queries: Sequence[Query], *, depth: int) -> Run:
        """Return the top `depth` chunks per query."""
