"""Compiled kernels for large runs: parse a TREC run file's bytes, put rows in canonical
order, match chunk ids by hash.

Chunk ids are byte ranges of one buffer (UTF-8, whose byte order is code point order: the
tie-break rule of harness.core.run.canonical). numba compiles on first use and caches the
machine code beside the module; harness.core.run.store imports this module only for runs large
enough to repay loading numba. A kernel that meets anything it does not handle exactly answers
BAIL, and the caller takes the line-by-line path, which gives the exact result or error."""

from __future__ import annotations

import numpy as np
from numba import njit

OK = 0
BAIL = 1  # something the fast path does not decide: take the line-by-line reader
DUPLICATE = 2  # a chunk id twice in one query
FULL = 3  # an output array of the parser is full: parse again with room for every row

# byte classes for TREC tokens, as str.splitlines() then str.split() see them
_TOKEN, _SPACE, _BREAK, _WIDE = 0, 1, 2, 3
BYTE_CLASS = np.zeros(256, np.uint8)
BYTE_CLASS[[0x20, 0x09, 0x1F]] = _SPACE  # split() separators that do not end a line
BYTE_CLASS[[0x0A, 0x0D, 0x0B, 0x0C, 0x1C, 0x1D, 0x1E]] = _BREAK  # splitlines() boundaries
BYTE_CLASS[0x80:] = _WIDE  # non-ASCII: checked as UTF-8 and for Unicode white space

POW10 = np.array([10.0**i for i in range(23)])  # exact in float64
_SEED = np.uint64(0x9E3779B97F4A7C15)
_MUL = np.uint64(0xFF51AFD7ED558CCD)
_MUL2 = np.uint64(0xC4CEB9FE1A85EC53)
_MAX_EXACT = 1 << 53


@njit(cache=True, nogil=True, inline="always")
def _mix(h, w):  # pragma: no cover - compiled
    h = (h ^ w) * _MUL
    return h ^ (h >> np.uint64(32))


@njit(cache=True, nogil=True, inline="always")
def _finish(h, w, length):  # pragma: no cover - compiled
    h = _mix(h, w ^ (np.uint64(length) << np.uint64(56)))
    h = h * _MUL2
    return h ^ (h >> np.uint64(29))


@njit(cache=True, nogil=True, inline="always")
def _hash(b, s, e):  # pragma: no cover - compiled
    """A 64-bit hash of b[s:e]: bytes packed eight to a word, each word mixed in (the parser
    computes the same while it copies an id)."""
    h = _SEED
    w = np.uint64(0)
    k = 0
    for i in range(s, e):
        w = (w << np.uint64(8)) | np.uint64(b[i])
        k += 1
        if k == 8:
            h = _mix(h, w)
            w = np.uint64(0)
            k = 0
    return _finish(h, w, e - s)


@njit(cache=True, nogil=True, inline="always")
def _same(b, s1, e1, c, s2, e2):  # pragma: no cover - compiled
    if e1 - s1 != e2 - s2:
        return False
    for k in range(e1 - s1):
        if b[s1 + k] != c[s2 + k]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _cmp(b, s1, e1, s2, e2):  # pragma: no cover - compiled
    """Byte order of b[s1:e1] against b[s2:e2]: -1, 0 or 1."""
    n1, n2 = e1 - s1, e2 - s2
    for k in range(min(n1, n2)):
        x, y = b[s1 + k], b[s2 + k]
        if x != y:
            return -1 if x < y else 1
    if n1 == n2:
        return 0
    return -1 if n1 < n2 else 1


