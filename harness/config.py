"""Where the Hydra config tree lives, its schema, and the checks run on command-line overrides."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import OverrideType
from omegaconf import MISSING, DictConfig

from harness.errors import ConfigError, did_you_mean, unknown_name


def conf_dir() -> Path:
    """The config tree: shipped inside the package when installed, else the repository's conf/."""
    installed = Path(__file__).parent / "conf"
    if (installed / "config.yaml").is_file():
        return installed
    return Path(__file__).resolve().parent.parent / "conf"


GROUPS = ("retriever", "corpus", "metrics", "extractor", "experiment")


def group_options(group: str) -> list[str]:
    """Names of the configs available in a config group (yaml stems)."""
    return sorted(p.stem for p in (conf_dir() / group).glob("*.yaml"))


# Hydra's own flags that take a value; and those after which no job runs, or that point
# Hydra at another config (the check below composes this package's config, so it stands aside).
_VALUE_FLAGS = {"--cfg", "-c", "--package", "-p"}
_UNCHECKED_FLAGS = {
    *("--help", "-h", "--hydra-help", "--version", "--shell-completion", "-sc", "--info", "-i"),
    *("--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd"),
    "--experimental-rerun",
}


def override_args(argv: Sequence[str]) -> list[str] | None:
    """The override arguments among Hydra's command line; None when they are not to be checked."""
    out: list[str] = []
    skip_next = False
    for arg in argv:
        if skip_next:
            skip_next = False
        elif arg.split("=")[0] in _UNCHECKED_FLAGS:
            return None
        elif arg in _VALUE_FLAGS:
            skip_next = True
        elif not arg.startswith("-"):
            out.append(arg)
    return out


_PREFIX = {OverrideType.ADD: "+", OverrideType.FORCE_ADD: "++", OverrideType.DEL: "~"}


def check_overrides(argv: Sequence[str]) -> None:
    """Fail early with one clear line on a bad override: an unknown group choice or key
    (with a did-you-mean), or a value of the wrong type. Sweeps are checked on every
    group choice and on the first value of every other key."""
    args = override_args(argv)
    if args is None:
        return
    try:
        parsed = OverridesParser.create().parse_overrides(args)
    except Exception as exc:  # Hydra's grammar errors
        raise ConfigError(f"cannot parse the overrides: {_one_line(exc)}") from None
    groups, others = [], []
    for o in parsed:
        key = o.key_or_group
        if key == "hydra/launcher" and o.type != OverrideType.DEL:
            options = sorted({"basic", *group_options("hydra/launcher")})
            choice = o.get_value_element_as_str()
            if choice not in options:
                raise unknown_name("hydra/launcher", choice, options, f"fix '{o.input_line}'")
        if key.split(".")[0].split("/")[0] == "hydra":
            continue
        values = list(o.sweep_string_iterator()) if o.is_sweep_override() else None
        if key in GROUPS and o.type != OverrideType.DEL:
            options = group_options(key)
            for choice in values or [o.get_value_element_as_str()]:
                if choice not in options:
                    raise unknown_name(
                        key,
                        choice,
                        options,
                        f"add conf/{key}/{choice}.yaml or fix '{o.input_line}'",
                    )
        first = f"{_PREFIX.get(o.type, '')}{key}={values[0]}" if values else o.input_line
        (groups if key in GROUPS else others).append((o, first))
    register()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        try:
            compose(config_name="config", overrides=[f for _, f in groups + others])
            return
        except Exception as exc:  # OmegaConf validation errors, wrapped by Hydra
            failure = _one_line(exc)
        # Only on failure: compose the group choices alone to name an unknown key precisely.
        try:
            base = compose(config_name="config", overrides=[f for _, f in groups])
        except Exception:
            raise ConfigError(failure) from None
        for o, _ in others:
            if o.type == OverrideType.CHANGE:
                _check_key(base, o.key_or_group)
    raise ConfigError(failure)


def _check_key(cfg: DictConfig, dotted: str) -> None:
    node: Any = cfg
    walked: list[str] = []
    for part in dotted.split("."):
        # keys(), not `in`: OmegaConf's `in` is False for a key whose value is ??? (missing).
        if not isinstance(node, DictConfig) or part not in node.keys():
            where = ".".join(walked)
            valid = list(node.keys()) if isinstance(node, DictConfig) else []
            raise ConfigError(
                f"unknown config key '{dotted}'{did_you_mean(part, valid)}; "
                f"keys under {where or 'the top level'}: {', '.join(map(str, valid)) or 'none'}; "
                f"use +{dotted}=... to add a new key"
            )
        node = node._get_node(part)  # the node itself: reading a ??? value would raise
        walked.append(part)


def _one_line(exc: Exception) -> str:
    """Hydra/OmegaConf messages span lines of detail; keep the informative ones, joined."""
    skip = ("full_key", "reference_type", "object_type", "Set the environment variable")
    lines: list[str] = []
    while exc is not None:
        lines += [ln.strip() for ln in str(exc).splitlines()]
        exc = exc.__cause__
    return "; ".join(dict.fromkeys(ln for ln in lines if ln and not ln.startswith(skip)))


@dataclass
class MetricsConf:
    names: list[str] = field(default_factory=lambda: ["coverage", "perfrecall", "ndcg", "mrr"])
    k: list[int] = field(default_factory=lambda: [5, 10])
    relevance_level: int = 1


@dataclass
class StatsConf:
    bootstrap: int = 1000  # resamples for the CI of every mean in metrics.json; 0 = none
    confidence: float = 0.95
    seed: int = 0


@dataclass
class RetrievalConf:
    depth: int = 100


@dataclass
class ResultsConf:
    dir: str = "results"
    write: bool = True


@dataclass
class StrataConf:
    mode: str = "auto"  # auto: use the strata file if it exists; build: build it if missing; off
    dir: str = "${results.dir}/strata"
    embedder: str = "minilm"  # a dense retriever config, used to embed entities
    resolution: float = 1.0  # Leiden γ
    k: int = 50
    tau: float = 0.5
    seed: int = 0
    min_queries: int = 5  # the worst cluster is taken among clusters with this many queries
    scc_min: int = 5  # SCC counts chunks of clusters touched by more than this many queries


@dataclass
class HarnessConf:
    """Top-level schema: a typo or wrong type in these keys fails at composition."""

    retriever: Any = MISSING
    corpus: Any = MISSING
    extractor: Any = MISSING
    strata: StrataConf = field(default_factory=StrataConf)
    metrics: MetricsConf = field(default_factory=MetricsConf)
    retrieval: RetrievalConf = field(default_factory=RetrievalConf)
    results: ResultsConf = field(default_factory=ResultsConf)
    stats: StatsConf = field(default_factory=StatsConf)
    device: Any = "auto"  # auto | cpu | cuda | cuda:N | [cuda:0, cuda:1] (dense encoders)
    cache: bool = True  # embedding cache for dense retrievers
    cache_dir: str | None = None  # null: $HARNESS_CACHE_DIR/embeddings or ~/.cache/...
    force: bool = False  # recompute a cell even when results/ has it with the same config


def register() -> None:
    """Register the schema with Hydra's ConfigStore (config.yaml lists it first in defaults)."""
    ConfigStore.instance().store(name="harness_schema", node=HarnessConf)
