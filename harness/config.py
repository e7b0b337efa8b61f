"""Where the Hydra config tree lives, its schema, and checks on config-group choices."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from harness.errors import unknown_name


def conf_dir() -> Path:
    """The config tree: shipped inside the package when installed, else the repository's conf/."""
    installed = Path(__file__).parent / "conf"
    if (installed / "config.yaml").is_file():
        return installed
    return Path(__file__).resolve().parent.parent / "conf"


GROUPS = ("retriever", "corpus", "metrics")


def group_options(group: str) -> list[str]:
    """Names of the configs available in a config group (yaml stems)."""
    return sorted(p.stem for p in (conf_dir() / group).glob("*.yaml"))


def check_overrides(argv: Sequence[str]) -> None:
    """Fail early, with a did-you-mean, on an unknown config-group choice in the overrides."""
    for arg in argv:
        key, sep, value = arg.partition("=")
        group = key.lstrip("+~")
        if not sep or group not in GROUPS or "(" in value:
            continue
        options = group_options(group)
        for choice in value.split(","):
            if choice and choice not in options:
                raise unknown_name(
                    group, choice, options, f"add conf/{group}/{choice}.yaml or fix '{arg}'"
                )


@dataclass
class MetricsConf:
    names: list[str] = field(default_factory=lambda: ["coverage", "perfrecall", "ndcg", "mrr"])
    k: list[int] = field(default_factory=lambda: [5, 10])


@dataclass
class RetrievalConf:
    depth: int = 100


@dataclass
class ResultsConf:
    dir: str = "results"
    write: bool = True


@dataclass
class HarnessConf:
    """Top-level schema: a typo or wrong type in these keys fails at composition."""

    retriever: Any = MISSING
    corpus: Any = MISSING
    metrics: MetricsConf = field(default_factory=MetricsConf)
    retrieval: RetrievalConf = field(default_factory=RetrievalConf)
    results: ResultsConf = field(default_factory=ResultsConf)


def register() -> None:
    """Register the schema with Hydra's ConfigStore (config.yaml lists it first in defaults)."""
    ConfigStore.instance().store(name="harness_schema", node=HarnessConf)
