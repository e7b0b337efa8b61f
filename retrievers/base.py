"""The retriever protocol every retriever implements, and the checks plug-ins go through."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from harness.core.errors import ConfigError, guarded_call
from harness.core.run import Run
from harness.core.types import Chunk, Query


@runtime_checkable
class Retriever(Protocol):
    """Index a corpus once, then return a canonical Run for a batch of queries."""

    name: str

    def index(self, corpus: Mapping[str, Chunk]) -> None:
        """Build whatever the retriever needs to search `corpus`."""

    def search(self, queries: Sequence[Query], *, depth: int) -> Run:
        """Return the top `depth` chunks per query (a Run, or {query_id: {chunk_id: score}})."""


def accepts(fn: Any, arg: str, unknown: bool = False) -> bool:
    """Whether `fn` takes the keyword `arg` (or **kwargs); `unknown` when its signature cannot
    be read or names no parameter."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return unknown
    if not params:
        return unknown
    return arg in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def check_retriever(obj: Any, where: str = "the retriever") -> None:
    """Raise one ConfigError naming what `obj` lacks of the retriever protocol."""
    cls = type(obj).__name__
    missing = []
    if not callable(getattr(obj, "index", None)):
        missing.append("index(corpus) -> None")
    search = getattr(obj, "search", None)
    if not callable(search):
        missing.append("search(queries, *, depth) -> Run")
    elif not accepts(search, "depth", unknown=True):
        missing.append("a keyword argument 'depth' in search(queries, *, depth)")
    if not isinstance(getattr(obj, "name", None), str) or not obj.name:
        missing.append("a 'name' attribute (str)")
    if missing:
        raise ConfigError(
            f"{where}: {cls} does not implement the retriever protocol; missing: "
            f"{'; '.join(missing)} (or give an encoder with encode(texts), or encode_queries "
            "and encode_corpus)"
        )


def is_encoder(obj: Any) -> bool:
    """An object that embeds text: `encode(texts)` or `encode_queries` + `encode_corpus`."""
    both = callable(getattr(obj, "encode_queries", None)) and callable(
        getattr(obj, "encode_corpus", None)
    )
    return both or callable(getattr(obj, "encode", None))


def call(retriever: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """retriever.<method>(...): a plug-in's exception is one error line naming its class and
    method (guarded_call); ours keep their traceback (a bug of the harness)."""
    fn = getattr(retriever, method)
    if type(retriever).__module__.partition(".")[0] in ("retrievers", "harness"):
        return fn(*args, **kwargs)
    return guarded_call(f"the retriever '{getattr(retriever, 'name', '?')}'", fn, *args, **kwargs)
