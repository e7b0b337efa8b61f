"""Retrievers behind one protocol; `build_retriever` makes one from its config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.errors import ConfigError, unknown_name
from retrievers.base import Retriever


def _bm25(params: dict[str, Any]) -> Retriever:
    from retrievers.bm25 import BM25

    return BM25(**params)


def _run_file(params: dict[str, Any]) -> Retriever:
    from retrievers.run_file import RunFile

    return RunFile(**params)


# type -> factory taking the config's remaining keys; heavy imports stay inside factories.
FACTORIES = {"bm25": _bm25, "run_file": _run_file}


def build_retriever(cfg: Mapping[str, Any]) -> Retriever:
    """Instantiate the retriever a `retriever` config describes."""
    params = dict(cfg)
    kind = params.pop("type", None)
    if kind not in FACTORIES:
        raise unknown_name("retriever type", str(kind), FACTORIES, "set retriever.type")
    try:
        return FACTORIES[kind](params)
    except TypeError as exc:
        raise ConfigError(f"retriever '{cfg.get('name')}': {exc}") from None
