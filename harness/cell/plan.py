"""A cell's settings, parsed and checked once where a command starts: what the rest of the
code receives instead of the raw config dict."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cell.sections import SECTIONS, checked_sections
from harness.core.confs import runtime_of
from harness.core.errors import POSITIVE, ConfigError, check_flag, check_int
from harness.core.run.files import check_unknown_ids
from harness.data.relevance import RelevanceSpec
from metrics.evaluate import BootstrapSpec
from metrics.registry import Metric, metrics_for
from metrics.stats import min_resamples
from metrics.strata_stats import StrataSpec

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class CellPlan:
    """Everything one (retriever, corpus) cell is computed from."""

    config: dict[str, Any]  # the resolved config the cell depends on (stored in metrics.json)
    retriever: Mapping[str, Any]
    corpus: Mapping[str, Any]
    metrics: tuple[Metric, ...]
    relevance_level: int
    no_relevant: str  # "skip" | "zero": a judged query without a relevant document
    depth: int
    bootstrap: BootstrapSpec | None
    results_dir: Path
    write: bool
    force: bool
    runtime: dict[str, Any]  # device, cache, cache_dir (core.confs.runtime_of)
    semantic: bool  # the config names strata settings and an extractor
    strata: StrataSpec  # how strata are reported
    unknown_ids: str = "keep"  # run.unknown_ids: how run ids the corpus lacks are scored
    relevance: RelevanceSpec = RelevanceSpec()  # labels and dates -> grades (data.relevance)
    fields: tuple[str, ...] = ()  # strata.fields: query fields reported like hop
    # the checked sections whose metrics a model computes (harness.cell.sections), by key
    sections: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any]) -> CellPlan:
        """Check a resolved config (a dict) and make the plan; bad values raise ConfigError."""
        force = check_flag(cfg.get("force", False), "force")
        # how a run is started and shown is not what a cell depends on
        config = {k: v for k, v in cfg.items() if k not in ("force", "report")}
        for section in SECTIONS:  # the schema's empty default: a cell without it
            if config.get(section.key) is None:
                config.pop(section.key, None)
        if config["retriever"].get("type") == "run_file" and "_target_" not in config["retriever"]:
            from retrievers.run_file import pinned

            config["retriever"] = pinned(config["retriever"])
        depth = config["retrieval"]["depth"]
        if isinstance(depth, bool) or not isinstance(depth, int) or depth <= 0:
            raise ConfigError(f"retrieval.depth must be a positive integer, got {depth!r}")
        level = config["metrics"].get("relevance_level", 1)
        check_int(level, "metrics.relevance_level")
        metrics = metrics_for(config["metrics"]["names"], config["metrics"]["k"], depth, level)
        no_relevant = config["metrics"].get("no_relevant", "skip")
        if no_relevant not in NO_RELEVANT:
            raise ConfigError(
                f"metrics.no_relevant is {no_relevant!r}; valid: skip (a judged query without a "
                "relevant document is left out of the means, the default), zero (it scores 0, "
                "as trec_eval and ir_measures count it)"
            )
        run = config.get("run") or {}
        if not isinstance(run, Mapping):
            raise ConfigError(f"run must be a section (run.unknown_ids=keep|drop), got {run!r}")
        unknown_ids = check_unknown_ids(run.get("unknown_ids", "keep"))
        config["run"] = {**run, "unknown_ids": unknown_ids}  # recorded, so reruns can compare
        runtime = runtime_of(config)
        from retrievers.encoders import parse_devices  # checked even where no model runs

        parse_devices(runtime["device"])
        results = config["results"]
        if not isinstance(results.get("dir"), str) or not results["dir"].strip():
            raise ConfigError(
                f"results.dir is {results.get('dir')!r}; give the folder cells go to "
                "(default: results)"
            )
        check_flag(results.get("write", True), "results.write")
        return cls(
            config=config,
            retriever=config["retriever"],
            corpus=config["corpus"],
            metrics=tuple(metrics),
            relevance_level=level,
            no_relevant=no_relevant,
            depth=depth,
            bootstrap=bootstrap_spec(config.get("stats") or {}),
            results_dir=Path(config["results"]["dir"]).expanduser(),
            write=bool(config["results"]["write"]),
            force=force,
            runtime=runtime,
            semantic=bool(config.get("strata") and config.get("extractor")),
            strata=strata_spec(config.get("strata") or {}, config.get("stats") or {}),
            unknown_ids=unknown_ids,
            relevance=RelevanceSpec.from_config(config.get("relevance")),
            fields=strata_fields((config.get("strata") or {}).get("fields")),
            sections=checked_sections(config, metrics),
        )

    @classmethod
    def from_settings(
        cls,
        retriever: Mapping[str, Any],
        corpus: Mapping[str, Any],
        settings: Mapping[str, Any],
        sections: Mapping[str, Any] | None = None,
    ) -> CellPlan:
        """The plan of a cell the Python API scores: the schema's defaults
        (harness.core.confs.schema_defaults), `settings` (API keyword -> value, None: the
        default; keywords in API_KEYS) and whole `sections` (e.g. `utility`) over them. Never
        writes (results.write is false)."""
        from harness.core.confs import schema_defaults

        config = schema_defaults()
        for keyword, value in settings.items():
            if value is not None:
                section, key = API_KEYS[keyword]
                config[section][key] = list(value) if isinstance(value, tuple) else value
        if sections:  # merged key by key, as Hydra merges `relevance.grades.X=0`
            from omegaconf import OmegaConf

            merged = OmegaConf.merge(OmegaConf.create(config), OmegaConf.create(dict(sections)))
            config = OmegaConf.to_container(merged)
        config["retriever"], config["corpus"] = dict(retriever), dict(corpus)
        config["results"]["write"] = False
        try:
            return cls.from_config(config)
        except ConfigError as exc:  # name the keyword the caller wrote, not its config key
            raise type(exc)(api_words(str(exc))) from None

    def with_depth(self, depth: int) -> CellPlan:
        """The same plan retrieving (or reading) `depth` results per query."""
        config = dict(self.config, retrieval={**self.config["retrieval"], "depth": depth})
        return CellPlan.from_config(config | {"force": self.force})

    @property
    def metric_names(self) -> list[str]:
        return [m.name for m in self.metrics]


NO_RELEVANT = ("skip", "zero")
# harness.evaluate's keywords that set a config key: keyword -> (section, key)
API_KEYS = {
    "names": ("metrics", "names"),
    "k": ("metrics", "k"),
    "relevance_level": ("metrics", "relevance_level"),
    "no_relevant": ("metrics", "no_relevant"),
    "depth": ("retrieval", "depth"),
    "bootstrap": ("stats", "bootstrap"),
    "confidence": ("stats", "confidence"),
    "seed": ("stats", "seed"),
    "min_queries": ("strata", "min_queries"),
    "permutations": ("strata", "permutations"),
    "fields": ("strata", "fields"),
    "unknown_ids": ("run", "unknown_ids"),
}


def api_words(message: str) -> str:
    """A config error as the Python API's caller reads it: `metrics.k` is the keyword `k`,
    `metrics.names` the keyword `metrics` (harness.evaluate's and Experiment's)."""
    for keyword, (section, key) in API_KEYS.items():
        name = "metrics" if keyword == "names" else keyword
        message = re.sub(rf"(?<![\w.]){section}\.{key}(?![\w.])", name, message)
    return message


def strata_spec(strata: Mapping[str, Any], stats: Mapping[str, Any]) -> StrataSpec:
    """The reporting settings of `strata.*` (defaults where absent), checked."""
    spec = StrataSpec()
    values = {k: strata.get(k, getattr(spec, k)) for k in spec.as_config()}
    for key, value in values.items():
        low = 0 if key == "permutations" else 1
        # a Python int only: the value stays in the cell's recorded config
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            what = "an integer >= 0 (0 = no chance level)" if low == 0 else POSITIVE
            raise ConfigError(f"strata.{key} must be {what}, got {value!r}")
    if values["permutations"] > 1_000_000:
        raise ConfigError(
            f"strata.permutations is {values['permutations']}; at most 1000000 (1000 gives "
            f"p-values to about 0.001)"
        )
    seed = stats.get("seed", 0)
    return StrataSpec(seed=seed if isinstance(seed, int) else 0, **values)


def strata_fields(value: Any) -> tuple[str, ...]:
    """`strata.fields`: the query fields to report like hop (checked against the data when
    the strata are made)."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(f, str) and f for f in value):
        raise ConfigError(
            f"strata.fields must list query field names, e.g. [dynamism,popularity]; got {value!r}"
        )
    return tuple(value)