@njit(cache=True, nogil=True)
def _wide(b, i, n):  # pragma: no cover - compiled
    """Length of the valid UTF-8 sequence at b[i] (a byte >= 0x80) that is not white space;
    0 when it is invalid (Python's strict decoder rejects it) or a Unicode space or line break
    (Python splits there)."""
    c = b[i]
    if 0xC2 <= c <= 0xDF:
        if i + 1 >= n or not 0x80 <= b[i + 1] <= 0xBF:
            return 0
        if c == 0xC2 and (b[i + 1] == 0x85 or b[i + 1] == 0xA0):
            return 0
        return 2
    if 0xE0 <= c <= 0xEF:
        if i + 2 >= n:
            return 0
        c1, c2 = b[i + 1], b[i + 2]
        lo, hi = 0x80, 0xBF
        if c == 0xE0:
            lo = 0xA0
        elif c == 0xED:
            hi = 0x9F  # surrogates
        if not lo <= c1 <= hi or not 0x80 <= c2 <= 0xBF:
            return 0
        if c == 0xE1 and c1 == 0x9A and c2 == 0x80:
            return 0
        if c == 0xE2 and c1 == 0x80 and (c2 <= 0x8A or c2 == 0xA8 or c2 == 0xA9 or c2 == 0xAF):
            return 0
        if c == 0xE2 and c1 == 0x81 and c2 == 0x9F:
            return 0
        if c == 0xE3 and c1 == 0x80 and c2 == 0x80:
            return 0
        return 3
    if 0xF0 <= c <= 0xF4:
        if i + 3 >= n:
            return 0
        lo, hi = 0x80, 0xBF
        if c == 0xF0:
            lo = 0x90
        elif c == 0xF4:
            hi = 0x8F
        if not lo <= b[i + 1] <= hi or not 0x80 <= b[i + 2] <= 0xBF:
            return 0
        if not 0x80 <= b[i + 3] <= 0xBF:
            return 0
        return 4
    return 0


@njit(cache=True, nogil=True, inline="always")
def _number(b, i, pow10):  # pragma: no cover - compiled
    """(value, status, end) of the number starting at b[i], read up to the first byte that
    cannot continue it: status 1 for a plain decimal number (optional sign, digits with an
    optional point, optional exponent: a subset of what float() accepts) whose value is
    exact here (at most 2**53 and 18 digits, |exponent| <= 22: one correctly rounded
    operation, Clinger's fast path); 2 for such a number to be converted elsewhere; 0 when
    no number starts there. The caller checks that the token ends at `end`."""
    neg = False
    if b[i] == 43 or b[i] == 45:
        neg = b[i] == 45
        i += 1
    m = 0
    nd = 0  # digits, leading zeros included (past 18, m is not used)
    frac = 0  # digits after the point
    dot = 0
    while True:
        d = np.int64(b[i]) - 48
        if 0 <= d <= 9:
            m = m * 10 + d
            nd += 1
            frac += dot
        elif d == -2 and dot == 0:  # the point
            dot = 1
        else:
            break
        i += 1
    if nd == 0:
        return 0.0, 0, i
    exp10 = -frac
    if b[i] == 101 or b[i] == 69:
        i += 1
        eneg = False
        if b[i] == 43 or b[i] == 45:
            eneg = b[i] == 45
            i += 1
        first = i
        x = 0
        while 48 <= b[i] <= 57:
            if x < 100000:
                x = x * 10 + (b[i] - 48)
            i += 1
        if i == first:
            return 0.0, 0, i
        exp10 += -x if eneg else x
    if nd > 18:
        return 0.0, 2, i
    if m == 0:
        return (-0.0 if neg else 0.0), 1, i
    if m > _MAX_EXACT or exp10 < -22 or exp10 > 22:
        return 0.0, 2, i
    v = float(m)
    v = v * pow10[exp10] if exp10 >= 0 else v / pow10[-exp10]
    return (-v if neg else v), 1, i


@njit(cache=True, nogil=True, inline="always")
def _scan(b, cls, i):  # pragma: no cover - compiled
    """End of the token starting at b[i]; -1 at invalid UTF-8 or a Unicode space."""
    while True:
        while cls[b[i]] == _TOKEN:
            i += 1
        if cls[b[i]] != _WIDE:
            return i
        w = _wide(b, i, b.shape[0])
        if w == 0:
            return -1
        i += w


@njit(cache=True, nogil=True, inline="always")
def _expect(b, cls, i, ps, pe):  # pragma: no cover - compiled
    """Whether the token at b[i] is b[ps:pe] (a token met before: same bytes, then a break)."""
    for k in range(pe - ps):
        if b[i + k] != b[ps + k]:
            return False
    c = cls[b[i + pe - ps]]
    return c == _SPACE or c == _BREAK


