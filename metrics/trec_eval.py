"""trec_eval 10.0 as its program computes, averages and prints: the measures of all_trec,
their parameters as -m takes them, one run scored against qrels, and the output lines, byte
for byte. harness.cli.trec_eval reads the files and the flags.

trec_eval's rules, kept here: the queries are those of the qrels, in byte order; one the run
lacks stops trec_eval 10 (with -c it is scored as a ranking of one unjudged document, then its
counts are zeroed); each ranking is ordered by score descending, ties by document id
descending, and -M cuts it after ordering; -J keeps only judged documents; a negative
judgment is 'in the pool, unjudged'. Each query's values are computed by metrics._trec_kernels
with trec_eval's own operations, summed in query order, then divided by the number of queries.

`version=9` gives trec_eval 9.0.8's rules (pytrec_eval's): iprec_at_recall and 11pt_avg take
the cut-off (long)(p * R + 0.9) instead of lround(p * R), and a query the run lacks is left
out (with -c it counts 0, or 1e-5 in the geometric means).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from harness.core.errors import ConfigError, HarnessError
from harness.core.run import Run
from metrics._trec_tables import atol, build

MIN_GEO_MEAN = 0.00001
CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default cut-offs
RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class Measure:
    name: str
    # "double", "long" (summed counts), "gm" (geometric mean), "num_q", "runid", "relstring"
    kind: str
    params: str = ""  # "cut" (whole cut-offs), "level" (recall or R multiples), "values", "pairs"
    default: tuple = ()


# trec_eval's measures in its own order (the order it prints them in)
MEASURES = {
    m.name: m
    for m in (
        Measure("runid", "runid"),
        Measure("num_q", "num_q"),
        Measure("num_ret", "long"),
        Measure("num_rel", "long"),
        Measure("num_rel_ret", "long"),
        Measure("map", "double"),
        Measure("gm_map", "gm"),
        Measure("Rprec", "double"),
        Measure("bpref", "double"),
        Measure("recip_rank", "double"),
        Measure("iprec_at_recall", "double", "level", RECALL_POINTS),
        Measure("P", "double", "cut", CUTS),
        Measure("relstring", "relstring", "values", (10.0,)),
        Measure("recall", "double", "cut", CUTS),
        Measure("infAP", "double"),
        Measure("gm_bpref", "gm"),
        Measure("Rprec_mult", "double", "level", tuple(i / 5 for i in range(1, 11))),
        Measure("utility", "double", "values", (1.0, -1.0, 0.0, 0.0)),
        Measure("11pt_avg", "double", "values", RECALL_POINTS),
        Measure("binG", "double"),
        Measure("G", "double", "pairs"),
        Measure("dcg", "double", "pairs"),
        Measure("ideal_dcg", "double", "pairs"),
        Measure("ndcg", "double", "pairs"),
        Measure("ndcg_rel", "double", "pairs"),
        Measure("Rndcg", "double", "pairs"),
        Measure("ndcg_cut", "double", "cut", CUTS),
        Measure("map_cut", "double", "cut", CUTS),
        Measure("relative_P", "double", "cut", CUTS),
        Measure("success", "double", "cut", (1, 5, 10)),
        Measure("set_P", "double"),
        Measure("set_relative_P", "double"),
        Measure("set_recall", "double"),
        Measure("set_map", "double"),
        Measure("set_F", "double", "values", (1.0,)),
        Measure("num_nonrel_judged_ret", "long"),
        Measure("rbp", "double", "pairs"),
        Measure("rbp_resid", "double", "pairs"),
        Measure("unj", "double", "cut", (5, 10, 20)),
    )
}
NICKNAMES = {
    "official": "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
    "iprec_at_recall P".split(),
    "set": "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P "
    "set_map set_F".split(),
    "all_trec": "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
    "iprec_at_recall P relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg "
    "relative_P Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P set_recall "
    "set_relative_P set_map set_F num_nonrel_judged_ret".split(),
}
OFFICIAL = tuple(NICKNAMES["official"])
# trec_eval's measures of other relevance formats (-R prefs, qrels_prefs, qrels_jg)
NOT_HERE = (
    "prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp prefs_pair "
    "prefs_avgjg prefs_avgjg_Rnonrel prefs_simp_ret prefs_pair_ret prefs_avgjg_ret "
    "prefs_avgjg_Rnonrel_ret prefs_simp_imp prefs_pair_imp prefs_avgjg_imp map_avgjg P_avgjg "
    "Rprec_mult_avgjg yaap ndcg_p all_prefs prefs qrels_jg"
).split()


@dataclass(frozen=True)
class Asked:
    """One measure to compute: its parameters as parsed, and the text they were given as
    (trec_eval prints that text in the names of measures with free-form parameters)."""

    measure: Measure
    values: tuple
    text: str | None = None

    @property
    def names(self) -> list[str]:
        """The printed names, one per value the measure yields."""
        m = self.measure
        if m.params == "cut":
            return [f"{m.name}_{k}" for k in self.values]
        if m.params == "level":
            return [f"{m.name}_{p:3.2f}" for p in self.values]
        return [m.name if self.text is None else f"{m.name}_{self.text}"]


def _atof(text: str) -> float:
    """C's atof on decimal numbers: the longest leading number; 0.0 where there is none."""
    found = re.match(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)", text)
    return float(found.group(1)) if found else 0.0


