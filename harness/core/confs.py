"""The config schema (Hydra structured configs) and the named configs of conf/
(conf/<group>/<name>.yaml), for the Python API and for commands that pick a config by name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.core.errors import unknown_name
from harness.core.paths import conf_dir, group_options

APPENDED = frozenset({"utility", "rag"})  # config groups a run adds with '+group=name'
MISSING = "???"  # OmegaConf's mandatory value (omegaconf.MISSING), without importing it here


def named_config(group: str, name: str, overrides: Mapping[str, Any] | None = None) -> dict:
    """conf/<group>/<name>.yaml as Hydra composes it (its defaults list included), as a plain
    dict, with `overrides` merged in (nested dicts key by key)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    if name not in group_options(group):
        raise unknown_name(group, name, group_options(group), f"add conf/{group}/{name}.yaml")
    from hydra.core.global_hydra import GlobalHydra

    register()
    # a group config.yaml's defaults list lacks is appended to it ('+utility=seper')
    choice = f"{'+' if group in APPENDED else ''}{group}={name}"
    if GlobalHydra.instance().is_initialized():  # inside a Hydra app: compose in its context
        cfg = compose(config_name="config", overrides=[choice])
    else:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
            cfg = compose(config_name="config", overrides=[choice])
    base = cfg[group]
    if "_target_" not in base.keys():  # a plug-in's own arguments are new keys
        check_settings(group, name, overrides or {}, [str(k) for k in base.keys()])
    OmegaConf.set_struct(base, False)
    node = OmegaConf.merge(base, OmegaConf.create(dict(overrides or {})))
    return OmegaConf.to_container(node, resolve=True)


def check_settings(group: str, name: str, given: Mapping[str, Any], valid: list[str]) -> None:
    """Refuse a setting conf/<group>/<name>.yaml does not have, with a did-you-mean."""
    for key in given:
        if key not in valid:
            from harness.core.errors import ConfigError, did_you_mean

            raise ConfigError(
                f"unknown {group} setting '{key}' for '{name}'{did_you_mean(str(key), valid)}; "
                f"settings: {', '.join(valid)}"
            )


@dataclass
class MetricsConf:
    names: list[str] = field(
        default_factory=lambda: ["coverage", "perfrecall", "group_ndcg", "group_mrr"]
    )
    k: list[int] = field(default_factory=lambda: [5, 10])
    relevance_level: int = 1
    # a judged query without a relevant document: skip (left out of the standard metrics'
    # means) | zero (scores 0, as trec_eval and ir_measures count it); docs/metrics.md
    no_relevant: str = "skip"


@dataclass
class StatsConf:
    bootstrap: int = 1000  # resamples for the CI of every mean in metrics.json; 0 = none
    confidence: float = 0.95
    seed: int = 0


@dataclass
class RetrievalConf:
    depth: int = 100  # ranked list length per query (RARE used 10; @K metrics read the top K)


@dataclass
class RunConf:
    # ranked chunk ids the corpus lacks (run files, plug-ins): keep (at their rank,
    # non-relevant, as trec_eval) | drop (removed, later ranks move up)
    unknown_ids: str = "keep"


@dataclass
class ResultsConf:
    dir: str = "results"  # cells go to <dir>/<corpus.name>/<cell name>/
    write: bool = True


@dataclass
class StrataConf:
    mode: str = "auto"  # auto: use the strata file if it exists; build: build it if missing; off
    dir: str = "${results.dir}/strata"
    embedder: str = "minilm"  # a dense retriever config, used to embed entities
    resolution: float = 1.0  # Leiden resolution γ (higher: more, smaller clusters)
    k: int = 50  # neighbours per entity in the entity graph
    tau: float = 0.5  # least cosine for an edge, and for a query entity to map to a cluster
    seed: int = 0
    min_queries: int = 5  # the worst cluster is taken among clusters with this many queries
    scc_min: int = 5  # SCC counts chunks of clusters touched by more than this many queries
    permutations: int = 1000  # random partitions behind VRR's chance level; 0 = none
    min_cluster_entities: int = 2  # smaller clusters leave MSC, SCC, ZQC and cluster counts
    fields: list[str] = field(default_factory=list)  # query fields reported like hop


