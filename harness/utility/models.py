"""Building the utility estimator's models (harness.utility.protocols) from a ModelSpec.

Models are built lazily: a run whose generations and entailments are all cached builds none
(`Lazy`); a model object handed in is used as it is (`Given`)."""

from __future__ import annotations

import importlib
from typing import Any

from harness.core.errors import ConfigError, HarnessError
from harness.utility.protocols import METHODS, SIGNATURES
from harness.utility.spec import ModelSpec


def spec_identity(spec: ModelSpec) -> dict[str, Any]:
    """The identity of the model `spec` builds, known without building it: for transformers
    models the resolved dtype (auto is bf16 on CUDA, fp32 on the CPU) and a local folder's
    path, which change the numbers; for a custom class its target and options (the object's
    own identity() would need it built)."""
    if spec.backend == "hf":
        from harness.utility.hf import hf_identity

        return hf_identity(spec)
    return spec.identity()


def build(spec: ModelSpec, role: str, where: str) -> Any:
    """The generator (`role` "generator") or NLI model ("nli") that `spec` describes."""
    if spec.backend == "hf":
        from harness.utility.hf import HFNLI, HFGenerator

        return (HFGenerator if role == "generator" else HFNLI)(spec, where)
    if spec.backend == "openai":
        from harness.utility.openai import OpenAIGenerator

        return OpenAIGenerator(spec, where)
    return build_custom(spec, role, where)


def target_class(spec: ModelSpec, where: str) -> type:
    """The class `spec.target` ("pkg.module.Class") names, imported, not built."""
    module_name, _, class_name = str(spec.target).rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"{where}.target {spec.target}: cannot import {module_name} ({exc}); check the "
            f"name, and that the package is installed or on PYTHONPATH"
        ) from None
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ConfigError(f"{where}.target {spec.target}: {module_name} has no {class_name}")
    return cls


def build_custom(spec: ModelSpec, role: str, where: str) -> Any:
    """Import `spec.target` and build it with `spec.options`."""
    cls = target_class(spec, where)
    try:
        obj = cls(**dict(spec.options))
    except TypeError as exc:
        raise ConfigError(
            f"{where}.target {spec.target} does not take {where}.options "
            f"{sorted(spec.options)}: {exc}"
        ) from None
    if not any(callable(getattr(obj, m, None)) for m in METHODS[role]):
        raise ConfigError(
            f"{where}.target {spec.target} has no {METHODS[role][0]}() method; a {role} needs "
            f"{SIGNATURES[role]}"
        )
    return obj


class Lazy:
    """A model that is built on first use. `identity()` never builds it; `get()` does, once,
    and records its name in `loaded`."""

    def __init__(self, spec: ModelSpec, role: str, where: str, loaded: list[str]):
        self.spec, self.role, self.where, self.loaded = spec, role, where, loaded
        self._identity: dict | None = None
        self._obj: Any = None

    def identity(self) -> dict:
        if self._identity is None:
            self._identity = spec_identity(self.spec)
        return self._identity

    def get(self) -> Any:
        if self._obj is None:
            self._obj = build(self.spec, self.role, self.where)
            custom = self.spec.backend == "custom"
            self.loaded.append(str(self.spec.target if custom else self.spec.model))
        return self._obj


class Given:
    """A model object handed in (tests, the API): its own identity."""

    def __init__(self, obj: Any, role: str):
        if isinstance(obj, type):
            raise HarnessError(
                f"the {role} passed in is the class {obj.__name__}, not an object of it; pass "
                f"{obj.__name__}(...)"
            )
        does = any(callable(getattr(obj, m, None)) for m in METHODS[role])
        if not (does and callable(getattr(obj, "identity", None))):
            raise HarnessError(
                f"the {role} passed in ({type(obj).__name__}) needs {SIGNATURES[role]}"
            )
        self.obj = obj
        self._identity = obj.identity()

    def identity(self) -> dict:
        return self._identity

    def get(self) -> Any:
        return self.obj


def model_of(obj: Any, spec: ModelSpec, role: str, where: str, loaded: list[str]):
    """The object handed in (`Given`), else the model `spec` describes, built on first use."""
    return Given(obj, role) if obj is not None else Lazy(spec, role, where, loaded)
