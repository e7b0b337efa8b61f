"""Retrievers behind one protocol; `build_retriever` makes one from its config.

A config names a built-in `type` (bm25, run_file, dense, hybrid) or, for a plug-in, a class
with Hydra's `_target_` (`_target_: my_pkg.MyRetriever`, its other keys become keyword
arguments). A plug-in object that only encodes text (`encode(texts)`, or `encode_queries` and
`encode_corpus`) becomes a dense retriever with the embedding cache and the search backends.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from harness.core.errors import ConfigError, HarnessError, did_you_mean, said, unknown_name
from retrievers.base import Retriever, accepts, check_retriever, is_encoder


def _parts(params: dict[str, Any], runtime: Mapping[str, Any]) -> dict[str, Retriever]:
    """A hybrid's retrievers, each built from its config under retriever.parts."""
    parts = params.pop("parts", None) or {}
    if not isinstance(parts, Mapping) or len(parts) < 2:
        raise ConfigError(
            f"retriever '{params.get('name')}': a hybrid needs at least two retriever configs "
            "under retriever.parts"
        )
    return {key: build_retriever(part, runtime) for key, part in parts.items()}


# type -> the class the config's remaining keys build, imported when used (heavy imports);
# dense also takes the run-wide settings (device, cache)
BUILT_IN = {
    "bm25": "retrievers.bm25.BM25",
    "run_file": "retrievers.run_file.RunFile",
    "dense": "retrievers.dense.Dense",
    "hybrid": "retrievers.hybrid.Hybrid",
}


def build_retriever(cfg: Mapping[str, Any], runtime: Mapping[str, Any] | None = None) -> Retriever:
    """Instantiate the retriever a `retriever` config describes; `runtime` carries the run's
    device and embedding-cache settings to the retrievers that use them."""
    params = dict(cfg)
    params.pop("display_name", None)  # how tables name the retriever; not an argument
    if params.get("_target_") not in (None, "", "???"):
        return _plugin(params, runtime or {})
    kind = params.pop("type", None)
    if kind not in BUILT_IN:
        if kind == "plugin":
            raise ConfigError(
                "retriever=custom needs a class: set retriever._target_=my_pkg.MyRetriever "
                "(importable from where you run)"
            )
        raise unknown_name("retriever type", str(kind), BUILT_IN, "set retriever.type")
    runtime = runtime or {}
    module, _, name = BUILT_IN[kind].rpartition(".")
    try:
        if kind == "hybrid":
            params["parts"] = _parts(params, runtime)
        made = getattr(importlib.import_module(module), name)
        extra = [k for k in params if not accepts(made, k, unknown=True)]
        if extra:  # a key added with '+' that this retriever type does not take
            valid = [k for k in inspect.signature(made).parameters if k not in runtime]
            raise ConfigError(
                f"retriever '{cfg.get('name')}'{'' if kind == cfg.get('name') else f' ({kind})'} "
                f"has no setting '{extra[0]}'"
                f"{did_you_mean(extra[0], valid)}; its settings: {', '.join(valid)}"
            )
        retriever = made(**params, **(runtime if kind == "dense" else {}))
    except TypeError as exc:
        raise ConfigError(f"retriever '{cfg.get('name')}': {exc}") from None
    retriever.config = dict(cfg)  # what it was built from, for the result it makes
    return retriever


def _plugin(params: dict[str, Any], runtime: Mapping[str, Any]) -> Retriever:
    """`_target_: pkg.Class` with its keyword arguments; an encoder becomes a dense retriever."""
    target = str(params.pop("_target_"))
    params.pop("type", None)
    name = params.pop("name", None)
    cls = load_object(target)
    kwargs = dict(params)
    if name is not None and accepts(cls, "name"):
        kwargs["name"] = name
    try:
        obj = cls(**kwargs)
    except HarnessError:
        raise
    except Exception as exc:  # its arguments do not fit, or its own code failed
        raise ConfigError(f"retriever._target_={target}: cannot build it: {said(exc)}") from exc
    # the config's class and arguments name the model: its embeddings may be cached under them
    cache_id = f"{target}:{sorted(kwargs.items())!r}"
    return as_retriever(
        obj, name=name, runtime=runtime, where=f"retriever._target_={target}", cache_id=cache_id
    )


def load_object(target: str) -> Any:
    """The object a dotted path names (`my_pkg.module.Class`)."""
    module, _, attr = target.rpartition(".")
    if not module:
        raise ConfigError(
            f"retriever._target_ '{target}' must be a dotted path: my_pkg.MyRetriever"
        )
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(
            f"retriever._target_={target}: cannot import {module} ({exc}); install the package "
            "or run from the folder that holds it"
        ) from None
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise ConfigError(f"retriever._target_={target}: {module} has no '{attr}'") from None


def as_retriever(
    obj: Any,
    *,
    name: str | None = None,
    runtime: Mapping[str, Any] | None = None,
    where: str = "the retriever",
    **dense_options: Any,
) -> Retriever:
    """Whatever names a retriever, as one: a config name (conf/retriever/NAME.yaml), the path
    of a run file (TREC or JSON), an object implementing the protocol (index, search, name)
    as it is, an encoder wrapped in a dense retriever; else one error naming what is missing."""
    if isinstance(obj, (str, PurePath)):
        return _named_or_file(obj, name, runtime)
    if inspect.isclass(obj):
        raise ConfigError(
            f"{where}: {obj.__name__} is a class; pass an instance, {obj.__name__}(...)"
        )
    if is_encoder(obj) and not hasattr(obj, "search"):
        from retrievers.dense import Dense

        label = name or getattr(obj, "name", None) or type(obj).__name__
        return Dense.from_encoder(obj, name=str(label), **{**(runtime or {}), **dense_options})
    dense_options.pop("cache_id", None)  # names an encoder's embeddings; nothing to cache here
    if dense_options:
        raise ConfigError(f"{where}: options {sorted(dense_options)} apply to encoders only")
    if name is not None and not isinstance(getattr(obj, "name", None), str):
        try:
            obj.name = name
        except AttributeError:
            pass
    check_retriever(obj, where)
    return obj


def _named_or_file(given: str | PurePath, name: str | None, runtime) -> Retriever:
    """A retriever config by name, else the run file at that path; a word that is neither is
    the unknown-name error with its did-you-mean."""
    from pathlib import Path

    from harness.core.confs import named_config
    from harness.core.paths import group_options

    text = str(given)
    if isinstance(given, str) and text in group_options("retriever"):
        return build_retriever(
            named_config("retriever", text, {"name": name} if name else {}), runtime
        )
    path = Path(text).expanduser()
    if isinstance(given, str) and not path.is_file() and "/" not in text and "." not in text:
        named_config("retriever", text)  # raises: unknown retriever, with did-you-mean
    from retrievers.run_file import RunFile

    return RunFile(path=str(path), name=name)
