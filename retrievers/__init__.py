"""Retrievers behind one protocol; `build_retriever` makes one from its config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.errors import ConfigError, unknown_name
from retrievers.base import Retriever


def _bm25(params: dict[str, Any], runtime: Mapping[str, Any]) -> Retriever:
    from retrievers.bm25 import BM25

    return BM25(**params)


def _run_file(params: dict[str, Any], runtime: Mapping[str, Any]) -> Retriever:
    from retrievers.run_file import RunFile

    return RunFile(**params)


def _dense(params: dict[str, Any], runtime: Mapping[str, Any]) -> Retriever:
    from retrievers.dense import Dense

    return Dense(**params, **runtime)


def _hybrid(params: dict[str, Any], runtime: Mapping[str, Any]) -> Retriever:
    from retrievers.hybrid import Hybrid

    parts = params.pop("parts", None) or {}
    if not isinstance(parts, Mapping) or len(parts) < 2:
        raise ConfigError(
            f"retriever '{params.get('name')}': a hybrid needs at least two retriever configs "
            "under retriever.parts"
        )
    built = {key: build_retriever(part, runtime) for key, part in parts.items()}
    return Hybrid(parts=built, **params)


# type -> factory taking the config's remaining keys and the run-wide settings (device, cache);
# heavy imports stay inside factories.
FACTORIES = {"bm25": _bm25, "run_file": _run_file, "dense": _dense, "hybrid": _hybrid}


def build_retriever(cfg: Mapping[str, Any], runtime: Mapping[str, Any] | None = None) -> Retriever:
    """Instantiate the retriever a `retriever` config describes; `runtime` carries the run's
    device and embedding-cache settings to the retrievers that use them."""
    params = dict(cfg)
    kind = params.pop("type", None)
    if kind not in FACTORIES:
        raise unknown_name("retriever type", str(kind), FACTORIES, "set retriever.type")
    try:
        return FACTORIES[kind](params, runtime or {})
    except TypeError as exc:
        raise ConfigError(f"retriever '{cfg.get('name')}': {exc}") from None