@njit(cache=True, nogil=True)
def parse_lines(b, lo, hi, cls, pow10, ids, starts, hashes, score, row0, row_end, change, slow):
    """Parse the lines of b[lo:hi] (lo and hi at line starts; b[hi - 1] is a line feed, so
    token loops need no bounds checks).

    Rows go to indexes row0..row_end-1 of `starts` (each id's byte start in `ids`, where
    this range's ids are copied from byte lo on), `hashes` (of the id, as _hash) and
    `score`; `change` gets (row, start, end) of each query id token unlike the line
    before's, `slow` the (row, start, end) of each score token left to the caller. Returns
    (status, rows, id bytes end, changes, slow scores): OK; BAIL at anything the fast path
    does not decide exactly (a wrong field count, a rank or score it does not read, a
    Unicode space, invalid UTF-8); FULL when `change` or `slow` is full."""
    rows = row0
    nchange = 0
    nslow = 0
    qs = qe = zs = ze = ts = te = -1  # the last qid, Q0 and tag tokens
    pos = lo
    i = lo
    while i < hi:
        while cls[b[i]] == _SPACE:
            i += 1
        if cls[b[i]] == _BREAK:  # a blank line
            i += 2 if b[i] == 13 and b[i + 1] == 10 else 1
            continue
        if rows >= row_end:
            return BAIL, rows - row0, pos, nchange, nslow
        # 1 qid: usually the previous line's
        if qs >= 0 and _expect(b, cls, i, qs, qe):
            i += qe - qs
        else:
            qs = i
            i = _scan(b, cls, i)
            if i < 0:
                return BAIL, rows - row0, pos, nchange, nslow
            qe = i
            if nchange == change.shape[0]:
                return FULL, rows - row0, pos, nchange, nslow
            change[nchange, 0] = rows
            change[nchange, 1] = qs
            change[nchange, 2] = qe
            nchange += 1
        # 2 Q0
        if cls[b[i]] != _SPACE:
            return BAIL, rows - row0, pos, nchange, nslow
        while cls[b[i]] == _SPACE:
            i += 1
        if zs >= 0 and _expect(b, cls, i, zs, ze):
            i += ze - zs
        else:
            zs = i
            i = _scan(b, cls, i)
            if i <= zs:
                return BAIL, rows - row0, pos, nchange, nslow
            ze = i
        # 3 docid: copied out and hashed on the way
        if cls[b[i]] != _SPACE:
            return BAIL, rows - row0, pos, nchange, nslow
        while cls[b[i]] == _SPACE:
            i += 1
        s = i
        starts[rows] = pos
        h = _SEED
        w = np.uint64(0)
        k = 0
        while True:
            c = cls[b[i]]
            if c == _WIDE:
                e = _wide(b, i, b.shape[0])
                if e == 0:
                    return BAIL, rows - row0, pos, nchange, nslow
                e += i
            elif c == _TOKEN:
                e = i + 1
            else:
                break
            while i < e:
                x = b[i]
                ids[pos] = x
                pos += 1
                i += 1
                w = (w << np.uint64(8)) | np.uint64(x)
                k += 1
                if k == 8:
                    h = _mix(h, w)
                    w = np.uint64(0)
                    k = 0
        if i == s:
            return BAIL, rows - row0, pos, nchange, nslow
        hashes[rows] = _finish(h, w, i - s)
        # 4 rank
        if cls[b[i]] != _SPACE:
            return BAIL, rows - row0, pos, nchange, nslow
        while cls[b[i]] == _SPACE:
            i += 1
        if b[i] == 43 or b[i] == 45:  # [+-]?[0-9]+, a subset of what int() reads
            i += 1
        s = i
        while 48 <= b[i] <= 57:
            i += 1
        if i == s:
            return BAIL, rows - row0, pos, nchange, nslow
        # 5 score
        if cls[b[i]] != _SPACE:
            return BAIL, rows - row0, pos, nchange, nslow
        while cls[b[i]] == _SPACE:
            i += 1
        s = i
        v, st, i = _number(b, i, pow10)  # the token must end there: checked below
        if st == 0:
            return BAIL, rows - row0, pos, nchange, nslow
        if st == 2:
            if nslow == slow.shape[0]:
                return FULL, rows - row0, pos, nchange, nslow
            slow[nslow, 0] = rows
            slow[nslow, 1] = s
            slow[nslow, 2] = i
            nslow += 1
        # 6 tag, then the line must end
        if cls[b[i]] != _SPACE:
            return BAIL, rows - row0, pos, nchange, nslow
        while cls[b[i]] == _SPACE:
            i += 1
        if ts >= 0 and _expect(b, cls, i, ts, te):
            i += te - ts
        else:
            ts = i
            i = _scan(b, cls, i)
            if i <= ts:
                return BAIL, rows - row0, pos, nchange, nslow
            te = i
        while cls[b[i]] == _SPACE:
            i += 1
        if cls[b[i]] != _BREAK:
            return BAIL, rows - row0, pos, nchange, nslow
        i += 2 if b[i] == 13 and b[i + 1] == 10 else 1
        score[rows] = v
        rows += 1
    return OK, rows - row0, pos, nchange, nslow


