"""Metric names such as "coverage@10" or "map" parsed into metric objects; the registry lists
valid names, so error messages and docs never drift from what is computed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness.core.errors import ConfigError, did_you_mean
from harness.core.types import Query
from metrics import group, standard


@dataclass(frozen=True)
class Family:
    """A metric family (docs/metrics.md defines each). Group (RARE) families are computed by
    metrics.group, standard (trec_eval) ones by metrics.standard, corpus
    families (which read the chunks' text or dates) by metrics.answers; utility families need
    a generator and an NLI model, so harness.utility computes them and per_query takes them."""

    name: str
    kind: str  # "group" | "standard" | "corpus" | "utility"
    cut: bool = True  # evaluated at a cut-off K ("name@K"); False: the whole ranked list
    higher_is_better: bool = True
    binary: bool = False  # reads relevance as grade >= a level (the standard binary metrics)
    percent: bool = True  # a share, shown in percent; False: shown as it is (a mean rank)


@dataclass(frozen=True)
class Metric:
    """A family at a cut-off: hashable, printable as 'name@k' (or 'name' for uncut families).
    A binary standard metric at a relevance level other than 1 carries it in its name,
    'P(rel=2)@10' (as ir_measures writes it), so values at two levels never share a name."""

    family: Family
    k: int | None
    level: int = 1  # lowest grade counted as relevant; always 1 for non-binary families

    def __post_init__(self) -> None:
        if not self.family.binary and self.level != 1:
            object.__setattr__(self, "level", 1)

    @property
    def name(self) -> str:
        base = self.family.name if self.level == 1 else f"{self.family.name}(rel={self.level})"
        return base if self.k is None else f"{base}@{self.k}"

    def __call__(self, query: Query, ranked: Sequence[str]) -> float:
        """A group metric's value for one query (the others are computed in batch only)."""
        if self.family.kind != "group":
            raise TypeError(f"{self.name} is computed in batch by metrics.evaluate.per_query")
        key = (self.family.name, self.k)
        return group.evaluate([query.groups], [ranked], [key])[key][0]

    def __str__(self) -> str:
        return self.name


_GROUP = tuple(Family(n, "group") for n in ("coverage", "perfrecall", "ndcg", "mrr"))
_STANDARD = (
    Family("ndcg_cut", "standard"),  # graded gain, the ideal from every judged chunk
    *(Family(n, "standard", binary=True) for n in ("recall", "P", "map_cut")),
    Family("map", "standard", cut=False, binary=True),
    *(Family(n, "standard", binary=True) for n in ("recip_rank", "success")),
    Family("Rprec", "standard", cut=False, binary=True),
)
# Families that read the benchmark's chunks (text, dates), not only the gold: metrics.answers
_CORPUS = (
    Family("answer_recall", "corpus"),  # a top-K chunk's text holds an acceptable answer
    # the rank of the first chunk that holds one: a mean rank, lower is better
    Family("answer_rank", "corpus", cut=False, higher_is_better=False, percent=False),
    Family("outdated", "corpus", higher_is_better=False),  # outdated chunks in the top K / K
)
# Retrieval utility (SePer, docs/utility.md): a generator's belief in the reference answer with
# the top K in its prompt; computed by harness.utility (models), handed to per_query as values.
# dseper: the soft kernel; dseper_hard: answers clustered by bidirectional entailment.
_UTILITY = tuple(Family(n, "utility") for n in ("dseper", "dseper_hard", "seper"))
FAMILIES: dict[str, Family] = {
    f.name.lower(): f for f in (*_GROUP, *_STANDARD, *_CORPUS, *_UTILITY)
}
# every standard family has its formula in metrics.standard, and only those
if {f.name for f in _STANDARD} != set(standard.FORMULAS):
    raise RuntimeError("metrics.registry and metrics.standard.FORMULAS list different families")

# Other common spellings -> registry key. 'map@K' means map_cut@K.
ALIASES = {
    "ap": "map_cut",
    "rr": "recip_rank",
    "hit": "success",
    "hits": "success",
    "precision": "p",
    "r-precision": "rprec",
    "r_precision": "rprec",
    "rprecision": "rprec",
}

_NAME = re.compile(r"^([a-z_\-]+)(?:\(rel=(\d+)\))?(?:@(-?\d+))?$")


def parse_metric(text: str, level: int = 1) -> Metric:
    """Parse 'family@k' (or an uncut family's bare name) into a Metric; did-you-mean on typos.
    A binary metric is taken at `level` unless the name says its own ('P(rel=2)@10')."""
    raw = str(text).strip()
    m = _NAME.match(raw.lower())
    if not m:
        raise ConfigError(f"metric '{text}' is not of the form name@k (e.g. coverage@10 or map)")
    key, k = m.group(1), None if m.group(3) is None else int(m.group(3))
    if m.group(2) is not None:
        level = int(m.group(2))
        if level < 1:
            raise ConfigError(f"metric '{text}': the relevance level must be >= 1")
    key = ALIASES.get(key, key)
    if key == "map" and k is not None:
        key = "map_cut"
    if key not in FAMILIES:
        from harness.core.paths import group_options

        valid = [f.name for f in FAMILIES.values()]
        sets = ", ".join(group_options("metrics"))
        raise ConfigError(
            f"unknown metric '{m.group(1)}'{did_you_mean(m.group(1), [*FAMILIES, *ALIASES])}; "
            f"valid: {', '.join(valid)}; or a whole set by its config name ({sets})"
        )
    family = FAMILIES[key]
    if family.cut and k is None:
        raise ConfigError(f"metric '{text}' needs a cut-off: write it as name@k, e.g. {key}@10")
    if not family.cut and k is not None:
        raise ConfigError(f"metric '{text}': {family.name} reads the whole list; drop the @{k}")
    if k is not None and k <= 0:
        raise ConfigError(f"metric '{text}': K must be a positive integer")
    if m.group(2) is not None and not family.binary:
        raise ConfigError(
            f"metric '{text}': {family.name} does not use a relevance level; drop the (rel=...)"
        )
    return Metric(family, k, level)


def metrics_for(
    names: Sequence[str], ks: Sequence[int], depth: int, level: int = 1
) -> list[Metric]:
    """Every family in `names` at every K in `ks` (uncut families once; a name already written
    as 'name@k' as given), binary metrics at relevance `level` unless named with their own,
    ordered by K then family, uncut last; checks K against depth."""
    if not ks:
        raise ConfigError("metrics.k is empty; give at least one cut-off, e.g. metrics.k=[10]")
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise ConfigError(f"metrics.k must hold positive integers, got {k!r}")
    if not names:
        raise ConfigError("metrics.names is empty; e.g. metrics.names=[coverage,ndcg]")
    out: list[Metric] = []
    for name in names:
        if "@" in str(name):
            out.append(parse_metric(name, level))
            continue
        first = parse_metric(name if _is_uncut(name) else f"{name}@1", level)
        if first.family.cut:
            out += [Metric(first.family, k, first.level) for k in ks]
        else:
            out.append(first)
    largest = max(m.k for m in out if m.k is not None) if any(m.k for m in out) else 0
    if depth < largest:
        raise ConfigError(
            f"retrieval.depth={depth} is smaller than the largest K ({largest}); "
            f"raise retrieval.depth or drop that K"
        )
    return ordered(out)


def ordered(metrics: Sequence[Metric], registry_order: bool = False) -> list[Metric]:
    """Distinct metrics by K, then family (in order of first appearance, or of the registry:
    group metrics first), then level; uncut last."""
    unique = list(dict.fromkeys(metrics))
    order: dict[Family, int] = {}
    if registry_order:
        order = {f: i for i, f in enumerate(FAMILIES.values())}
    for m in unique:
        order.setdefault(m.family, len(order))
    return sorted(unique, key=lambda m: (m.k is None, m.k or 0, order[m.family], m.level))


def _is_uncut(name: str) -> bool:
    key = str(name).strip().lower()
    key = key.split("(rel=")[0]
    family = FAMILIES.get(ALIASES.get(key, key))
    return family is not None and not family.cut


def higher_is_better(name: str) -> bool:
    """Whether a larger value of the metric called `name` is better (outdated@K and
    answer_rank are not); a name the registry cannot parse counts as higher-is-better."""
    try:
        return parse_metric(name).family.higher_is_better
    except ConfigError:
        return True


def in_percent(name: str) -> bool:
    """Whether the metric called `name` is a share shown in percent (answer_rank, a mean
    rank, is not); a name the registry cannot parse counts as a share."""
    try:
        return parse_metric(name).family.percent
    except ConfigError:
        return True
