"""Metric names such as "coverage@10" or "map" parsed into metric objects; the registry lists
valid names, so error messages and docs never drift from what is computed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
    kind: str  # "group" | "standard" | "corpus" | one of MODEL_KINDS ("utility", "rag")
    label: str = ""  # the printed prefix: ir_measures' name for a standard family
    # "required": name@K; "none": the whole list; "optional": either; "recall": name@level,
    # a recall level in [0, 1] (IPrec@0.5)
    cut: str = "required"
    higher_is_better: bool = True
    binary: bool = False  # reads relevance as grade >= a level (the standard binary metrics)
    percent: bool = True  # a share, shown in percent; False: shown as it is (a mean rank)
    # how per-query values make one number: "mean"; "sum" (the counts, as trec_eval and
    # ir_measures total them); "geomean" (gm_map: each value floored at 1e-5)
    aggregate: str = "mean"

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
    point: float | None = None  # the recall level of a "recall" family (IPrec@0.5)

    def __post_init__(self) -> None:
        if not self.family.binary and self.level != 1:
            object.__setattr__(self, "level", 1)

    @property
    def name(self) -> str:
        base = self.family.label if self.level == 1 else f"{self.family.label}(rel={self.level})"
        if self.point is not None:
            return f"{base}@{self.point}"
        return base if self.k is None else f"{base}@{self.k}"

    @property
    def at(self) -> int | float | None:
        """The cut-off, or the recall level of a "recall" family: what the kernels read."""
        return self.k if self.point is None else self.point

    def __call__(self, query: Query, ranked: Sequence[str]) -> float:
        """A group metric's value for one query (the others are computed in batch only)."""
        if self.family.kind != "group":
            raise TypeError(f"{self.name} is computed in batch by metrics.evaluate.per_query")
        key = (self.family.name, self.k)
        return group.evaluate([query.groups], [ranked], [key])[key][0]

    def __str__(self) -> str:
        return self.name


_GROUP = tuple(Family(n, "group") for n in ("coverage", "perfrecall", "group_ndcg", "group_mrr"))
_COUNT = {"cut": "none", "percent": False, "aggregate": "sum"}
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
    # AP estimated from a sampled pool: grade < 0 = pooled but not judged (trec_eval's)
    Family("infap", "standard", "infAP", cut="none", binary=True),
    Family("gm_map", "standard", "gm_map", cut="none", binary=True, aggregate="geomean"),
    # interpolated precision at a recall level (trec_eval's iprec_at_recall)
    Family("iprec", "standard", "IPrec", cut="recall", binary=True),
    # expected reciprocal rank with gdeval's grade scale 0-4 (ir_measures' ERR@k)
    Family("err", "standard", "ERR"),
    # share of the top K that has a judgment, any grade (ir_measures' Judged@k)
    Family("judged", "standard", "Judged", cut="optional"),
    # counts, totalled over the queries as trec_eval and ir_measures do
    Family("num_q", "standard", "NumQ", **_COUNT),
    Family("num_ret", "standard", "NumRet", **_COUNT),
    Family("num_rel", "standard", "NumRel", binary=True, **_COUNT),
    Family("num_rel_ret", "standard", "NumRelRet", binary=True, **_COUNT),
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
# End-to-end RAG (docs/rag.md): whether a generator's answer with the top K (e2e) and with no
# passage (closed_book) is judged correct, computed by harness.rag; rag_gain = e2e -
# closed_book and parametric_gain = e2e - perfrecall, per query (RARE's Table 4)
_RAG = (
    Family("e2e", "rag"),
    Family("closed_book", "rag", cut="none"),
    Family("rag_gain", "rag"),
    Family("parametric_gain", "rag"),
    # the answer with the top K declines to answer / asks for clarification (GaRAGe, CRUMQs)
    Family("deflected", "rag"),
    Family("clarified", "rag"),
    # GaRAGe §2.4 (docs/rag.md#garage), a model judge's labels of the answer with the top K:
    # eligible (no major issue); every sentence supported by a shown passage (ufactuality) or
    # by a relevant one (uraf); factuality, raf: eligible and that; attribution_*: the
    # passages it cites against those the reference answer cites
    *(Family(n, "rag") for n in ("eligibility", "ufactuality", "factuality", "uraf", "raf")),
    *(Family(f"attribution_{n}", "rag") for n in ("precision", "recall", "f1")),
)
MODEL_KINDS = ("utility", "rag")  # computed by a model section (harness.cell.sections)
_MODEL = (*_UTILITY, *_RAG)
FAMILIES: dict[str, Family] = {f.name: f for f in (*_GROUP, *_STANDARD, *_CORPUS, *_MODEL)}
# every standard family has its formula in metrics.standard, and only those
if {f.name for f in _STANDARD} != set(standard.FORMULAS):
    raise RuntimeError("metrics.registry and metrics.standard.FORMULAS list different families")

