"""One compiled pass over every ranking: the counts all standard metrics are built from.

numba compiles this on first use and caches the machine code beside the module (or in the
user cache when that is read-only), so later processes load it in milliseconds. Imported
lazily by metrics.standard: runs that ask only for group metrics never load numba."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _judged(jcodes, s, e, c):  # pragma: no cover
    """Where code `c` is among one query's judged codes jcodes[s:e] (sorted), or -1: a
    binary search, since a query has few judgments."""
    lo, hi = s, e
    while lo < hi:
        mid = (lo + hi) // 2
        if jcodes[mid] < c:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < e and jcodes[lo] == c else -1


@njit(cache=True, nogil=True)
def scan(flat, offsets, jcodes, jgrades, jstarts, cuts, level, width):  # pragma: no cover
    """Per query i, ranking flat[offsets[i]:offsets[i+1]] (chunk codes, -1 = unjudged) and
    judgments jcodes/jgrades[jstarts[i]:jstarts[i+1]] (codes sorted ascending).

    At each cut c (ascending, c >= 1) over the first min(c, width) ranks: relevant count,
    sum of precision at each relevant rank, DCG with grades as gains, and the ideal DCG.
    Also the 0-based rank of the first relevant chunk (width if none), the relevant count
    in the top R (R = number of relevant judgments, at least 1, at most width) and R."""
    n = offsets.shape[0] - 1
    nc = cuts.shape[0]
    rel_at = np.zeros((n, nc), np.int32)
    ap_at = np.zeros((n, nc), np.float64)
    dcg_at = np.zeros((n, nc), np.float64)
    idcg_at = np.zeros((n, nc), np.float64)
    first = np.full(n, width, np.int64)
    top_r = np.zeros(n, np.int64)
    num_rel = np.zeros(n, np.int64)
    discount = np.log2(np.arange(2, width + 2).astype(np.float64))
    for i in range(n):
        s, e = jstarts[i], jstarts[i + 1]
        nr = 0
        npos = 0
        for t in range(s, e):
            if jgrades[t] >= level:
                nr += 1
            if jgrades[t] > 0:
                npos += 1
        num_rel[i] = nr
        # ideal ranking: positive grades, best first
        ideal = np.empty(npos, np.int64)
        p = 0
        for t in range(s, e):
            if jgrades[t] > 0:
                ideal[p] = jgrades[t]
                p += 1
        ideal = np.sort(ideal)[::-1]
        total = 0.0
        ci = 0
        for r in range(min(npos, width)):
            while ci < nc and cuts[ci] <= r:
                idcg_at[i, ci] = total
                ci += 1
            total += ideal[r] / discount[r]
        while ci < nc:
            idcg_at[i, ci] = total
            ci += 1
        # the ranking
        a = offsets[i]
        m = min(offsets[i + 1] - a, width)
        r_cut = min(max(nr, 1), width)
        rel = 0
        ap = 0.0
        dcg = 0.0
        ci = 0
        for j in range(m):
            while ci < nc and cuts[ci] <= j:
                rel_at[i, ci] = rel
                ap_at[i, ci] = ap
                dcg_at[i, ci] = dcg
                ci += 1
            if j == r_cut:
                top_r[i] = rel
            at = _judged(jcodes, s, e, flat[a + j])
            if at >= 0:
                g = jgrades[at]
                if g > 0:
                    dcg += g / discount[j]
                if g >= level:
                    rel += 1
                    ap += rel / (j + 1.0)
                    if first[i] == width:
                        first[i] = j
        if m <= r_cut:
            top_r[i] = rel
        while ci < nc:
            rel_at[i, ci] = rel
            ap_at[i, ci] = ap
            dcg_at[i, ci] = dcg
            ci += 1
    return rel_at, ap_at, dcg_at, idcg_at, first, top_r, num_rel


@njit(cache=True, nogil=True)
def scan_trec(flat, offsets, jcodes, jgrades, jstarts, level, points, cuts):  # pragma: no cover
    """What the measures beyond `scan` need, per query (judgments as for scan), by the rules
    of trec_eval 9.0.8 and of ir_measures: bpref, infAP, the
    interpolated precision at each recall level in `points`, and at each cut c of `cuts`
    (ascending, c >= 1) the judged chunks and ERR over the first c ranks.

    A judged grade below 0 is in the pool but unjudged (bpref skips it, as it skips chunks
    nobody judged; infAP counts it apart); 0 <= grade < level is judged non-relevant. A
    recall level p stands for the first (int)(p * R + 0.9) relevant. ERR (gdeval's, which
    ir_measures reads) gives grade g the stopping chance (2^g - 1) / 2^4."""
    n = offsets.shape[0] - 1
    npts = points.shape[0]
    nc = cuts.shape[0]
    bpref = np.zeros(n, np.float64)
    infap = np.zeros(n, np.float64)
    iprec = np.zeros((n, npts), np.float64)
    judged_at = np.zeros((n, nc), np.int64)
    err_at = np.zeros((n, nc), np.float64)
    at_point = np.empty(npts, np.int64)
    for i in range(n):
        s, e = jstarts[i], jstarts[i + 1]
        nr = 0
        nn = 0
        for t in range(s, e):
            if jgrades[t] >= level:
                nr += 1
            elif jgrades[t] >= 0:
                nn += 1
        a = offsets[i]
        m = offsets[i + 1] - a
        rel = np.zeros(m, np.bool_)
        nonrel_seen = 0
        pool_unjudged = 0
        found = 0
        pref = 0.0
        inf = 0.0
        judged = 0
        err = 0.0
        decay = 1.0
        ci = 0
        for j in range(m):
            while ci < nc and cuts[ci] <= j:
                judged_at[i, ci] = judged
                err_at[i, ci] = err
                ci += 1
            at = _judged(jcodes, s, e, flat[a + j])
            if at < 0:
                continue  # nobody judged it: outside bpref's pairs and infAP's pool
            judged += 1
            g = jgrades[at]
            if g > 0:
                stop = (2.0**g - 1.0) / 16.0
                err += stop * decay / (j + 1.0)
                decay *= 1.0 - stop
            if g < 0:
                pool_unjudged += 1
                continue
            if g < level:
                nonrel_seen += 1
                continue
            rel[j] = True
            found += 1
            if nonrel_seen > 0:
                pref += 1.0 - min(nonrel_seen, nr) / min(nn, nr)
            else:
                pref += 1.0
            if j == 0:
                inf += 1.0
            else:  # trec_eval's m_infap.c term by term
                fj = float(j)
                above = found - 1 + nonrel_seen + pool_unjudged
                inf += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (above / fj) * (
                    (found - 1 + 1e-5) / (found - 1 + nonrel_seen + 2e-5)
                )
        while ci < nc:
            judged_at[i, ci] = judged
            err_at[i, ci] = err
            ci += 1
        bpref[i] = pref / nr if nr else 0.0
        infap[i] = inf / nr if nr else 0.0
        for p in range(npts):
            at_point[p] = np.int64(points[p] * nr + 0.9)
        cur = npts - 1
        while cur >= 0 and at_point[cur] > found:
            cur -= 1
        best = found / m if m else 0.0  # interpolated: the best precision from here down
        left = found
        j = m
        while j > 0 and left > 0:
            precision = left / j
            if best < precision:
                best = precision
            if rel[j - 1]:
                while cur >= 0 and left == at_point[cur]:
                    iprec[i, cur] = best
                    cur -= 1
                left -= 1
            j -= 1
        while cur >= 0:
            iprec[i, cur] = best
            cur -= 1
    return bpref, infap, iprec, judged_at, err_at
