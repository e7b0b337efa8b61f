"""What trec_eval's form_res_rels makes of each query, for every query at once, and each
measure's per-query values from it (metrics.trec_eval's engine).

Per query: the relevance of each retrieved document in rank order (a grade, NONPOOL or
UNJUDGED), the counts trec_eval keeps beside it, the grade counts of its judgments and, for
the gain measures, trec_eval's gain table (setup_gains)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, cmp_to_key

import numpy as np

from harness.core.run import Run
from metrics import _trec_kernels as k

_CUT_KINDS = {"P": 0, "recall": 1, "relative_P": 2, "success": 3, "unj": 4, "map_cut": 5}
_GAIN_KINDS = {"ndcg": k.NDCG, "ndcg_rel": k.NDCG_REL, "Rndcg": k.RNDCG, "G": k.G}
# zeroed for a query the run lacks after it was scored as the stand-in ranking (trec_eval.c)
_ZEROED = ("num_ret", "utility", "rbp_resid")
BOGUS_DOC = "ceci_nest_pas_un_docno"  # trec_eval's stand-in ranking for a query the run lacks


def build(qrels, run: Run, qids: list[str], bogus: list[bool], options) -> Tables:
    from metrics import standard

    rankings = [(BOGUS_DOC,) if b else run[q] for q, b in zip(qids, bogus)]
    judged = standard.prepare([qrels[q] for q in qids])
    flat, start = standard.flat_codes(rankings, judged)
    rows = np.repeat(np.arange(len(qids), dtype=np.int64), np.diff(start))
    keys = rows * judged.stride + flat
    at = np.minimum(np.searchsorted(judged.keys, keys), len(judged.keys) - 1)
    found = (flat >= 0) & (judged.keys[at] == keys)
    rel = np.where(found, judged.grades[at], k.NONPOOL)
    rel[found & (rel < 0)] = k.UNJUDGED
    if options.judged_only:  # -J: the judged documents, in their order
        keep = rel >= 0
        rel, rows = rel[keep], rows[keep]
        start = np.zeros(len(qids) + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=len(qids)), out=start[1:])
    return Tables(rel.astype(np.int64), start, rows, judged, np.array(bogus), options)


@dataclass
class Tables:
    rel: np.ndarray
    start: np.ndarray
    rows: np.ndarray
    judged: object  # metrics.standard.Judged of the queries, in order
    bogus: np.ndarray
    options: object

    @property
    def n(self) -> int:
        return len(self.start) - 1

    def _count(self, mask) -> np.ndarray:
        return np.bincount(self.rows[mask], minlength=self.n).astype(np.int64)

    @cached_property
    def num_ret(self) -> np.ndarray:
        return np.diff(self.start)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return self._count(self.rel >= self.options.level)

    @cached_property
    def num_nonpool(self) -> np.ndarray:
        return self._count(self.rel == k.NONPOOL)

    @cached_property
    def num_unjudged(self) -> np.ndarray:
        return self._count(self.rel == k.UNJUDGED)

    def _judged_count(self, mask) -> np.ndarray:
        return np.bincount(self.judged.rows[mask], minlength=self.n).astype(np.int64)

    @cached_property
    def num_rel(self) -> np.ndarray:
        return self._judged_count(self.judged.grades >= self.options.level)

    @cached_property
    def num_nonrel(self) -> np.ndarray:
        g = self.judged.grades
        return self._judged_count((g >= 0) & (g < self.options.level))

    @cached_property
    def levels(self):
        """Each query's grades with judgments (>= 0), ascending, with how many: (offsets,
        levels, counts)."""
        g, r = self.judged.grades, self.judged.rows
        keep = g >= 0
        g, r = g[keep], r[keep]
        order = np.lexsort((g, r))
        g, r = g[order], r[order]
        new = np.ones(len(g), bool)
        new[1:] = (g[1:] != g[:-1]) | (r[1:] != r[:-1])
        firsts = np.flatnonzero(new)
        counts = np.diff(np.append(firsts, len(g)))
        per_query = np.bincount(r[firsts], minlength=self.n)
        offsets = np.zeros(self.n + 1, np.int64)
        np.cumsum(per_query, out=offsets[1:])
        levels, counts = g[firsts].astype(np.int64), counts.astype(np.int64)
        if (per_query == 0).any():
            # A query judged only below 0: trec_eval leaves its grade counts as the query
            # before left them (it clears and fills max grade + 1 of them: none), and shows
            # them in ideal_dcg. (Its first query so judged is refused, in trec_eval.evaluate.)
            source = np.where(per_query > 0, np.arange(self.n), 0)
            np.maximum.accumulate(source, out=source)
            take = [np.arange(offsets[q], offsets[q + 1]) for q in source.tolist()]
            lengths = np.fromiter(map(len, take), np.int64, self.n)
            picked = np.concatenate(take) if take else np.zeros(0, np.int64)
            levels, counts = levels[picked], counts[picked]
            offsets = np.zeros(self.n + 1, np.int64)
            np.cumsum(lengths, out=offsets[1:])
        return offsets, levels, counts

    def gains(self, pairs: Sequence[tuple[str, float]]):
        """setup_gains for every query: the pairs naming a grade set its gain, every other
        grade with judgments gains its own value; sorted by gain as trec_eval's comparison
        does (the difference cast to int). Flat (offsets, levels, gains, counts)."""
        offsets, levels, counts = self.levels
        given = [(atol(key), value) for key, value in pairs if _valid_int(key)]
        out_start = [0]
        out_level: list[int] = []
        out_gain: list[float] = []
        out_count: list[int] = []
        for q in range(self.n):
            have = dict(
                zip(
                    levels[offsets[q] : offsets[q + 1]].tolist(),
                    counts[offsets[q] : offsets[q + 1]].tolist(),
                )
            )
            table = [[lv, gain, 0] for lv, gain in given]
            for lv, count in have.items():
                for row in table:
                    if row[0] == lv:
                        row[2] = count
                        break
                else:
                    table.append([lv, float(lv), count])
            table.sort(key=cmp_to_key(lambda a, b: int(a[1] - b[1])))
            for lv, gain, count in table:
                out_level.append(lv)
                out_gain.append(gain)
                out_count.append(count)
            out_start.append(len(out_level))
        return (
            np.array(out_start, np.int64),
            np.array(out_level, np.int64),
            np.array(out_gain, np.float64),
            np.array(out_count, np.int64),
        )

    def compute(self, asked) -> list:
        """The per-query values of one measure, one series per printed name."""
        name = asked.measure.name
        lv = self.options.level
        rel, start = self.rel, self.start
        if name == "num_ret":
            out = [self.num_ret.astype(np.float64)]
        elif name == "num_rel":
            out = [self.num_rel.astype(np.float64)]
        elif name == "num_rel_ret":
            out = [self.num_rel_ret.astype(np.float64)]
        elif name == "num_nonrel_judged_ret":
            ret = self.num_ret - self.num_nonpool - self.num_unjudged - self.num_rel_ret
            if self.options.judged_only:  # trec_eval counts neither on the -J path
                ret = self.num_ret - self.num_rel_ret
            out = [ret.astype(np.float64)]
        elif name in ("map", "gm_map"):
            out = [k.ap(k.GM_MAP if name == "gm_map" else k.MAP, rel, start, lv, self.num_rel)]
        elif name == "Rprec":
            out = [k.r_prec(rel, start, lv, self.num_rel)]
        elif name in ("bpref", "gm_bpref"):
            kind = k.GM_BPREF if name == "gm_bpref" else k.BPREF
            out = [k.judged(kind, rel, start, lv, self.num_rel, self.num_nonrel)]
        elif name == "recip_rank":
            out = [k.recip_rank(rel, start, lv)]
        elif name in ("iprec_at_recall", "11pt_avg"):
            cutoffs = self._rounded(asked.values)
            values = k.iprec(rel, start, lv, self.num_rel_ret, cutoffs, name == "11pt_avg")
            out = list(values.T)
        elif name == "Rprec_mult":
            # trec_eval 10 still takes (long)(p * R + 0.9) here
            cutoffs = np.array(
                [[int(p * r + 0.9) for p in asked.values] for r in self.num_rel.tolist()],
                np.int64,
            ).reshape(self.n, len(asked.values))
            out = list(k.r_prec_mult(rel, start, lv, self.num_rel_ret, cutoffs).T)
        elif name in _CUT_KINDS:
            cuts = np.array(asked.values, np.int64)
            out = list(k.at_cuts(_CUT_KINDS[name], rel, start, lv, self.num_rel, cuts).T)
        elif name == "ndcg_cut":
            offsets, levels, counts = self.levels
            cuts = np.array(asked.values, np.int64)
            out = list(k.ndcg_cut(rel, start, offsets, levels, counts, cuts).T)
        elif name == "infAP":
            out = [k.judged(k.INF_AP, rel, start, lv, self.num_rel, self.num_nonrel)]
        elif name == "binG":
            out = [k.ap(k.BIN_G, rel, start, lv, self.num_rel)]
        elif name in _GAIN_KINDS or name in ("dcg", "ideal_dcg"):
            out = [self._gain_measure(name, asked.values)]
        elif name == "rbp":
            g_start, g_level, g_gain, _ = self.gains(asked.values)
            out = [k.rbp(rel, start, g_start, g_level, g_gain, _p(asked.values))]
        elif name == "rbp_resid":
            out = [k.rbp_resid(rel, start, _p(asked.values))]
        elif name == "utility":
            a, b, c, d = asked.values
            nrr, ret, nr = self.num_rel_ret, self.num_ret, self.num_rel
            coll = self.options.docs_in_collection
            out = [a * nrr + b * (ret - nrr) + c * (nr - nrr) + d * (coll + nrr - ret - nr)]
        elif name.startswith("set_"):
            out = [self._set(name, asked.values)]
        elif name == "relstring":
            out = [self._relstring(int(asked.values[0]), asked.text is None)]
        else:  # pragma: no cover - every measure of MEASURES is handled above
            raise AssertionError(name)
        # trec_eval matches these by the printed name: 'utility' and 'rbp_resid' only
        # without parameters, every 'unj...' (the first three letters)
        zeroed = name == "unj" or (name in _ZEROED and asked.text is None)
        if zeroed and self.bogus.any():
            out = [np.where(self.bogus, 0.0, series) for series in out]
        return out

    def _rounded(self, points) -> np.ndarray:
        """iprec_at_recall's cut-offs in relevant documents: lround(p * R) (trec_eval 10),
        or (long)(p * R + 0.9) with version 9."""
        old = self.options.version == 9
        rounded = [
            [int(p * r + 0.9) if old else _lround(p * r) for p in points]
            for r in self.num_rel.tolist()
        ]
        return np.array(rounded, np.int64).reshape(self.n, len(points))

    def _gain_measure(self, name: str, pairs) -> np.ndarray:
        g_start, g_level, g_gain, g_count = self.gains(pairs)
        if name in ("dcg", "ideal_dcg"):
            kind = k.DCG if name == "dcg" else k.IDEAL_DCG
        else:
            kind = _GAIN_KINDS[name]
        return k.gains(kind, self.rel, self.start, g_start, g_level, g_gain, g_count, self.num_rel)

    def _set(self, name: str, params) -> np.ndarray:
        nrr = self.num_rel_ret.astype(np.float64)
        ret = self.num_ret.astype(np.float64)
        nr = self.num_rel.astype(np.float64)
        out = np.zeros(self.n)
        with np.errstate(divide="ignore", invalid="ignore"):
            if name == "set_P":
                np.divide(nrr, ret, out=out, where=ret > 0)
            elif name == "set_recall":
                np.divide(nrr, nr, out=out, where=nr > 0)
            elif name == "set_relative_P":
                np.divide(nrr, np.minimum(ret, nr), out=out, where=(ret > 0) & (nr > 0))
            elif name == "set_map":
                np.divide(nrr * nrr, ret * nr, out=out, where=(ret > 0) & (nr > 0))
            else:  # set_F
                x = params[0]
                has = nrr > 0
                p = np.divide(nrr, ret, out=np.zeros(self.n), where=has)
                r = np.divide(nrr, nr, out=np.zeros(self.n), where=has)
                np.divide((x + 1.0) * p * r, x * p + r, out=out, where=has)
        return out

    def _relstring(self, length: int, cleared: bool) -> list[str]:
        chars = []
        for q in range(self.n):
            if self.bogus[q] and cleared:  # trec_eval clears 'relstring', not 'relstring_N'
                chars.append("")
                continue
            part = self.rel[self.start[q] : self.start[q] + max(0, min(length, self.num_ret[q]))]
            chars.append("".join(_REL_CHAR(int(r)) for r in part))
        return chars


def _REL_CHAR(r: int) -> str:
    if r > 9:
        return ">"
    if r >= 0:
        return str(r)
    return "-" if r == k.NONPOOL else "." if r == k.UNJUDGED else "<"


def _p(pairs) -> float:
    """rbp's persistence: the pair named p (0.9 by default); the last one given wins."""
    p = 0.9
    for key, value in pairs:
        if key == "p":
            p = value
    return p


def _lround(x: float) -> int:
    """C's lround: halves away from zero (x + 0.5 would round up 0.49999999999999994)."""
    whole = math.floor(abs(x))
    return (whole + (abs(x) - whole >= 0.5)) * (1 if x >= 0 else -1)


def _valid_int(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    return bool(body) and all("0" <= c <= "9" for c in body)


def atol(text: str) -> int:
    """C's atol: leading blanks, a sign and digits; 0 where there are none."""
    found = re.match(r"\s*([+-]?\d+)", text)
    return int(found.group(1)) if found else 0