_BARE = {"required": "each", "recall": "points"}  # a Family.cut -> its bare reading
# family -> trec_eval's measure at a cut-off and over the whole list (None: it has none)
TREC_EVAL = {
    "ndcg": ("ndcg_cut", "ndcg"),
    "recall": ("recall", None),
    "P": ("P", None),
    "map": ("map_cut", "map"),
    "recip_rank": (None, "recip_rank"),
    "success": ("success", None),
    "Rprec": (None, "Rprec"),
    "bpref": (None, "bpref"),
    "infap": (None, "infAP"),
    "gm_map": (None, "gm_map"),
    "num_q": (None, "num_q"),
    "num_ret": (None, "num_ret"),
    "num_rel": (None, "num_rel"),
    "num_rel_ret": (None, "num_rel_ret"),
}
# The names people type -> (family, what the bare name means: "all" = the whole list,
# "each" = the family at every K of metrics.k, "points" = at trec_eval's 11 recall levels
# 0.0, 0.1, ..., 1.0). ir_measures' names mean what ir_measures
# means (nDCG and AP bare: the whole list); trec_eval's families (ndcg_cut, P, recall,
# map_cut, success) expand over metrics.k as `trec_eval -m P` expands over its cut-offs.
SPELLINGS: dict[str, tuple[str, str]] = {
    # the harness's own names, and ir_measures' (a family's label)
    **{f.name: (f.name, _BARE.get(f.cut, "all")) for f in (*_GROUP, *_CORPUS, *_MODEL)},
    **{f.label: (f.name, _BARE.get(f.cut, "all")) for f in FAMILIES.values()},
    "MAP": ("map", "all"),
    "Recall": ("recall", "each"),
    "RPrec": ("Rprec", "all"),
    # trec_eval's: a measure with cut-offs at each K, one over the whole list as it is (bare
    # ndcg is ambiguous: _AMBIGUOUS)
    **{cut: (fam, "each") for fam, (cut, _) in TREC_EVAL.items() if cut},
    **{whole: (fam, "all") for fam, (_, whole) in TREC_EVAL.items() if whole not in (None, "ndcg")},
    "iprec_at_recall": ("iprec", "points"),
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
_TREC_CUT = {cut.lower(): fam for fam, (cut, _) in TREC_EVAL.items() if cut}
# Names two communities read differently: refused, with both readings (docs/metrics.md).
# 'ndcg@10' / 'mrr@10' are ranx's and BEIR's standard nDCG and RR, RARE's group metrics
# (this harness's own names before they were renamed); ir_measures reads NDCG and MRR as
# nDCG and RR, the RARE paper prints its group metrics as NDCG@10 and MRR.
_AMBIGUOUS = {"ndcg": ("nDCG", "group_ndcg"), "mrr": ("RR", "group_mrr")}

# Measures of ir_measures and trec_eval the harness does not compute as metrics (lower case
# -> what it is): named as such, not answered with a did-you-mean to another measure
ELSEWHERE = {
    "setp": "ir_measures' SetP (trec_eval's set_P)",
    "set_p": "trec_eval's set_P",
    "alpha_ndcg": "ir_measures' alpha_nDCG",
    "nerr": "ir_measures' nERR",
    "rbp": "ir_measures' RBP (rank-biased precision)",
    "gm_bpref": "trec_eval's gm_bpref",
}
_NAME = re.compile(
    r"^([A-Za-z][A-Za-z0-9_\-]*?)(?:[._](\d+))?(?:\(([^()]*)\))?(?:@(-?\d+(?:\.\d*)?))?$"
)
# trec_eval's iprec_at_recall_0.50 (its cut-off is a recall level, with a dot in it)
_TREC_IPREC = re.compile(r"^iprec_at_recall[._](\d(?:\.\d*)?)$", re.IGNORECASE)
RECALL_POINTS = tuple(i / 10 for i in range(11))  # trec_eval's iprec_at_recall levels


def parse_metric(text: str, level: int = 1) -> Metric:
    """One metric from its name as ir_measures writes it ('nDCG@10', 'AP', 'P(rel=2)@10'),
    as trec_eval does ('ndcg_cut_10', 'map', 'P.10') or as this harness does
    ('coverage@10'); did-you-mean on typos. A binary metric is taken at `level` unless the
    name says its own ('P(rel=2)@10'). A family that needs a cut-off must be given one."""
    metric, reading = _parse(text, level)
    if reading == "points":
        raise ConfigError(f"metric '{text}' needs a recall level: e.g. {metric.family.label}@0.5")
    if reading:  # a family taken at each K of metrics.k: not one metric
        raise ConfigError(
            f"metric '{text}' needs a cut-off: write it as name@k, e.g. {metric.family.label}@10"
        )
    return metric


def expand(text: str, available: Sequence[str]) -> list[str]:
    """The names in `available` that `text` stands for: the one metric it names, or for a
    family written without a cut-off that metrics.names takes at each K ('ndcg_cut', 'P'),
    every K of it there. Refuses a name with two readings; [] when nothing matches."""
    metric, reading = _parse(text, 1)
    if not reading:
        return [n for n in available if n == metric.name]
    out = []
    for name in available:
        try:
            m = parse_metric(name)
        except ConfigError:
            continue
        if m.family == metric.family and m.at is not None and m.level == metric.level:
            out.append(name)
    return out


def _parse(text: str, level: int) -> tuple[Metric, str]:
    """(the metric, how a name without a cut-off is read: "" when it names one metric,
    "each" when the family is taken at each K of metrics.k, "points" at each recall level)."""
    raw = str(text).strip()
    iprec = _TREC_IPREC.match(raw)
    if iprec:
        return Metric(FAMILIES["iprec"], None, level, _point(text, iprec.group(1))), ""
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
                f"metric '{text}' is {elsewhere}, which this harness does not compute"
            )
        if found is None:
            raise _unknown(text, base)
        family, reading = found
    fam = FAMILIES[family]
    if params is not None:
        if fam.name == "num_ret":  # ir_measures: NumRet(rel=N) is NumRelRet at level N
            fam = FAMILIES["num_rel_ret"]
        level = _level(text, params, fam)
    if fam.cut == "recall":
        if at is None:
            return Metric(fam, None, level), reading
        return Metric(fam, None, level, _point(text, at)), ""
    k = None if at is None else _cut(text, at)
    if k is not None and fam.cut == "none":
        raise ConfigError(f"metric '{text}': {fam.label} reads the whole list; drop the @{k}")
    return Metric(fam, k, level), "" if k is not None or reading == "all" else reading