@njit(cache=True, nogil=True)
def line_after(b, i):  # pragma: no cover - compiled
    """The position after the first line feed at or after i (len(b) when none)."""
    n = b.shape[0]
    while i < n and b[i] != 10:
        i += 1
    return min(i + 1, n)


@njit(cache=True, nogil=True)
def count_lines(b, lo, hi):
    """Line feeds in b[lo:hi]: the rows a part of a file can hold, blank lines aside."""
    n = 0
    for i in range(lo, hi):
        n += b[i] == 10
    return n


@njit(cache=True, nogil=True)
def move_down(ids, starts, id_from, id_end, id_to, row_from, row_end):
    """Move the id bytes ids[id_from:id_end] down to id_to (a forward copy is safe going
    down) and shift the starts of rows row_from..row_end-1 with them."""
    for i in range(id_end - id_from):
        ids[id_to + i] = ids[id_from + i]
    for r in range(row_from, row_end):
        starts[r] -= id_from - id_to


@njit(cache=True, nogil=True)
def query_codes(b, change, rows):  # pragma: no cover - compiled
    """Query codes by first appearance for the runs of rows between query id changes:
    (qcode per row, start and end of each code's first token, number of codes)."""
    nchange = change.shape[0]
    qs = np.empty(nchange, np.int64)
    qe = np.empty(nchange, np.int64)
    size = 16
    while size < 2 * nchange:
        size *= 2
    mask = size - 1
    tab = np.full(size, -1, np.int64)
    qcode = np.empty(rows, np.int32)
    nq = 0
    for c in range(nchange):
        s, e = change[c, 1], change[c, 2]
        p = np.int64(_hash(b, s, e) & np.uint64(mask))
        while tab[p] >= 0 and not _same(b, s, e, b, qs[tab[p]], qe[tab[p]]):
            p = (p + 1) & mask
        if tab[p] < 0:
            tab[p] = nq
            qs[nq] = s
            qe[nq] = e
            nq += 1
        end = change[c + 1, 0] if c + 1 < nchange else rows
        qcode[change[c, 0] : end] = tab[p]
    return qcode, qs[:nq], qe[:nq], nq


@njit(cache=True, nogil=True)
def tokens(b, starts, ends):  # pragma: no cover - compiled
    """The tokens b[starts[j]:ends[j]], one per row, NUL-padded to one width."""
    width = 1
    for j in range(starts.shape[0]):
        width = max(width, ends[j] - starts[j])
    out = np.zeros((starts.shape[0], width), np.uint8)
    for j in range(starts.shape[0]):
        for k in range(ends[j] - starts[j]):
            out[j, k] = b[starts[j] + k]
    return out


@njit(cache=True, nogil=True)
def hash_ids(b, starts):  # pragma: no cover - compiled
    """_hash of every id b[starts[i]:starts[i + 1]]."""
    n = starts.shape[0] - 1
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = _hash(b, starts[i], starts[i + 1])
    return out


@njit(cache=True, nogil=True, inline="always")
def _before(b, ds, de, score, r1, r2):  # pragma: no cover - compiled
    """Whether row r1 comes before r2: higher score, then the larger chunk id (ids alone
    when `score` is empty)."""
    if score.shape[0] and score[r1] != score[r2]:
        return score[r1] > score[r2]
    return _cmp(b, ds[r1], de[r1], ds[r2], de[r2]) > 0


@njit(cache=True, nogil=True)
def _sort(b, ds, de, score, idx, tmp):  # pragma: no cover - compiled
    """Stable merge sort of the rows idx into canonical order (tmp: scratch of the same size)."""
    m = idx.shape[0]
    width = 1
    src, dst = idx, tmp
    flipped = False
    while width < m:
        lo = 0
        while lo < m:
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            x, y, o = lo, mid, lo
            while x < mid and y < hi:
                if _before(b, ds, de, score, src[y], src[x]):
                    dst[o] = src[y]
                    y += 1
                else:
                    dst[o] = src[x]
                    x += 1
                o += 1
            while x < mid:
                dst[o] = src[x]
                x += 1
                o += 1
            while y < hi:
                dst[o] = src[y]
                y += 1
                o += 1
            lo = hi
        src, dst = dst, src
        flipped = not flipped
        width *= 2
    if flipped:
        idx[:] = tmp


