"""Retrieval evaluation harness: redundancy-aware and trec_eval metrics, stratified reports.

    import harness
    bench = harness.load_benchmark("general-wiki")
    ev = harness.evaluate(bench, harness.get_retriever("bm25"))
    ev.summary            # pandas DataFrame: stratum x metric, with n and CI columns

Importing this package loads neither torch nor Hydra; each name below is imported on first use.
"""

from __future__ import annotations

import sys as _sys
import types as _types
import warnings as _warnings
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Benchmark",
    "Evaluation",
    "Experiment",
    "HarnessError",
    "Query",
    "Run",
    "compare",
    "evaluate",
    "get_retriever",
    "load_benchmark",
]

# name -> (module, attribute): resolved lazily by __getattr__ (PEP 562)
_LAZY = {
    "Benchmark": ("harness.core.types", "Benchmark"),
    "Query": ("harness.core.types", "Query"),
    "Run": ("harness.core.run", "Run"),
    "HarnessError": ("harness.core.errors", "HarnessError"),
    "load_benchmark": ("harness.api.loading", "load_benchmark"),
    "get_retriever": ("harness.api.loading", "get_retriever"),
    "evaluate": ("harness.api.evaluation", "evaluate"),
    "Evaluation": ("harness.api.evaluation", "Evaluation"),
    "Experiment": ("harness.api.experiment", "Experiment"),
    "compare": ("harness.api.comparison", "compare"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'harness' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])


class _Package(_types.ModuleType):
    """The package's module type: importing a submodule whose name is also an API name
    (`import harness.compare`, the `python -m harness.compare` starter) does not rebind that
    name, so `harness.compare` stays the function whatever was imported before."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


if TYPE_CHECKING:  # for type checkers and IDEs; at run time __getattr__ does the work
    from harness.api.comparison import compare
    from harness.api.evaluation import Evaluation, evaluate
    from harness.api.experiment import Experiment
    from harness.api.loading import get_retriever, load_benchmark
    from harness.core.errors import HarnessError
    from harness.core.run import Run
    from harness.core.types import Benchmark, Query

# conf/hydra/launcher/{joblib,submitit_*}.yaml spell out the launcher plugins' settings under
# the plugins' own names (so `hydra/launcher=joblib` picks ours); Hydra 1.3 then warns on
# every job that the file matches a ConfigStore schema of the same name. It is intended.
_warnings.filterwarnings(
    "ignore", message=r"\s*'hydra/launcher/\w+' is validated against ConfigStore schema"
)