def _spelled(spec: str) -> str:
    """' (write ndcg_cut.10)' for a name the harness reads ('nDCG@10', 'AP', 'P(rel=2)@5'),
    as trec_eval's -m spells it; '' for one trec_eval does not have."""
    from metrics.registry import parse_metric, trec_eval_name

    try:
        metric = parse_metric(spec)
    except ConfigError:
        return ""
    printed = trec_eval_name(metric)
    if printed is None:
        return ""
    family, _, cut = printed.rpartition("_")
    arg = printed if printed in MEASURES or family not in MEASURES else f"{family}.{cut}"
    level = getattr(metric, "level", None)
    return f" (write {arg}" + (f" with -l {level}" if level and level > 1 else "") + ")"


def requested(specs: Sequence[str]) -> dict[str, Asked]:
    """The -m arguments as {measure: Asked}, in trec_eval's order: a nickname ('official',
    also what no -m means; 'all_trec', 'set'), a measure ('ndcg_cut'), or one with parameters
    ('P.5,10', 'iprec_at_recall.0.25,0.5', 'ndcg.1=3,2=9', 'utility.2,-1,0,0'). As in
    trec_eval, a measure given parameters twice takes the first ones."""
    marked: set[str] = set()
    given: dict[str, str] = {}
    for spec in specs or ["official"]:
        name, dot, text = spec.partition(".")
        if dot and not text:
            raise ConfigError(f"-m {spec}: no parameters after the '.' (e.g. P.5,10)")
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in MEASURES:
            marked.add(name)
        else:
            raise ConfigError(f"-m {spec}: {_unknown(spec, name)}")
        if dot:
            given.setdefault(name, text)
    out = {}
    for name, m in MEASURES.items():
        if name not in marked:
            continue
        text = given.get(name)
        if text is not None and not m.params:
            raise ConfigError(f"-m {name}.{text}: {name} takes no parameters")
        out[name] = Asked(m, m.default, None) if text is None else _parsed(m, text)
    return out


def _unknown(spec: str, name: str) -> str:
    if name in NOT_HERE:
        return f"'{name}' reads preference or judgment-group files (-R), not computed here"
    family, _, cut = name.rpartition("_")
    hint = f" (write {family}.{cut})" if family in MEASURES and cut.isdigit() else ""
    said = spec if "@" in spec else name  # iprec@0.5 is one name
    return (
        f"'{said}' is not a trec_eval measure{hint or _spelled(spec)}; measures: "
        f"{', '.join(NICKNAMES)}, {', '.join(MEASURES)}"
    )


def _parsed(m: Measure, text: str) -> Asked:
    """A measure's parameters from -m's text, read as trec_eval reads them."""
    parts = text.split(",")
    spec = f"-m {m.name}.{text}"
    if m.params == "cut":
        cuts = sorted(atol(p) for p in parts)
        if cuts[0] <= 0:
            raise ConfigError(f"{spec}: cut-offs must be positive whole numbers, e.g. P.5,10")
        if len(set(cuts)) < len(cuts):
            raise ConfigError(f"{spec}: a cut-off is given twice")
        return Asked(m, tuple(cuts), text)
    if m.params == "level":
        levels = sorted(_atof(p) for p in parts)
        if len(set(levels)) < len(levels):
            raise ConfigError(f"{spec}: a level is given twice")
        return Asked(m, tuple(levels), text)
    if m.params == "values":
        values = tuple(_atof(p) for p in parts)
        if m.name == "utility" and len(values) != 4:
            raise ConfigError(f"{spec}: utility takes 4 coefficients, e.g. utility.1,-1,0,0")
        return Asked(m, values, text)
    pairs = []
    for part in parts:
        key, eq, value = part.partition("=")
        if not eq or "=" in value:
            raise ConfigError(f"{spec}: parameters are name=value pairs, e.g. ndcg.1=3,2=9")
        pairs.append((key, _atof(value)))
    return Asked(m, tuple(pairs), text)


