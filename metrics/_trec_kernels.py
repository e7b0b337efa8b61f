"""trec_eval 10.0's per-query measures, compiled: each function is the loop of one of its
m_*.c files, written again over every query at once, with the same operations in the same
order so that every double comes out bit for bit as trec_eval computes it (no fast-math).

Input, per query q: rel[start[q]:start[q+1]], the relevance of each retrieved document in
rank order (a grade >= 0, NONPOOL for a document the qrels lack, UNJUDGED for a negative
judgment), and counts made once by metrics.trec_eval. numba compiles on first use and caches
the machine code beside the module. Imported by metrics.trec_eval only."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

NONPOOL = -1  # trec_eval's RELVALUE_NONPOOL
UNJUDGED = -2  # RELVALUE_UNJUDGED
MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001
# IEEE division (x / 0 is inf or nan, as in C), never Python's ZeroDivisionError
_jit = njit(cache=True, error_model="numpy")


# what ap() computes
MAP, GM_MAP, BIN_G = 0, 1, 2


@_jit
def ap(kind, rel, start, level, num_rel):  # pragma: no cover - compiled
    """map, gm_map (the log of AP floored at MIN_GEO_MEAN) or binG: a sum over the relevant
    retrieved documents, divided by the number relevant."""
    out = np.zeros(len(start) - 1)
    for q in range(len(out)):
        s = start[q]
        rel_so_far = 0
        total = 0.0
        for i in range(start[q + 1] - s):
            if rel[s + i] >= level:
                rel_so_far += 1
                if kind == BIN_G:
                    total += 1.0 / math.log2(float(3 + i - rel_so_far))
                else:
                    total += rel_so_far / (i + 1)
        if kind == GM_MAP:
            if rel_so_far:
                total = total / num_rel[q]
            out[q] = math.log(max(total, MIN_GEO_MEAN))
        elif rel_so_far:
            out[q] = total / num_rel[q]
    return out


@_jit
def r_prec(rel, start, level, num_rel):  # pragma: no cover - compiled
    out = np.zeros(len(start) - 1)
    for q in range(len(out)):
        s = start[q]
        look = min(start[q + 1] - s, num_rel[q])
        if look == 0:
            continue
        rel_so_far = 0
        for i in range(look):
            if rel[s + i] >= level:
                rel_so_far += 1
        out[q] = rel_so_far / num_rel[q]
    return out


# what judged() computes
BPREF, GM_BPREF, INF_AP = 0, 1, 2


@_jit
def judged(kind, rel, start, level, num_rel, num_nonrel):  # pragma: no cover - compiled
    """bpref, gm_bpref (the log of bpref floored at MIN_GEO_MEAN) or infAP: sums over the
    judged retrieved documents, divided by the number relevant."""
    out = np.zeros(len(start) - 1)
    for q in range(len(out)):
        s = start[q]
        nonrel_so_far = 0
        rel_so_far = 0
        unjudged_so_far = 0
        value = 0.0
        for j in range(start[q + 1] - s):
            r = rel[s + j]
            if r == NONPOOL:
                continue
            if r == UNJUDGED:
                unjudged_so_far += 1
                continue
            if 0 <= r < level:
                nonrel_so_far += 1
                continue
            rel_so_far += 1
            if kind == INF_AP:
                if j == 0:
                    value += 1.0
                else:
                    fj = float(j)
                    value += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                        (rel_so_far - 1 + nonrel_so_far + unjudged_so_far) / fj
                    ) * (
                        (rel_so_far - 1 + INFAP_EPSILON)
                        / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON)
                    )
            elif nonrel_so_far > 0:
                value += 1.0 - (min(nonrel_so_far, num_rel[q]) / min(num_nonrel[q], num_rel[q]))
            else:
                value += 1.0
        if num_rel[q]:
            value /= num_rel[q]
        out[q] = math.log(max(value, MIN_GEO_MEAN)) if kind == GM_BPREF else value
    return out


@_jit
def recip_rank(rel, start, level):  # pragma: no cover - compiled
    out = np.zeros(len(start) - 1)
    for q in range(len(out)):
        s = start[q]
        for i in range(start[q + 1] - s):
            if rel[s + i] >= level:
                out[q] = 1.0 / (i + 1)
                break
    return out


@_jit
def iprec(rel, start, level, num_rel_ret, cutoffs, average):  # pragma: no cover - compiled
    """iprec_at_recall at cutoffs[q, c] relevant documents (the caller rounds the recall
    levels as the version asked for does); average: 11pt_avg, their mean in column 0."""
    n = cutoffs.shape[1]
    out = np.zeros((len(start) - 1, 1 if average else n))
    for q in range(len(out)):
        s, num_ret = start[q], start[q + 1] - start[q]
        cut = n - 1
        while cut >= 0 and cutoffs[q, cut] > num_rel_ret[q]:
            cut -= 1
        int_precis = num_rel_ret[q] / num_ret
        total = 0.0
        rel_so_far = num_rel_ret[q]
        i = num_ret
        while i > 0 and rel_so_far > 0:
            precis = rel_so_far / i
            if int_precis < precis:
                int_precis = precis
            if rel[s + i - 1] >= level:
                while cut >= 0 and rel_so_far == cutoffs[q, cut]:
                    if average:
                        total += int_precis
                    else:
                        out[q, cut] = int_precis
                    cut -= 1
                rel_so_far -= 1
            i -= 1
        while cut >= 0:
            if average:
                total += int_precis
            else:
                out[q, cut] = int_precis
            cut -= 1
        if average:
            out[q, 0] = total / n
    return out


@_jit
def r_prec_mult(rel, start, level, num_rel_ret, cutoffs):  # pragma: no cover - compiled
    """Rprec_mult at cutoffs[q, c] documents."""
    n = cutoffs.shape[1]
    out = np.zeros((len(start) - 1, n))
    for q in range(len(out)):
        s, num_ret = start[q], start[q + 1] - start[q]
        cut = n - 1
        while cut >= 0 and cutoffs[q, cut] > num_ret:
            out[q, cut] = num_rel_ret[q] / cutoffs[q, cut]
            cut -= 1
        rel_so_far = num_rel_ret[q]
        i = num_ret
        while i > 0 and rel_so_far > 0:
            precis = rel_so_far / i
            while cut >= 0 and i == cutoffs[q, cut]:
                out[q, cut] = precis
                cut -= 1
            if rel[s + i - 1] >= level:
                rel_so_far -= 1
            i -= 1
    return out


# what cut_counts counts, and how each measure turns the count at a cut-off into a value
_P, _RECALL, _RELATIVE_P, _SUCCESS, _UNJ, _MAP_CUT = 0, 1, 2, 3, 4, 5


@_jit
def _at_cut(kind, count, cut, num_rel):  # pragma: no cover - compiled
    if kind == _P:
        return count / cut
    if kind == _RECALL:
        return count / num_rel
    if kind == _RELATIVE_P:
        return count / (num_rel if cut > num_rel else cut)
    if kind == _SUCCESS:
        return 1.0 if count else 0.0
    return count / cut  # unj


@_jit
def at_cuts(kind, rel, start, level, num_rel, cutoffs):  # pragma: no cover - compiled
    """P, recall, relative_P, success, unj or map_cut at the sorted cut-offs, with trec_eval's
    loop: the value at cut-off k is taken on reaching rank k + 1, or after the last rank."""
    n = len(cutoffs)
    out = np.zeros((len(start) - 1, n))
    for q in range(len(out)):
        if num_rel[q] == 0 and (kind == _RECALL or kind == _RELATIVE_P or kind == _MAP_CUT):
            continue
        s = start[q]
        c = 0
        count = 0
        total = 0.0
        for i in range(start[q + 1] - s):
            if i == cutoffs[c]:
                if kind == _MAP_CUT:
                    out[q, c] = total / num_rel[q]
                else:
                    out[q, c] = _at_cut(kind, count, i, num_rel[q])
                c += 1
                if c == n:
                    break
            r = rel[s + i]
            if kind == _UNJ:
                if r == NONPOOL or r == UNJUDGED:
                    count += 1
            elif r >= level:
                count += 1
                if kind == _MAP_CUT:
                    total += count / (i + 1)
        while c < n:
            if kind == _MAP_CUT:
                out[q, c] = total / num_rel[q]
            else:
                out[q, c] = _at_cut(kind, count, cutoffs[c], num_rel[q])
            c += 1
    return out


@_jit
def ndcg_cut(rel, start, lv_start, lv_level, lv_count, cutoffs):  # pragma: no cover - compiled
    """ndcg_cut: gains are the grades, the ideal ranking from each query's grade counts
    (lv_*: its levels with documents, ascending), whatever the relevance level."""
    n = len(cutoffs)
    out = np.zeros((len(start) - 1, n))
    for q in range(len(out)):
        s = start[q]
        c = 0
        total = 0.0
        for i in range(start[q + 1] - s):
            if i == cutoffs[c]:
                out[q, c] = total
                c += 1
                if c == n:
                    break
            gain = float(rel[s + i])
            if gain > 0:
                total += gain / math.log2(float(i + 2))
        while c < n:
            out[q, c] = total
            c += 1
        c = 0
        at = lv_start[q + 1] - 1  # the highest level with documents
        lvl_count = 0
        ideal = 0.0
        i = 0
        while True:
            lvl_count += 1
            while at >= lv_start[q] and lv_level[at] > 0 and lvl_count > lv_count[at]:
                at -= 1
                lvl_count = 1
            if at < lv_start[q] or lv_level[at] <= 0:
                break
            if i == cutoffs[c]:
                if ideal > 0.0:
                    out[q, c] /= ideal
                c += 1
                if c == n:
                    break
            ideal += lv_level[at] / math.log2(float(i + 2))
            i += 1
        while c < n:
            if ideal > 0.0:
                out[q, c] /= ideal
            c += 1
    return out


@_jit
def _gain(r, g_level, g_gain, s, e):  # pragma: no cover - compiled
    for k in range(s, e):
        if g_level[k] == r:
            return g_gain[k]
    return 0.0


# what gains() computes
NDCG, NDCG_REL, RNDCG, G, DCG, IDEAL_DCG = 0, 1, 2, 3, 4, 5


@_jit
def gains(kind, rel, start, g_start, g_level, g_gain, g_count, num_rel):  # pragma: no cover
    """ndcg, ndcg_rel, Rndcg, G, dcg or ideal_dcg with each query's gain table
    g_*[g_start[q]:g_start[q+1]]
    (setup_gains: sorted by gain, with the number of judged documents at each level)."""
    out = np.zeros(len(start) - 1)
    for q in range(len(out)):
        s, num_ret = start[q], start[q + 1] - start[q]
        gs, ge = g_start[q], g_start[q + 1]
        if kind == RNDCG and num_rel[q] == 0:
            continue
        results_dcg = 0.0
        ideal_dcg = 0.0
        total = 0.0  # ndcg_rel, Rndcg: their sums
        num_rel_ret = 0
        n_rel = 0
        changes = 0
        sum_results = 0.0
        sum_ideal = 0.0
        sum_cost = 0.0
        min_cost = 1.0
        cur = ge - 1
        ideal_gain = g_gain[cur] if cur >= gs else 0.0
        old_ideal_gain = ideal_gain
        num_at_level = 0
        i = 0
        while i < num_ret and ideal_gain > 0.0:
            results_gain = _gain(rel[s + i], g_level, g_gain, gs, ge)
            if kind == G:
                sum_results += results_gain
            elif kind != RNDCG and results_gain != 0:
                results_dcg += results_gain / math.log2(float(i + 2))
            num_at_level += 1
            while cur >= gs and num_at_level > g_count[cur]:
                num_at_level = 1
                cur -= 1
                ideal_gain = g_gain[cur] if cur >= gs else 0.0
            if kind == RNDCG:
                if old_ideal_gain != ideal_gain:
                    if ideal_dcg > 0.0:
                        total += results_dcg / ideal_dcg
                        changes += 1
                    old_ideal_gain = ideal_gain
                if results_gain != 0:
                    results_dcg += results_gain / math.log2(float(i + 2))
            if kind == G:
                if ideal_gain > 0.0:
                    sum_ideal += ideal_gain
                sum_cost += ideal_gain if ideal_gain >= min_cost else min_cost
                if results_gain != 0:
                    results_dcg += results_gain / math.log2(2 + sum_cost - sum_results)
            elif ideal_gain > 0.0:
                n_rel += 1
                ideal_dcg += ideal_gain / math.log2(float(i + 2))
            if kind == NDCG_REL and results_gain > 0:
                total += results_dcg / ideal_dcg
                num_rel_ret += 1
            i += 1
        tail = i < num_ret
        while i < num_ret:
            results_gain = _gain(rel[s + i], g_level, g_gain, gs, ge)
            if kind == G:
                sum_results += results_gain
                sum_cost += min_cost
                if results_gain != 0:
                    results_dcg += results_gain / math.log2(2 + sum_cost - sum_results)
            else:
                if results_gain != 0:
                    results_dcg += results_gain / math.log2(float(i + 2))
                if kind == NDCG_REL and results_gain > 0:
                    total += results_dcg / ideal_dcg
                    num_rel_ret += 1
            i += 1
        if kind == RNDCG and tail and ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            changes += 1
        while ideal_gain > 0.0:
            num_at_level += 1
            while cur >= gs and num_at_level > g_count[cur]:
                num_at_level = 1
                cur -= 1
                ideal_gain = g_gain[cur] if cur >= gs else 0.0
            if kind == RNDCG and old_ideal_gain != ideal_gain:
                if ideal_dcg > 0.0:
                    total += results_dcg / ideal_dcg
                    changes += 1
                old_ideal_gain = ideal_gain
            if ideal_gain > 0.0:
                if kind == G:
                    sum_ideal += ideal_gain
                else:
                    n_rel += 1
                    ideal_dcg += ideal_gain / math.log2(float(i + 2))
            i += 1
        if kind == NDCG:
            if ideal_dcg > 0.0:
                out[q] = results_dcg / ideal_dcg
        elif kind == NDCG_REL:
            total += (n_rel - num_rel_ret) * results_dcg / ideal_dcg
            if total > 0.0:
                out[q] = total / n_rel
        elif kind == RNDCG:
            out[q] = total / changes
        elif kind == G:
            if sum_ideal > 0.0:
                out[q] = results_dcg / sum_ideal
        elif kind == DCG:
            out[q] = results_dcg
        else:
            out[q] = ideal_dcg
    return out


@_jit
def rbp(rel, start, g_start, g_level, g_gain, p):  # pragma: no cover - compiled
    """rbp with each query's gain table; gains outside [0, 1] are rescaled to it."""
    out = np.zeros(len(start) - 1)
    for q in range(len(out)):
        gs, ge = g_start[q], g_start[q + 1]
        # trec_eval leaves min and max unset before this loop; 0 is what its build starts from
        lo, hi = 0.0, 0.0
        for k in range(gs, ge):
            lo = min(lo, g_gain[k])
            hi = max(hi, g_gain[k])
        scaled = g_gain[gs:ge].copy()
        if lo < 0 or hi > 1:
            for k in range(len(scaled)):
                scaled[k] = (scaled[k] - lo) / (hi - lo)
        total = 0.0
        cur_p = 1.0
        for i in range(start[q], start[q + 1]):
            gain = _gain(rel[i], g_level[gs:ge], scaled, 0, ge - gs)
            if gain != 0:
                total += gain * cur_p
            cur_p = cur_p * p
        out[q] = (1.0 - p) * total
    return out


@_jit
def rbp_resid(rel, start, p):  # pragma: no cover - compiled
    out = np.zeros(len(start) - 1)
    for q in range(len(out)):
        unj = 0
        total = 0.0
        cur_p = 1.0
        for i in range(start[q], start[q + 1]):
            if rel[i] < 0:
                unj += 1
                total += cur_p
            cur_p = cur_p * p
        if unj:
            out[q] = cur_p + (1 - p) * total
    return out