def sections_chosen(group: str, name: str) -> dict[str, str]:
    """The config sections conf/<group>/<name>.yaml adds through its defaults list, with the
    option of each ({"rag": "garage"} for metrics=garage: `/rag@_global_.rag: garage`)."""
    import re

    from omegaconf import OmegaConf

    raw = OmegaConf.to_container(OmegaConf.load(conf_dir() / group / f"{name}.yaml"))
    out = {}
    for entry in raw.get("defaults") or []:
        for key, option in entry.items() if isinstance(entry, dict) else ():
            m = re.fullmatch(r"/(\w+)@_global_\.(\w+)", key)
            if m and m.group(1) == m.group(2):
                out[m.group(1)] = str(option)
    return out


def _garage_grades() -> dict[str, int]:
    return {
        "ANSWER-THE-QUESTION": 2,
        "RELATED": 1,
        "RELATED-INFORMATION": 1,
        "OUTDATED": 1,
        "UNKNOWN": 1,
        "IRRELEVANT": 0,
    }


@dataclass
class RelevanceConf:
    """Named labels and dated relevance (harness.data.relevance; docs/protocols.md)."""

    # label -> grade (GaRAGe's labels); a label the data uses must be listed
    grades: dict[str, int] = field(default_factory=_garage_grades)
    dynamism_field: str = "dynamism"  # the query field saying how fast the answer changes
    # for these values an outdated passage counts as non-relevant (grade 0)
    outdated_for: list[str] = field(default_factory=lambda: ["fast"])
    # passages older than the question by more than this are outdated
    max_age_days: dict[str, int] = field(default_factory=lambda: {"fast": 7})
    # what unanswerable queries' top K is checked for
    distractors: list[str] = field(
        default_factory=lambda: ["RELATED", "RELATED-INFORMATION", "OUTDATED"]
    )


@dataclass
class HarnessConf:
    """Top-level schema: a typo or wrong type in these keys fails at composition."""

    retriever: Any = MISSING
    corpus: Any = MISSING
    extractor: Any = MISSING
    strata: StrataConf = field(default_factory=StrataConf)
    metrics: MetricsConf = field(default_factory=MetricsConf)
    retrieval: RetrievalConf = field(default_factory=RetrievalConf)
    run: RunConf = field(default_factory=RunConf)
    relevance: RelevanceConf = field(default_factory=RelevanceConf)
    results: ResultsConf = field(default_factory=ResultsConf)
    stats: StatsConf = field(default_factory=StatsConf)
    utility: Any = None  # ΔSePer's generator and NLI model: +utility=seper (conf/utility/)
    rag: Any = None  # end-to-end RAG's generator and judge: +rag=e2e (conf/rag/)
    device: Any = "auto"  # auto | cpu | cuda | cuda:N | [cuda:0, cuda:1] (dense encoders)
    cache: bool = True  # embedding cache for dense retrievers; false: encode everything afresh
    cache_dir: str | None = None  # null: $HARNESS_CACHE_DIR/embeddings or ~/.cache/...
    force: bool = False  # recompute a cell even when results/ has it with the same config
    report: str = "short"  # what a run prints: short (main table) | full (+ VRR, clusters, ...)


def runtime_of(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The run-wide settings dense encoders read (device, cache, cache_dir), the schema's
    default where `cfg` lacks one."""
    return {k: cfg.get(k, getattr(HarnessConf, k)) for k in ("device", "cache", "cache_dir")}


def schema_defaults() -> dict[str, Any]:
    """Every default setting, from the schema above (the one place they are written), as a
    plain dict; the groups a run chooses (retriever, corpus, extractor) are left out."""
    out = asdict(HarnessConf())  # a fresh copy; OmegaConf's would cost a hundred times more
    out["strata"]["dir"] = out["strata"]["dir"].replace("${results.dir}", out["results"]["dir"])
    return {k: v for k, v in out.items() if v != MISSING}


def register() -> None:
    """Register the schema with Hydra's ConfigStore (config.yaml lists it first in defaults)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="harness_schema", node=HarnessConf)
