"""Metric names such as "coverage@10" or "map" parsed into metric objects; the registry lists
valid names, so error messages and docs never drift from what is computed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness.core.errors import ConfigError, did_you_mean
from harness.core.types import Query
from metrics import group, standard


class AmbiguousMetric(ConfigError):
    """A metric name two communities read differently (ndcg@10, MRR@10)."""


@dataclass(frozen=True)
class Family:
    """A metric family (docs/metrics.md defines each). Group (RARE) families are computed by
    metrics.group, standard (trec_eval) ones by metrics.standard, corpus
    families (which read the chunks' text or dates) by metrics.answers; utility families need
    a generator and an NLI model, so harness.utility computes them and per_query takes them.
    `name` is the internal key the kernels use; `label` is how results print it."""

    name: str
    kind: str  # "group" | "standard" | "corpus" | "utility"
    label: str = ""  # the printed prefix: ir_measures' name for a standard family
    cut: str = "required"  # "required": name@K; "none": the whole list; "optional": either
    higher_is_better: bool = True
    binary: bool = False  # reads relevance as grade >= a level (the standard binary metrics)
    percent: bool = True  # a share, shown in percent; False: shown as it is (a mean rank)

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.name)


@dataclass(frozen=True)
class Metric:
    """A family at a cut-off (None: the whole ranked list): hashable, printed as ir_measures
    prints the measure ('nDCG@10', 'AP', 'R@100', 'P(rel=2)@10') or, for this harness's own
    families, 'coverage@10'. A binary metric at a relevance level other than 1 carries it in
    its name, so values at two levels never share a name."""

    family: Family
    k: int | None
    level: int = 1  # lowest grade counted as relevant; always 1 for non-binary families

    def __post_init__(self) -> None:
        if not self.family.binary and self.level != 1:
            object.__setattr__(self, "level", 1)

    @property
    def name(self) -> str:
        base = self.family.label if self.level == 1 else f"{self.family.label}(rel={self.level})"
        return base if self.k is None else f"{base}@{self.k}"

    def __call__(self, query: Query, ranked: Sequence[str]) -> float:
        """A group metric's value for one query (the others are computed in batch only)."""
        if self.family.kind != "group":
            raise TypeError(f"{self.name} is computed in batch by metrics.evaluate.per_query")
        key = (self.family.name, self.k)
        return group.evaluate([query.groups], [ranked], [key])[key][0]

    def __str__(self) -> str:
        return self.name


_GROUP = tuple(Family(n, "group") for n in ("coverage", "perfrecall", "group_ndcg", "group_mrr"))
_STANDARD = (
    # graded gain, the ideal from every judged chunk; uncut: trec_eval's ndcg
    Family("ndcg", "standard", "nDCG", cut="optional"),
    Family("recall", "standard", "R", binary=True),
    Family("P", "standard", "P", binary=True),
    Family("map", "standard", "AP", cut="optional", binary=True),  # map, map_cut
    Family("recip_rank", "standard", "RR", cut="optional", binary=True),
    Family("success", "standard", "Success", binary=True),
    Family("Rprec", "standard", "Rprec", cut="none", binary=True),
    # judged non-relevant chunks ranked above each relevant one (unjudged ones are skipped)
    Family("bpref", "standard", "Bpref", cut="none", binary=True),
)
# Families that read the benchmark's chunks (text, dates), not only the gold: metrics.answers
_CORPUS = (
    Family("answer_recall", "corpus"),  # a top-K chunk's text holds an acceptable answer
    # the rank of the first chunk that holds one: a mean rank, lower is better
    Family("answer_rank", "corpus", cut="none", higher_is_better=False, percent=False),
    Family("outdated", "corpus", higher_is_better=False),  # outdated chunks in the top K / K
)
# Retrieval utility (SePer, docs/utility.md): a generator's belief in the reference answer with
# the top K in its prompt; computed by harness.utility (models), handed to per_query as values.
# dseper: the soft kernel; dseper_hard: answers clustered by bidirectional entailment.
_UTILITY = tuple(Family(n, "utility") for n in ("dseper", "dseper_hard", "seper"))
FAMILIES: dict[str, Family] = {f.name: f for f in (*_GROUP, *_STANDARD, *_CORPUS, *_UTILITY)}
# every standard family has its formula in metrics.standard, and only those
if {f.name for f in _STANDARD} != set(standard.FORMULAS):
    raise RuntimeError("metrics.registry and metrics.standard.FORMULAS list different families")

# The names people type -> (family, what the bare name means: "all" = the whole list,
# "each" = the family at every K of metrics.k). ir_measures' names mean what ir_measures
# means (nDCG and AP bare: the whole list); trec_eval's families (ndcg_cut, P, recall,
# map_cut, success) expand over metrics.k as `trec_eval -m P` expands over its cut-offs.
SPELLINGS: dict[str, tuple[str, str]] = {
    **{f.name: (f.name, "all" if f.cut == "none" else "each") for f in (*_GROUP, *_CORPUS)},
    **{f.name: (f.name, "each") for f in _UTILITY},
    # ir_measures
    "nDCG": ("ndcg", "all"),
    "AP": ("map", "all"),
    "MAP": ("map", "all"),
    "P": ("P", "each"),
    "R": ("recall", "each"),
    "Recall": ("recall", "each"),
    "RR": ("recip_rank", "all"),
    "Rprec": ("Rprec", "all"),
    "RPrec": ("Rprec", "all"),
    "Success": ("success", "each"),
    "Bpref": ("bpref", "all"),
    # trec_eval
    "ndcg_cut": ("ndcg", "each"),
    "recall": ("recall", "each"),
    "map": ("map", "all"),
    "map_cut": ("map", "each"),
    "recip_rank": ("recip_rank", "all"),
    "success": ("success", "each"),
    # other common spellings
    "hit": ("success", "each"),
    "hits": ("success", "each"),
    "precision": ("P", "each"),
    "r-precision": ("Rprec", "all"),
    "r_precision": ("Rprec", "all"),
}
_FOLDED = {s.lower(): v for s, v in SPELLINGS.items()}
if len({(s.lower(), v) for s, v in SPELLINGS.items()}) != len(_FOLDED):
    raise RuntimeError("two metric spellings differ only in case but mean different things")
# trec_eval's names with the cut-off in them: ndcg_cut_10, ndcg_cut.10, P_10, recall_100
_TREC_CUT = {
    "ndcg_cut": "ndcg",
    "p": "P",
    "recall": "recall",
    "map_cut": "map",
    "success": "success",
}
# Names two communities read differently: refused, with both readings (docs/metrics.md).
# 'ndcg@10' / 'mrr@10' are ranx's and BEIR's standard nDCG and RR, RARE's group metrics
# (this harness's own names before they were renamed); ir_measures reads NDCG and MRR as
# nDCG and RR, the RARE paper prints its group metrics as NDCG@10 and MRR.
_AMBIGUOUS = {"ndcg": ("nDCG", "group_ndcg"), "mrr": ("RR", "group_mrr")}

# Measures of ir_measures and trec_eval the harness does not compute as metrics (lower case
# -> what it is): named as such, not answered with a did-you-mean to another measure
ELSEWHERE = {
    "err": "ir_measures' ERR (expected reciprocal rank)",
    "judged": "ir_measures' Judged (the share of judged documents)",
    "infap": "infAP (ir_measures', trec_eval's)",
    "numq": "ir_measures' NumQ (trec_eval's num_q)",
    "numret": "ir_measures' NumRet (trec_eval's num_ret)",
    "numrel": "ir_measures' NumRel (trec_eval's num_rel)",
    "numrelret": "ir_measures' NumRelRet (trec_eval's num_rel_ret)",
    "num_q": "trec_eval's num_q",
    "num_ret": "trec_eval's num_ret",
    "num_rel": "trec_eval's num_rel",
    "num_rel_ret": "trec_eval's num_rel_ret",
    "gm_map": "trec_eval's gm_map (a geometric mean of AP)",
    "iprec": "ir_measures' IPrec (trec_eval's iprec_at_recall)",
    "iprec_at_recall": "trec_eval's iprec_at_recall",
    "setp": "ir_measures' SetP (trec_eval's set_P)",
    "alpha_ndcg": "ir_measures' alpha_nDCG",
}
_NAME = re.compile(r"^([A-Za-z][A-Za-z_\-]*?)(?:[._](\d+))?(?:\(([^()]*)\))?(?:@(-?\d+))?$")


def parse_metric(text: str, level: int = 1) -> Metric:
    """One metric from its name as ir_measures writes it ('nDCG@10', 'AP', 'P(rel=2)@10'),
    as trec_eval does ('ndcg_cut_10', 'map', 'P.10') or as this harness does
    ('coverage@10'); did-you-mean on typos. A binary metric is taken at `level` unless the
    name says its own ('P(rel=2)@10'). A family that needs a cut-off must be given one."""
    metric, bare = _parse(text, level)
    if bare:  # a family taken at each K of metrics.k: not one metric
        raise ConfigError(
            f"metric '{text}' needs a cut-off: write it as name@k, e.g. {metric.family.label}@10"
        )
    return metric


def expand(text: str, available: Sequence[str]) -> list[str]:
    """The names in `available` that `text` stands for: the one metric it names, or for a
    family written without a cut-off that metrics.names takes at each K ('ndcg_cut', 'P'),
    every K of it there. Refuses a name with two readings; [] when nothing matches."""
    metric, bare = _parse(text, 1)
    if not bare:
        return [n for n in available if n == metric.name]
    out = []
    for name in available:
        try:
            m = parse_metric(name)
        except ConfigError:
            continue
        if m.family == metric.family and m.k is not None and m.level == metric.level:
            out.append(name)
    return out


def _parse(text: str, level: int) -> tuple[Metric, bool]:
    """(the metric, whether the name gave no cut-off and the family is read at each K)."""
    raw = str(text).strip()
    m = _NAME.match(raw)
    if not m:
        raise ConfigError(f"metric '{text}' is not of the form name@k (e.g. coverage@10 or AP)")
    base, trec_k, params, at = m.groups()
    if trec_k is not None:  # trec_eval's ndcg_cut_10: the cut-off after a dot or underscore
        family = _TREC_CUT.get(base.lower())
        if family is None or at is not None:
            raise _unknown(text, raw)
        at, reading = trec_k, "each"
    else:
        found = _lookup(base, "" if at is None else f"@{at}")
        elsewhere = ELSEWHERE.get(base.lower())
        if found is None and elsewhere:
            raise ConfigError(
                f"metric '{text}' is {elsewhere}, which this harness does not compute as a "
                "metric; python -m harness.trec_eval prints trec_eval's gm_map, "
                "iprec_at_recall and counts"
            )
        if found is None:
            raise _unknown(text, base)
        family, reading = found
    fam = FAMILIES[family]
    if params is not None:
        level = _level(text, params, fam)
    k = None if at is None else int(at)
    if k is not None:
        if fam.cut == "none":
            raise ConfigError(f"metric '{text}': {fam.label} reads the whole list; drop the @{k}")
        if k <= 0:
            raise ConfigError(f"metric '{text}': K must be a positive integer")
    return Metric(fam, k, level), k is None and reading == "each"


def _lookup(base: str, cut: str = "") -> tuple[str, str] | None:
    """(family, reading) for a name without its cut-off; refuses a name with two readings."""
    if base in SPELLINGS:
        return SPELLINGS[base]
    readings = _AMBIGUOUS.get(base.lower())
    if readings is not None:
        standard_one, group_one = readings
        if cut:
            group_reading = f"{group_one}{cut} (RARE's redundancy-aware group metric)"
        else:
            group_reading = f"{group_one} (RARE's redundancy-aware group metric at each K)"
        raise AmbiguousMetric(
            f"metric '{base}{cut}' could mean two things: {standard_one}{cut} (trec_eval's, "
            f"as ir_measures, ranx and BEIR read it) or {group_reading}; write the one you mean"
        )
    return _FOLDED.get(base.lower())


def _level(text: str, params: str, family: Family) -> int:
    """The relevance level of 'name(rel=N)' (the only parameter read)."""
    key, _, value = params.partition("=")
    if key.strip() != "rel" or not value.strip().isdigit():
        raise ConfigError(
            f"metric '{text}': only the parameter rel=N (the lowest relevant grade) is "
            "supported, e.g. P(rel=2)@10"
        )
    if not family.binary:
        raise ConfigError(
            f"metric '{text}': {family.label} does not use a relevance level; drop the (rel=...)"
        )
    level = int(value)
    if level < 1:
        raise ConfigError(f"metric '{text}': the relevance level must be >= 1")
    return level


def _unknown(text: str, base: str) -> ConfigError:
    from harness.core.paths import group_options

    valid = ", ".join(valid_names())
    hint = did_you_mean(base, [*(f.label for f in FAMILIES.values()), *SPELLINGS])
    sets = ", ".join(group_options("metrics"))
    return ConfigError(
        f"unknown metric '{base}'{hint}; valid: {valid} "
        f"(trec_eval's names too: ndcg_cut_10, P_10, recall_100, map, recip_rank); "
        f"or a whole set by its config name ({sets})"
    )


# family -> trec_eval's measure at a cut-off and over the whole list (None: it has none)
_TREC_EVAL = {
    "ndcg": ("ndcg_cut", "ndcg"),
    "recall": ("recall", None),
    "P": ("P", None),
    "map": ("map_cut", "map"),
    "recip_rank": (None, "recip_rank"),
    "success": ("success", None),
    "Rprec": (None, "Rprec"),
    "bpref": (None, "bpref"),
}


def trec_eval_name(metric: Metric) -> str | None:
    """trec_eval's name of `metric` as its output prints it ('ndcg_cut_10', 'map'); None for
    a measure trec_eval does not have (RR@10, the harness's own families). The relevance
    level is trec_eval's -l, not part of the name."""
    cut, whole = _TREC_EVAL.get(metric.family.name, (None, None))
    if metric.k is None:
        return whole
    return None if cut is None else f"{cut}_{metric.k}"


def valid_names() -> list[str]:
    """One example of each family's name as results print it, every one of which parses."""
    out = []
    for f in FAMILIES.values():
        if f.cut != "none":
            out.append(f"{f.label}@10")
        if f.cut != "required":
            out.append(f.label)
    return out


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
        raise ConfigError("metrics.names is empty; e.g. metrics.names=[coverage,nDCG@10]")
    out: list[Metric] = []
    for name in names:
        metric, bare = _parse(name, level)
        out += [Metric(metric.family, k, metric.level) for k in ks] if bare else [metric]
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
