"""trec_eval's measures as the trec_eval program computes, averages and prints them (version
9.0.8, the one pytrec_eval bundles): which measures, their default parameters, one run scored
against qrels, and the output lines. harness.cli.trec_eval reads the files and the flags.

Per query the values come from the standard kernels (metrics.standard), with trec_eval's
rules: the queries are those in both the run and the qrels, in qid order; a query with no
relevant document scores 0 (where the harness's own tables leave it out); -c divides by every
query of the qrels, the missing ones counting 0; -M cuts each ranking after ordering it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from harness.core.errors import ConfigError, HarnessError
from harness.core.run import Run
from metrics import standard
from metrics.registry import RECALL_POINTS, TREC_EVAL
from metrics.stats import MIN_GEO_MEAN, aggregate  # noqa: F401 -- MIN_GEO_MEAN: trec_eval's name, read here

CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default cut-offs


@dataclass(frozen=True)
class Measure:
    name: str
    kind: str  # "long": summed over queries; "double": averaged; "gm": geometric mean; "runid"
    params: tuple = ()  # default cut-offs (recall points for iprec_at_recall); () for none
    per_query: bool = True  # printed for each query with -q


# The measures this program computes, in trec_eval's order (the order it prints them in).
MEASURES = {
    m.name: m
    for m in (
        Measure("runid", "runid", per_query=False),
        Measure("num_q", "long", per_query=False),
        Measure("num_ret", "long"),
        Measure("num_rel", "long"),
        Measure("num_rel_ret", "long"),
        Measure("map", "double"),
        Measure("gm_map", "gm", per_query=False),
        Measure("Rprec", "double"),
        Measure("bpref", "double"),
        Measure("recip_rank", "double"),
        Measure("iprec_at_recall", "double", RECALL_POINTS),
        Measure("P", "double", CUTS),
        Measure("recall", "double", CUTS),
        Measure("infAP", "double"),
        Measure("ndcg", "double"),
        Measure("ndcg_cut", "double", CUTS),
        Measure("map_cut", "double", CUTS),
        Measure("success", "double", (1, 5, 10)),
    )
}
OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec")
OFFICIAL += ("bpref", "recip_rank", "iprec_at_recall", "P")
# trec_eval's all_trec measures this program does not compute
NOT_HERE = (
    "relstring unj rbp rbp_resid gm_bpref utility 11pt_avg relative_P Rprec_mult ndcg_rel "
    "Rndcg binG G set_P set_recall set_relative_P set_map set_F num_nonrel_judged_ret"
).split()
# measure -> (family of metrics.standard, whether it is taken at each cut-off or recall
# level), from the registry's table (num_q is counted by evaluate itself); gm_map's values
# are AP's, averaged as a geometric mean
_STANDARD = {"iprec_at_recall": ("iprec", True)} | {
    name: (family, at_cut)
    for family, names in TREC_EVAL.items()
    for name, at_cut in zip(names, (True, False))
    if name not in (None, "num_q")
}


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


def requested(specs: Sequence[str]) -> dict[str, tuple]:
    """The -m arguments as {measure: parameters}, in trec_eval's order: 'official' (also
    what no -m means), a measure ('ndcg_cut'), or one with its parameters ('P.5,10',
    'iprec_at_recall.0.25,0.5'). A measure named twice takes the last parameters given."""
    asked: dict[str, tuple] = {}
    for spec in specs or ["official"]:
        name, _, params = spec.partition(".")
        if name == "official":
            asked.update({m: MEASURES[m].params for m in OFFICIAL})
            continue
        if name == "all_trec" or name in NOT_HERE or name not in MEASURES:
            said = spec if "@" in spec else name  # iprec@0.5 is one name
            missing = "all_trec's " + ", ".join(NOT_HERE) if name == "all_trec" else f"'{said}'"
            family, _, cut = name.rpartition("_")
            hint = f" (write {family}.{cut})" if family in MEASURES and cut.isdigit() else ""
            hint = hint or _spelled(spec)
            raise ConfigError(
                f"-m {spec}: {missing} not computed here{hint}; measures: official, "
                f"{', '.join(MEASURES)}"
            )
        asked[name] = _params(spec, MEASURES[name], params) if params else MEASURES[name].params
    return {m: asked[m] for m in MEASURES if m in asked}


def _params(spec: str, measure: Measure, text: str) -> tuple:
    """Cut-offs (or recall points) from 'P.5,10', sorted and without repeats."""
    if not measure.params:
        raise ConfigError(f"-m {spec}: {measure.name} takes no parameters here")
    points = measure.name == "iprec_at_recall"
    out = set()
    for part in text.split(","):
        try:
            value = float(part) if points else int(part)
        except ValueError:
            value = None
        ok = value is not None and (0 <= value <= 1 if points else value > 0)
        if not ok:
            want = "a recall level between 0 and 1" if points else "a positive whole number"
            example = "iprec_at_recall.0.25,0.5" if points else "P.5,10"
            raise ConfigError(f"-m {spec}: '{part}' is not {want}, e.g. {example}")
        out.add(value)
    return tuple(sorted(out))


@dataclass(frozen=True)
class Report:
    """trec_eval's output: the summary lines over all queries (measure, value, whether it is
    a count) and, made when asked for (-q), the per-query lines, each in trec_eval's order."""

    summary: list[tuple[str, str | float, bool]]
    qids: list[str]
    values: Mapping[str, np.ndarray]  # 'measure' or 'measure@param' -> per-query values

    @cached_property
    def per_query(self) -> list[tuple[str, str, float, bool]]:
        """(measure, qid, value, whether it is a count) for each query, then each measure."""
        shown = [
            (_printed(name), series.tolist(), MEASURES[name.split("@")[0]].kind == "long")
            for name, series in self.values.items()
            if MEASURES[name.split("@")[0]].per_query
        ]
        return [
            (name, q, values[i], count)
            for i, q in enumerate(self.qids)
            for name, values, count in shown
        ]

    def lines(self, queries: bool = False, summary: bool = True) -> str:
        """The text trec_eval prints: -q adds the per-query lines, -n drops the summary."""
        rows = [(m, q, v, c) for m, q, v, c in self.per_query] if queries else []
        if summary:
            rows += [(m, "all", v, c) for m, v, c in self.summary]
        return "".join(_line(*row) for row in rows)