def bootstrap_spec(stats: Mapping[str, Any]) -> BootstrapSpec | None:
    """The CI settings (`stats.*`); None when stats.bootstrap is 0."""
    samples = stats.get("bootstrap", 1000)
    confidence = stats.get("confidence", 0.95)
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 0:
        raise ConfigError(f"stats.bootstrap must be an integer >= 0 (0 = no CIs), got {samples!r}")
    if not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ConfigError(f"stats.confidence must be between 0 and 1, got {confidence!r}")
    if 0 < samples < min_resamples(confidence):
        raise ConfigError(
            f"stats.bootstrap is {samples}: a {confidence * 100:g}% interval needs at least "
            f"{min_resamples(confidence)} resamples (1000 is the default); 0 turns CIs off"
        )
    if samples > 1_000_000:
        raise ConfigError(
            f"stats.bootstrap is {samples}; at most 1000000 resamples (10000 gives CIs stable "
            f"to the third digit)"
        )
    seed = stats.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ConfigError(f"stats.seed must be an integer in [0, 2^32), got {seed!r}")
    if samples == 0:
        return None
    return BootstrapSpec(samples, float(confidence), seed)


def check_name(key: str, name: str) -> None:
    """A name that becomes a results folder: letters, digits, '.', '_' and '-'."""
    if not isinstance(name, str) or not _SAFE_NAME.match(name):
        raise ConfigError(
            f"{key} '{name}' cannot name a results folder; use letters, digits, '.', '_' and '-'"
        )