@njit(cache=True, nogil=True)
def _by_id(b, ds, de, idx, tmp):  # pragma: no cover - compiled
    """Rows idx (tied scores) in descending chunk id order."""
    m = idx.shape[0]
    if m <= 16:  # insertion sort: tie runs are short
        for j in range(1, m):
            r = idx[j]
            k = j
            while k > 0 and _cmp(b, ds[r], de[r], ds[idx[k - 1]], de[idx[k - 1]]) > 0:
                idx[k] = idx[k - 1]
                k -= 1
            idx[k] = r
    else:
        _sort(b, ds, de, np.zeros(0), idx, tmp[:m])


@njit(cache=True, nogil=True)
def _order_query(b, ds, de, score, idx, tmp):  # pragma: no cover - compiled
    """One query's rows idx in canonical order: scores descending (a stable sort, needed only
    when the rows were not listed so), then each run of tied scores by chunk id. Returns
    whether any row moved."""
    m = idx.shape[0]
    moved = False
    for j in range(m - 1):
        if score[idx[j]] < score[idx[j + 1]]:
            moved = True
            neg = np.empty(m, np.float64)
            for k in range(m):
                neg[k] = -score[idx[k]]
            perm = np.argsort(neg, kind="mergesort")
            tmp[:m] = idx[perm]
            idx[:] = tmp[:m]
            break
    j = 0
    while j < m:
        k = j + 1
        while k < m and score[idx[k]] == score[idx[j]]:
            k += 1
        if k - j > 1:
            for t in range(j, k - 1):
                if _cmp(b, ds[idx[t]], de[idx[t]], ds[idx[t + 1]], de[idx[t + 1]]) <= 0:
                    _by_id(b, ds, de, idx[j:k], tmp)
                    moved = True
                    break
        j = k
    return moved


@njit(cache=True, nogil=True)
def group(qcode, nq):  # pragma: no cover - compiled
    """(order, offsets, grouped): rows grouped by query code, keeping their order within a
    query; query q's rows are order[offsets[q]:offsets[q + 1]]; grouped: order is 0..n-1."""
    n = qcode.shape[0]
    offsets = np.zeros(nq + 1, np.int64)
    grouped = True
    for r in range(n):
        offsets[qcode[r] + 1] += 1
        if r and qcode[r] < qcode[r - 1]:
            grouped = False
    for q in range(nq):
        offsets[q + 1] += offsets[q]
    order = np.empty(n, np.int64)
    if grouped:
        for r in range(n):
            order[r] = r
    else:
        at = offsets[:-1].copy()
        for r in range(n):
            order[at[qcode[r]]] = r
            at[qcode[r]] += 1
    return order, offsets, grouped


@njit(cache=True, nogil=True)
def order_queries(b, ds, de, hashes, score, order, offsets, q0, q1, check_duplicates):
    """Queries q0..q1-1 in canonical order, in place in `order`: score descending, then
    chunk id descending (byte order). Returns (status, moved, row, row): with
    `check_duplicates`, DUPLICATE and two rows of one query with the same chunk id (by
    hash, then bytes); moved: whether any row changed place."""
    most = 1
    for q in range(q0, q1):
        most = max(most, offsets[q + 1] - offsets[q])
    tmp = np.empty(most, np.int64)
    tsize = 16
    while tsize < 2 * most:
        tsize *= 2
    tab = np.full(tsize, -1, np.int64)
    moved = False
    for q in range(q0, q1):
        a, z = offsets[q], offsets[q + 1]
        if check_duplicates:
            size = 16
            while size < 2 * (z - a):
                size *= 2
            mask = size - 1
            for j in range(a, z):
                r = order[j]
                h = hashes[r]
                p = np.int64(h & np.uint64(mask))
                while tab[p] >= 0:
                    o = tab[p]
                    if hashes[o] == h and _same(b, ds[r], de[r], b, ds[o], de[o]):
                        return DUPLICATE, moved, min(o, r), max(o, r)
                    p = (p + 1) & mask
                tab[p] = r
            tab[:size] = -1
        if _order_query(b, ds, de, score, order[a:z], tmp):
            moved = True
    return OK, moved, -1, -1