def _line(name: str, qid: str, value, count: bool) -> str:
    if isinstance(value, str):  # runid
        return f"{name:<22}\t{qid}\t{value}\n"
    return f"{name:<22}\t{qid}\t{int(value) if count else format(value, '6.4f')}\n"


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Run,
    asked: Mapping[str, tuple],
    *,
    runid: str = "",
    level: int = 1,
    complete: bool = False,
    max_ret: int | None = None,
) -> Report:
    """Score `run` against `qrels` as trec_eval does with -l level (-c: complete, -M max_ret)."""
    have = set(run.query_ids())
    qids = sorted(q for q in qrels if q in have)  # byte order: strcmp on UTF-8
    if not qids:
        raise HarnessError(
            "no query has both results and judgments; check that the run and the qrels use "
            "the same query ids"
        )
    if max_ret is not None:
        run = run.cut(max_ret)
    judged = standard.prepare([qrels[q] for q in qids])
    coded = standard.code([run[q] for q in qids], judged)  # once, for both compiled passes
    values = _values(coded, judged, asked, level)
    n = len(qrels) if complete else len(qids)
    summary: list[tuple[str, str | float, bool]] = []
    for name, series in values.items():
        measure = name.split("@")[0]
        kind = MEASURES[measure].kind
        if kind == "long":
            total = float(series.sum())
            if measure == "num_rel" and complete:  # trec_eval: every judgment above 0
                total = float(sum(g > 0 for j in qrels.values() for g in j.values()))
            summary.append((name, total, True))
        elif kind == "gm":  # AP floored at MIN_GEO_MEAN; with -c a query the run lacks is 0
            padded = np.concatenate([series, np.zeros(n - len(qids))])
            summary.append((name, aggregate(padded, "geomean"), False))
        else:
            summary.append((_printed(name), math.fsum(series.tolist()) / n, False))
    head: list[tuple[str, str | float, bool]] = []
    if "runid" in asked:
        head.append(("runid", runid, False))
    if "num_q" in asked:
        head.append(("num_q", float(n), True))
    return Report(head + summary, qids, values)


def _printed(name: str) -> str:
    """'P@10' -> 'P_10', 'iprec_at_recall@0.5' -> 'iprec_at_recall_0.50'."""
    measure, at, param = name.partition("@")
    if not at:
        return measure
    return f"{measure}_{float(param):.2f}" if measure == "iprec_at_recall" else f"{measure}_{param}"


def _values(rankings, judged, asked: Mapping[str, tuple], level: int) -> dict[str, np.ndarray]:
    """'measure' or 'measure@param' -> per-query values (NaN made 0, as trec_eval scores a
    query without a relevant document), in trec_eval's order."""
    keys: dict[str, tuple[str, float | None]] = {}
    for name, params in asked.items():
        if name in _STANDARD:
            family, cut = _STANDARD[name]
            for k in params if cut else (None,):
                keys[name if k is None else f"{name}@{k}"] = (family, k)
    wanted = list(dict.fromkeys(keys.values()))
    computed = standard.evaluate(rankings, judged, wanted, level=level) if wanted else {}
    return {key: np.nan_to_num(computed[fk], nan=0.0) for key, fk in keys.items()}