@dataclass(frozen=True)
class Report:
    """trec_eval's output: the summary lines over all queries (name, value, kind) and,
    made when asked for (-q), the per-query lines, each in trec_eval's order."""

    summary: list[tuple[str, object, str]]
    qids: list[str]
    values: Mapping[str, tuple[str, object]]  # printed name -> (kind, per-query values)

    @cached_property
    def per_query(self) -> list[tuple[str, str, object, str]]:
        """(name, qid, value, kind) for each query, then each measure."""
        shown = [(name, kind, values) for name, (kind, values) in self.values.items()]
        return [
            (name, q, values[i], kind)
            for i, q in enumerate(self.qids)
            for name, kind, values in shown
        ]

    def lines(self, queries: bool = False, summary: bool = True) -> str:
        """The text trec_eval prints: -q adds the per-query lines, -n drops the summary."""
        rows = list(self.per_query) if queries else []
        if summary:
            rows += [(name, "all", value, kind) for name, value, kind in self.summary]
        return "".join(_line(*row) for row in rows)


def _line(name: str, qid: str, value, kind: str) -> str:
    if kind == "runid":
        return f"{name:<22}\t{qid}\t{value}\n"
    if kind == "relstring":
        return f"{name:<22}\t{qid}\t'{value}'\n"
    if kind in ("long", "num_q"):
        return f"{name:<22}\t{qid}\t{int(value)}\n"
    return f"{name:<22}\t{qid}\t{_fixed(value)}\n"


def _fixed(value: float) -> str:
    """C's %6.4f, whose not-a-number keeps its sign ('-nan', as 0.0 / 0.0 gives on x86)."""
    if value != value:
        return f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    return f"{value:6.4f}"


@dataclass(frozen=True)
class Options:
    """trec_eval's flags that change what is computed."""

    level: int = 1  # -l: the lowest relevant grade
    complete: bool = False  # -c
    max_ret: int | None = None  # -M
    judged_only: bool = False  # -J
    docs_in_collection: int = 0  # -N
    version: int = 10  # 9: trec_eval 9.0.8's rules (module docstring)


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Run,
    asked: Mapping[str, Asked],
    *,
    runid: str = "",
    options: Options = Options(),
) -> Report:
    """Score `run` against `qrels` as trec_eval does with `options`."""
    have = set(run.query_ids())
    judged_q = sorted(qrels)  # byte order: strcmp on UTF-8
    if options.version == 9:
        qids = [q for q in judged_q if q in have]
    else:
        lacking = [q for q in judged_q if q not in have]
        if lacking and not options.complete:
            raise HarnessError(
                f"query {lacking[0]} of the qrels has no results in the run "
                f"({len(lacking)} such); trec_eval 10 stops there: pass -c to score them as "
                "empty, or --v9 to leave them out as trec_eval 9 does"
            )
        qids = judged_q
    if not qids:
        raise HarnessError(
            "no query has both results and judgments; check that the run and the qrels use "
            "the same query ids"
        )
    if max(qrels[qids[0]].values()) < 0:
        raise HarnessError(
            f"query {qids[0]} of the qrels has only negative judgments; trec_eval 10 cannot "
            "score a run when its first query has no grade of 0 or more (it stops with 'Can't "
            "calculate measure'): judge one of its documents 0 or more, or drop the query"
        )
    if options.max_ret is not None:
        run = run.cut(options.max_ret)
    bogus = [q not in have for q in qids]
    tables = build(qrels, run, qids, bogus, options)
    values: dict[str, tuple[str, object]] = {}
    summary: list[tuple[str, object, str]] = []
    n = len(judged_q) if options.complete else len(qids)
    for name, a in asked.items():
        kind = a.measure.kind
        if kind == "runid":
            summary.append(("runid", runid, "runid"))
            continue
        if kind == "num_q":
            summary.append(("num_q", n, "num_q"))
            continue
        computed = tables.compute(a)
        for printed, series in zip(a.names, computed):
            if kind == "relstring":
                values[printed] = (kind, series)
                continue
            total = float(np.cumsum(series)[-1])  # added in query order, as trec_eval adds
            if kind == "long":
                if name == "num_rel" and options.complete:  # trec_eval: judgments above 0
                    total = float(sum(g > 0 for j in qrels.values() for g in j.values()))
            elif kind == "gm":
                total += (n - len(qids)) * math.log(MIN_GEO_MEAN)
                total = math.exp(total / n)
            else:
                total = total / n
            if kind != "gm":
                values[printed] = (kind, series.tolist())
            summary.append((printed, total, kind))
    return Report(summary, qids, values)