EMPTY_SLOT = -2  # the value column of a free slot (-1 is a value: "not in the corpus")


@njit(cache=True, nogil=True)
def key_table(keys, kstarts, values):  # pragma: no cover - compiled
    """(open-addressing table of the distinct keys keys[kstarts[k]:kstarts[k + 1]], a bitmap
    of 2**24 bits set at each key hash's top 24 bits): what lookup probes. A slot holds the
    key's hash, its byte range and its value side by side, so a probe that hits reads one
    cache line and then the key's bytes; the bitmap (2 MiB, cache-resident) turns most ids
    that are not keys away in one test."""
    nk = kstarts.shape[0] - 1
    size = 16
    while size < 2 * nk:
        size *= 2
    mask = size - 1
    slots = np.empty((size, 4), np.int64)
    slots[:, 3] = EMPTY_SLOT
    bits = np.zeros(1 << 18, np.uint64)
    for k in range(nk):
        h = _hash(keys, kstarts[k], kstarts[k + 1])
        top = h >> np.uint64(40)
        bits[top >> np.uint64(6)] |= np.uint64(1) << (top & np.uint64(63))
        p = np.int64(h & np.uint64(mask))
        while slots[p, 3] != EMPTY_SLOT:
            p = (p + 1) & mask
        slots[p, 0] = np.int64(h)
        slots[p, 1] = kstarts[k]
        slots[p, 2] = kstarts[k + 1]
        slots[p, 3] = values[k]
    return slots, bits


@njit(cache=True, nogil=True)
def lookup(b, starts, hashes, rows, j0, j1, keys, slots, bits, out):  # pragma: no cover
    """out[j] for j in j0..j1-1: the value of the key equal to row j's id (id rows[j], or
    id j when rows is empty: b[starts[i]:starts[i + 1]], hash hashes[i]), or -1."""
    mask = slots.shape[0] - 1
    for j in range(j0, j1):
        i = rows[j] if rows.shape[0] else j
        h = hashes[i]
        top = h >> np.uint64(40)
        found = -1
        if (bits[top >> np.uint64(6)] >> (top & np.uint64(63))) & np.uint64(1):
            hs = np.int64(h)
            p = hs & mask
            while slots[p, 3] != EMPTY_SLOT:
                if slots[p, 0] == hs and _same(
                    b, starts[i], starts[i + 1], keys, slots[p, 1], slots[p, 2]
                ):
                    found = slots[p, 3]
                    break
                p = (p + 1) & mask
        out[j] = found


@njit(cache=True, nogil=True)
def match_own(b, starts, hashes, rows, lo, hi, keys, kstarts, khash, values, kofs, out, o):
    """For segment i (rows lo[i]..hi[i]-1, id of row j: rows[j], or j when rows is empty),
    each row's value among segment i's own few keys kofs[i]..kofs[i + 1]-1 (by hash, then
    bytes), or -1; written to out from o on, segment after segment. No table: a query's
    judged ids are compared in cache, so ids judged only for other queries cost nothing."""
    for i in range(lo.shape[0]):
        k0, k1 = kofs[i], kofs[i + 1]
        for j in range(lo[i], hi[i]):
            r = rows[j] if rows.shape[0] else j
            h = hashes[r]
            found = -1
            for k in range(k0, k1):
                if khash[k] == h and _same(
                    b, starts[r], starts[r + 1], keys, kstarts[k], kstarts[k + 1]
                ):
                    found = values[k]
                    break
            out[o] = found
            o += 1


@njit(cache=True, nogil=True)
def first_distinct(b, starts, hashes, rows, limit):  # pragma: no cover - compiled
    """(number of distinct ids among `rows`, the first `limit` rows holding a new id)."""
    size = 16
    while size < 2 * rows.shape[0]:
        size *= 2
    mask = size - 1
    tab = np.full(size, -1, np.int64)
    firsts = np.empty(limit, np.int64)
    count = 0
    for r in rows:
        h = hashes[r]
        p = np.int64(h & np.uint64(mask))
        new = True
        while tab[p] >= 0:
            o = tab[p]
            if hashes[o] == h and _same(b, starts[r], starts[r + 1], b, starts[o], starts[o + 1]):
                new = False
                break
            p = (p + 1) & mask
        if new:
            tab[p] = r
            if count < limit:
                firsts[count] = r
            count += 1
    return count, firsts[: min(count, limit)]