def _cut(text: str, at: str) -> int:
    try:
        k = int(at)
    except ValueError:
        k = 0
    if k <= 0:
        raise ConfigError(f"metric '{text}': K must be a positive integer")
    return k


def _point(text: str, at: str) -> float:
    """A recall level in [0, 1] ('0.5', '0.50', '1')."""
    p = float(at)
    if not 0.0 <= p <= 1.0:
        raise ConfigError(
            f"metric '{text}': the recall level must be between 0 and 1, e.g. IPrec@0.5"
        )
    return p


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


def trec_eval_name(metric: Metric) -> str | None:
    """trec_eval's name of `metric` as its output prints it ('ndcg_cut_10', 'map',
    'iprec_at_recall_0.50'); None for a measure trec_eval does not have (RR@10, ERR@10,
    the harness's own families). The relevance level is trec_eval's -l, not in the name."""
    if metric.family.name == "iprec":
        return None if metric.point is None else f"iprec_at_recall_{metric.point:.2f}"
    cut, whole = TREC_EVAL.get(metric.family.name, (None, None))
    if metric.k is None:
        return whole
    return None if cut is None else f"{cut}_{metric.k}"


def valid_names() -> list[str]:
    """One example of each family's name as results print it, every one of which parses."""
    out = []
    for f in FAMILIES.values():
        if f.cut == "recall":
            out.append(f"{f.label}@0.5")
            continue
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
        metric, reading = _parse(name, level)
        if reading == "points":
            out += [Metric(metric.family, None, metric.level, p) for p in RECALL_POINTS]
        elif reading:
            out += [Metric(metric.family, k, metric.level) for k in ks]
        else:
            out.append(metric)
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
    return sorted(
        unique, key=lambda m: (m.k is None, m.k or 0, order[m.family], m.level, m.point or 0)
    )


def higher_is_better(name: str) -> bool:
    """Whether a larger value of the metric called `name` is better (outdated@K and
    answer_rank are not); a name the registry cannot parse counts as higher-is-better."""
    return _family_says(name, "higher_is_better", True)


def aggregate_of(name: str) -> str:
    """How the per-query values of the metric called `name` make one number: "mean",
    "sum" (the counts) or "geomean" (gm_map); "mean" for a name the registry cannot parse."""
    return _family_says(name, "aggregate", "mean")


def in_percent(name: str) -> bool:
    """Whether the metric called `name` is a share shown in percent (answer_rank, a mean
    rank, is not); a name the registry cannot parse counts as a share."""
    return _family_says(name, "percent", True)


def _family_says(name: str, attribute: str, otherwise: Any) -> Any:
    try:
        return getattr(parse_metric(name).family, attribute)
    except ConfigError:
        return otherwise
