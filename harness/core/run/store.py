"""Runs built with vectorised sorts: many queries' canonical rankings at once, from dicts or
from a TREC run file, instead of a Python sort per query.

The order is harness.core.run.canonical's: score descending, ties by chunk id descending
(code point order, which is UTF-8 byte order, trec_eval's rule); duplicates within a query
keep their best score. Two builders give the same rankings:

- `small_rankings` (fewer than FAST_ROWS rows): numpy, one lexsort over (query, -score,
  -id rank), ranking only the ids whose scores tie; the rankings hold tuples, as before;
- `Rows` (a TREC file of FAST_BYTES or more, or dicts of FAST_ROWS rows or more): compiled
  kernels (harness.core.run._kernels, numba) put rows in canonical order; chunk ids stay UTF-8
  bytes of one buffer (a `RunStore`), and a ranking decodes its ids and scores only when they
  are read. The standard metrics match such rankings against judgments in one compiled pass
  (`id_codes`), without making a Python string per ranked chunk.
"""

from __future__ import annotations

import mmap
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numpy as np

# Below these sizes the compiled path does not repay loading numba and its cached kernels
# (about 1 s); once numba is loaded (the standard metrics load it), smaller runs take it too.
FAST_ROWS = 500_000
FAST_BYTES = 8 << 20
LOADED_FACTOR = 16  # the thresholds are divided by this once numba is loaded
# from here the kernels run on every core, over parts of the rows: the parse and the id lookup
# (memory-bound) take half the time on 2 cores from 2M rows on (scripts/bench_evaluate.py)
PARALLEL_ROWS = 250_000
_ROOM = 1 << 20  # query id changes and long scores the parser expects before it re-runs


def compiled_from(size: int, threshold: int) -> bool:
    """Whether a run of `size` (rows or bytes) takes the compiled path: from `threshold` on,
    or from a sixteenth of it once numba is loaded anyway."""
    return size >= threshold / (LOADED_FACTOR if "numba" in sys.modules else 1)


def _kernels():
    from harness.core.run import _kernels as _runkernels  # numba: loaded only for large runs

    return _runkernels


def best_scores(pairs: Iterable[tuple[str, float]] | Mapping[str, float]) -> Mapping[str, float]:
    """{chunk_id: score}; from pairs, a chunk listed twice keeps its highest score."""
    if isinstance(pairs, Mapping):
        return pairs
    best: dict[str, float] = {}
    for chunk_id, score in pairs:
        if chunk_id not in best or score > best[chunk_id]:
            best[chunk_id] = score
    return best


def _flatten(per_query: Sequence[Mapping[str, float]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(every chunk id, scores as float64, rows per query), queries end to end; a NaN score
    is refused as canonical refuses it (the first in order)."""
    lengths = np.fromiter(map(len, per_query), np.int64, len(per_query))
    n = int(lengths.sum())
    ids = list(chain.from_iterable(per_query))
    scores = np.fromiter(chain.from_iterable(d.values() for d in per_query), np.float64, n)
    nan = np.flatnonzero(np.isnan(scores))
    if len(nan):
        raise ValueError(f"score of '{ids[nan[0]]}' is NaN")
    return ids, scores, lengths


def order_scores(
    scores: Mapping[str, Iterable[tuple[str, float]] | Mapping[str, float]],
    depth: int,
    vocab: Mapping[str, int] | None = None,
) -> dict[str, tuple] | RunStore:
    """Every query of `scores` in canonical order, cut at depth, in the mapping's order: as
    {query id: (ids, scores, codes or None)} from the numpy builder, or as a RunStore from the
    compiled one; with `vocab` the rankings carry corpus codes (-1 for an id it lacks)."""
    qids = list(scores)
    per_query = [best_scores(scores[q]) for q in qids]
    ids, values, lengths = _flatten(per_query)
    if not compiled_from(len(ids), FAST_ROWS):
        return small_rankings(qids, ids, values, lengths, depth, vocab)
    rows = Rows.from_ids(qids, ids, values, lengths)
    del ids
    rows.canonical(check_duplicates=False)
    store = rows.store(depth)
    if vocab is not None:
        store.codes = store.lookup(vocab)
    return store


def small_rankings(qids, ids, values, lengths, depth, vocab) -> dict[str, tuple]:
    """The numpy builder: a lexsort over (query, -score), then one over (query, -score, -id
    rank) when scores tie, ranking only the tied ids; tuples per query."""
    query = np.repeat(np.arange(len(qids)), lengths)
    order = np.lexsort((-values, query))
    q, v = query[order], values[order]
    tied = (q[1:] == q[:-1]) & (v[1:] == v[:-1])  # -0.0 ties with 0.0, as in canonical
    if tied.any():
        rows = np.zeros(len(order), bool)
        rows[1:] |= tied
        rows[:-1] |= tied
        at = np.flatnonzero(rows)
        names = [ids[i] for i in order[at].tolist()]
        # Python orders str by code point: each tied id's rank in that order
        rank = {cid: i for i, cid in enumerate(sorted(set(names)))}
        id_rank = np.zeros(len(order), np.int64)
        id_rank[at] = np.fromiter(map(rank.__getitem__, names), np.int64, len(names))
        order = order[np.lexsort((-id_rank, -v, q))]
    starts = np.zeros(len(qids) + 1, np.int64)
    np.cumsum(lengths, out=starts[1:])
    cut = np.minimum(lengths, depth)
    order = order[ranges(starts[:-1], cut)]
    ordered_ids = [ids[i] for i in order.tolist()]
    ordered_scores = values[order]
    codes = None
    if vocab is not None:
        codes = np.fromiter(map(vocab.get, ordered_ids, repeat(-1)), np.int64, len(ordered_ids))
    out = np.zeros(len(qids) + 1, np.int64)
    np.cumsum(cut, out=out[1:])
    bounds = out.tolist()
    return {
        qid: (
            tuple(ordered_ids[a:z]),
            tuple(ordered_scores[a:z].tolist()),
            None if codes is None else codes[a:z],
        )
        for qid, a, z in zip(qids, bounds, bounds[1:])
    }


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated arange(s, s + n) for each start s and length n."""
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, np.int64)
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total)


def encode_ids(ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(UTF-8 bytes of the ids end to end, byte starts: n + 1). Lone surrogates are kept
    (surrogatepass), so every str encodes and byte order stays code point order."""
    joined = "".join(ids)
    if joined.isascii():
        buf = np.frombuffer(bytearray(joined.encode("ascii")), np.uint8)
        lengths = np.fromiter(map(len, ids), np.int64, len(ids))
    else:
        encoded = [s.encode("utf-8", "surrogatepass") for s in ids]
        buf = np.frombuffer(bytearray(b"".join(encoded)), np.uint8)
        lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
    starts = np.zeros(len(ids) + 1, np.int64)
    np.cumsum(lengths, out=starts[1:])
    return buf, starts


def _threads(rows: int) -> int:
    """Threads for a compiled pass over `rows` rows (the kernels release the GIL)."""
    if rows < PARALLEL_ROWS:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _in_threads(calls: list) -> list:
    """Run the calls (functions of no argument) one per thread; their results in order."""
    if len(calls) == 1:
        return [calls[0]()]
    with ThreadPoolExecutor(len(calls)) as pool:
        return [f.result() for f in [pool.submit(c) for c in calls]]


def _file_bytes(path: Path) -> np.ndarray | None:
    """The file's bytes, read-only, ending with a line feed (the parser needs one at the end:
    a file without one is copied and given one); mapped from the page cache where possible."""
    size = path.stat().st_size
    populate = getattr(mmap, "MAP_POPULATE", None)
    if size and populate is not None:
        with open(path, "rb") as f:
            m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ)
        b = np.frombuffer(m, np.uint8)  # holds the map; unmapped when b is gone
        if b[-1] == 0x0A:
            return b
        del b
        m.close()
    b = np.empty(size + 1, np.uint8)
    with open(path, "rb") as f:
        if f.readinto(memoryview(b)[:size]) != size:
            return None
    b[size] = 0x0A
    b.flags.writeable = False  # the same compiled kernels as for a mapped file
    return b


class Rows:
    """A run's rows before canonical order: query codes (query ids by first appearance),
    chunk ids as byte ranges of one buffer with their hashes, scores. From a TREC file
    (`read_trec`) or from dicts (`from_ids`)."""

    def __init__(self, query_ids, qcode, buf, starts, hashes, scores):
        self.query_ids: list[str] = query_ids
        self.qcode: np.ndarray = qcode  # int32 per row
        self.buf: np.ndarray = buf  # uint8
        self.starts: np.ndarray = starts  # int64, rows + 1
        self.hashes: np.ndarray = hashes  # uint64 per row
        self.scores: np.ndarray = scores  # float64 per row
        self.order: np.ndarray | None = None  # canonical order of the rows (canonical())
        self.offsets: np.ndarray | None = None  # where each query starts in `order`
        self.moved = True

    def __len__(self) -> int:
        return len(self.scores)

    @classmethod
    def from_ids(cls, qids, ids, values, lengths) -> Rows:
        buf, starts = encode_ids(ids)
        qcode = np.repeat(np.arange(len(qids), dtype=np.int32), lengths)
        hashes = _kernels().hash_ids(buf, starts)
        return cls(list(qids), qcode, buf, starts, hashes, values)

    @classmethod
    def read_trec(cls, path: Path) -> Rows | None:
        """The rows of a TREC run file, read by the compiled parser (parts of the file on
        parallel threads); None when it meets anything it does not decide exactly (the
        line-by-line reader then gives the result or the error, with file and line) or finds
        no rows."""
        k = _kernels()
        b = _file_bytes(path)
        if b is None:
            return None
        size = len(b)
        parts = _threads(size // 32)  # about 32 bytes a line
        cuts = {k.line_after(b, size * t // parts) for t in range(1, parts)}
        bounds = sorted({0, size} | cuts)
        spans = list(zip(bounds, bounds[1:]))
        # part t's rows go to room[t]:room[t + 1], as many as its line feeds: parts meet
        # without a gap unless some lines are blank
        room = [0]
        for lo, hi in spans:
            room.append(room[-1] + k.count_lines(b, lo, hi))
        ids = np.empty(size, np.uint8)  # part t copies its ids from byte spans[t][0] on
        starts = np.empty(room[-1] + 1, np.int64)
        hashes = np.empty(room[-1], np.uint64)
        scores = np.empty(room[-1], np.float64)

        def parse(t: int):
            (lo, hi), space = spans[t], room[t + 1] - room[t]
            for extra in (min(space, _ROOM), space):
                change = np.empty((extra, 3), np.int64)
                slow = np.empty((extra, 3), np.int64)
                out = k.parse_lines(
                    b, lo, hi, k.BYTE_CLASS, k.POW10, ids, starts, hashes, scores,
                    room[t], room[t + 1], change, slow,
                )  # fmt: skip
                if out[0] != k.FULL:
                    break
            status, rows, end, nchange, nslow = out
            return status, rows, end, change[:nchange], slow[:nslow]

        done = _in_threads([lambda t=t: parse(t) for t in range(len(spans))])
        if any(d[0] != k.OK for d in done):
            return None  # BAIL, or more rows than line feeds (lines broken by CR alone)
        changes, slows, kept = [], [], []
        rows_at = ids_at = 0
        for t, (_, rows, end, change, slow) in enumerate(done):
            lo = spans[t][0]
            if lo != ids_at:  # ids move down to meet the part before's
                k.move_down(ids, starts, lo, end, ids_at, room[t], room[t] + rows)
            change[:, 0] -= room[t] - rows_at
            slow[:, 0] -= room[t] - rows_at
            changes.append(change)
            slows.append(slow)
            kept.append(np.arange(room[t], room[t] + rows))
            rows_at += rows
            ids_at += end - lo
        if not rows_at:
            return None
        if any(d[1] != room[t + 1] - room[t] for t, d in enumerate(done[:-1])):
            where = np.concatenate(kept)  # blank lines left gaps between the parts' rows
            starts, hashes, scores = np.append(starts[where], 0), hashes[where], scores[where]
        starts[rows_at] = ids_at
        starts, hashes, scores = starts[: rows_at + 1], hashes[:rows_at], scores[:rows_at]
        slow = np.concatenate(slows)
        if len(slow):  # long or large numbers: numpy's parser, correctly rounded as float()
            padded = k.tokens(b, slow[:, 1], slow[:, 2])
            with np.errstate(over="ignore", under="ignore"):
                values = padded.view(f"S{padded.shape[1]}").ravel().astype(np.float64)
            scores[slow[:, 0]] = values
        if not np.isfinite(scores).all():
            return None  # the line-by-line reader names the line
        qcode, qs, qe, _ = k.query_codes(b, np.concatenate(changes), rows_at)
        query_ids = [b[s:e].tobytes().decode("utf-8") for s, e in zip(qs.tolist(), qe.tolist())]
        return cls(query_ids, qcode, ids[:ids_at], starts, hashes, scores)

    def canonical(self, *, check_duplicates: bool = True) -> bool:
        """Put the rows in canonical order (grouped by query, stable; queries in parallel);
        False when a query lists a chunk twice (with `check_duplicates`)."""
        k = _kernels()
        order, offsets, grouped = k.group(self.qcode, len(self.query_ids))
        n = len(self.scores)
        parts = _threads(n)
        cuts = np.searchsorted(offsets, [n * t // parts for t in range(parts + 1)])
        cuts[0], cuts[-1] = 0, len(self.query_ids)
        ds, de = self.starts[:-1], self.starts[1:]
        done = _in_threads(
            [
                lambda q0=int(q0), q1=int(q1): k.order_queries(
                    self.buf,
                    ds,
                    de,
                    self.hashes,
                    self.scores,
                    order,
                    offsets,
                    q0,
                    q1,
                    check_duplicates,
                )  # fmt: skip
                for q0, q1 in zip(cuts, cuts[1:])
            ]
        )
        if any(d[0] != k.OK for d in done):
            return False
        self.order, self.offsets = order, offsets
        self.moved = not grouped or any(d[1] for d in done)
        return True

    def lengths(self) -> np.ndarray:
        """Rows per query (after canonical())."""
        return np.diff(self.offsets)

    def codes(self, lookup: Mapping[str, int]) -> np.ndarray:
        """Each row's chunk id looked up (-1 when absent), in row order."""
        return _lookup(self.buf, self.starts, self.hashes, None, lookup)

    def store(
        self,
        depth: int,
        keep: np.ndarray | None = None,
        codes: np.ndarray | None = None,
    ) -> RunStore:
        """The canonical run of the queries `keep` marks (all by default), each cut at
        depth; `codes` (per row, in row order) travel with their rows."""
        lengths = self.lengths()
        cut = np.minimum(lengths, depth)
        chosen = np.arange(len(lengths)) if keep is None else np.flatnonzero(keep)
        if len(chosen) == len(lengths) and bool((cut == lengths).all()):
            rows = self.order if self.moved else None
        else:
            rows = self.order[ranges(self.offsets[:-1][chosen], cut[chosen])]
        offsets = np.zeros(len(chosen) + 1, np.int64)
        np.cumsum(cut[chosen], out=offsets[1:])
        return RunStore(
            [self.query_ids[i] for i in chosen.tolist()],
            offsets,
            self.buf,
            self.starts,
            self.hashes,
            rows,
            self.scores if rows is None else self.scores[rows],
            None if codes is None else (codes if rows is None else codes[rows]),
        )

    def to_dict(self) -> dict[str, dict[str, float]]:
        """{query id: {chunk id: score}} with chunks in row order (read_run's result)."""
        ids = _decode_all(self.buf, self.starts)
        scores = self.scores.tolist()
        if self.scattered():  # group the rows by query, keeping their order
            order = np.argsort(self.qcode, kind="stable").tolist()
            ids = [ids[i] for i in order]
            scores = [scores[i] for i in order]
        bounds = [0, *np.cumsum(np.bincount(self.qcode, minlength=len(self.query_ids))).tolist()]
        return {
            q: dict(zip(ids[bounds[i] : bounds[i + 1]], scores[bounds[i] : bounds[i + 1]]))
            for i, q in enumerate(self.query_ids)
        }

    def scattered(self) -> bool:
        """Whether some query's rows are not together (in query code order)."""
        return bool(len(self.qcode) > 1 and (np.diff(self.qcode) < 0).any())

    def distinct(self, rows: np.ndarray, limit: int) -> tuple[int, list[str]]:
        """(how many distinct chunk ids the rows hold, the first `limit` of them)."""
        count, first = _kernels().first_distinct(self.buf, self.starts, self.hashes, rows, limit)
        return int(count), [_decode(self.buf, self.starts, int(r)) for r in first]


def _decode(buf: np.ndarray, starts: np.ndarray, i: int) -> str:
    return buf[starts[i] : starts[i + 1]].tobytes().decode("utf-8", "surrogatepass")


def _decode_all(buf: np.ndarray, starts: np.ndarray, rows=None) -> list[str]:
    """Ids `rows` (all by default) as str: id i is buf[starts[i]:starts[i + 1]]."""
    if rows is None:
        lo = int(starts[0])
        bytes_ = buf[lo : int(starts[-1])].tobytes()
        cuts = (starts - lo).tolist()
        spans = zip(cuts, cuts[1:])
    else:
        if not len(rows):
            return []
        s, e = starts[rows], starts[rows + 1]
        lo, hi = int(s.min()), int(e.max())
        if hi - lo > 4 * int((e - s).sum()) + 64:  # scattered: one id at a time
            return [_decode(buf, starts, i) for i in rows.tolist()]
        bytes_ = buf[lo:hi].tobytes()
        spans = zip((s - lo).tolist(), (e - lo).tolist())
    if bytes_.isascii():
        text = bytes_.decode("ascii")
        return [text[a:z] for a, z in spans]
    return [bytes_[a:z].decode("utf-8", "surrogatepass") for a, z in spans]


class KeyTable:
    """A mapping of chunk ids to codes as the compiled lookup probes it (the ids' bytes, an
    open-addressing table, their hashes and a bitmap). Built once per mapping that is looked
    up repeatedly (a benchmark's vocab: harness.core.types.Benchmark.vocab_table)."""

    def __init__(self, lookup: Mapping[str, int]):
        keys = list(lookup)
        values = np.fromiter(lookup.values(), np.int64, len(keys))
        self.kbuf, kstarts = encode_ids(keys)
        self.slots, self.bits = _kernels().key_table(self.kbuf, kstarts, values)


def _lookup(buf, starts, hashes, rows, lookup: Mapping[str, int] | KeyTable) -> np.ndarray:
    """Row j's id (id rows[j], or id j when rows is None) looked up in `lookup` (-1 when
    absent), for every row; in parallel over parts of the rows."""
    k = _kernels()
    kt = lookup if isinstance(lookup, KeyTable) else KeyTable(lookup)
    n = len(hashes) if rows is None else len(rows)
    rows = np.zeros(0, np.int64) if rows is None else rows
    out = np.empty(n, np.int64)
    parts = _threads(n)
    cuts = [n * t // parts for t in range(parts + 1)]
    _in_threads(
        [
            lambda j0=j0, j1=j1: k.lookup(
                buf,
                starts,
                hashes,
                rows,
                j0,
                j1,
                kt.kbuf,
                kt.slots,
                kt.bits,
                out,
            )  # fmt: skip
            for j0, j1 in zip(cuts, cuts[1:])
        ]
    )
    return out


class RunStore:
    """Canonical rankings of many queries as arrays: query q's rows are
    offsets[q]:offsets[q + 1]; row j's chunk id is id rows[j] (id j when rows is None) of
    the byte buffer (id i: buf[starts[i]:starts[i + 1]], hash hashes[i]); scores and corpus
    codes per row."""

    def __init__(self, query_ids, offsets, buf, starts, hashes, rows, scores, codes=None):
        self.query_ids: list[str] = query_ids
        self.offsets: np.ndarray = offsets
        self.buf: np.ndarray = buf
        self.starts: np.ndarray = starts
        self.hashes: np.ndarray = hashes
        self.rows: np.ndarray | None = rows
        self.scores: np.ndarray = scores
        self.codes: np.ndarray | None = codes

    def ids(self, q: int) -> tuple[str, ...]:
        """Query q's chunk ids in rank order."""
        a, z = int(self.offsets[q]), int(self.offsets[q + 1])
        if self.rows is None:
            return tuple(_decode_all(self.buf, self.starts[a : z + 1]))
        return tuple(_decode_all(self.buf, self.starts, self.rows[a:z]))

    def scores_of(self, q: int) -> tuple[float, ...]:
        """Query q's scores in rank order."""
        return tuple(self.scores[self.offsets[q] : self.offsets[q + 1]].tolist())

    def lookup(self, lookup: Mapping[str, int] | KeyTable) -> np.ndarray:
        """Every row's chunk id looked up (-1 when absent), in canonical row order."""
        return _lookup(self.buf, self.starts, self.hashes, self.rows, lookup)


def id_codes(
    rankings: Sequence[Any],
    lookup: Mapping[str, int],
    own: tuple[list[str], np.ndarray, np.ndarray] | None = None,
    table: KeyTable | None = None,
) -> list[np.ndarray]:
    """Each ranking's chunk ids looked up (-1 when absent), in rank order: one compiled pass
    per store for rankings read from one (harness.core.run.Ranking.lazy), id by id for the
    rest. With `own` = (ids, values, offsets): ranking i's own (id, value) pairs are
    ids/values[offsets[i]:offsets[i + 1]] (e.g. its query's judged ids), and a store's
    rankings look their ids up there only (an id only `lookup` holds gives -1). `table`:
    `lookup` as a KeyTable made before (else a store's lookup builds one)."""
    out: list[Any] = list(rankings)
    stores: dict[int, list[int]] = {}
    for i, r in enumerate(rankings):
        place = getattr(r, "place", None)
        if place is not None:
            stores.setdefault(id(place[0]), []).append(i)
            continue
        ids = r.ids if hasattr(r, "ids") else r
        out[i] = np.fromiter(map(lookup.get, ids, repeat(-1)), np.int64, len(ids))
    for members in stores.values():
        store = rankings[members[0]].place[0]
        qs = np.fromiter((rankings[i].place[1] for i in members), np.int64, len(members))
        lo, hi = store.offsets[qs], store.offsets[qs + 1]
        picked = np.asarray(members, np.int64)
        if own is not None:
            count = own[2][picked + 1] - own[2][picked]
        if own is None or int(count.sum()) > 64 * len(members):
            codes = store.lookup(table or lookup)  # many keys a query: one table for all
            for i, a, z in zip(members, lo.tolist(), hi.tolist()):
                out[i] = codes[a:z]
            continue
        ids, values, offsets = own
        if len(members) == len(rankings):
            kofs = offsets
        else:
            pick = ranges(offsets[picked], count)
            ids, values = [ids[j] for j in pick.tolist()], values[pick]
            kofs = np.zeros(len(members) + 1, np.int64)
            np.cumsum(count, out=kofs[1:])
        flat = _match_own(store, lo, hi, ids, np.asarray(values, np.int64), kofs)
        cuts = np.cumsum(hi - lo).tolist()
        for i, a, z in zip(members, [0, *cuts], cuts):
            out[i] = flat[a:z]
    return out


def id_codes_joined(
    rankings: Sequence[Any],
    lookup: Mapping[str, int],
    own: tuple[list[str], np.ndarray, np.ndarray] | None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """id_codes end to end (flat codes, n + 1 offsets) when every ranking is of one store
    and `own` is given: one compiled pass, no per-ranking arrays; None otherwise."""
    places = [getattr(r, "place", None) for r in rankings]
    if own is None or not places or any(p is None or p[0] is not places[0][0] for p in places):
        return None
    store = places[0][0]
    qs = np.fromiter((p[1] for p in places), np.int64, len(places))
    lo, hi = store.offsets[qs], store.offsets[qs + 1]
    ids, values, kofs = own
    if int(kofs[-1]) > 64 * len(places):
        return None
    offsets = np.zeros(len(places) + 1, np.int64)
    np.cumsum(hi - lo, out=offsets[1:])
    return _match_own(store, lo, hi, ids, np.asarray(values, np.int64), kofs), offsets


def _match_own(store: RunStore, lo, hi, keys, values, kofs) -> np.ndarray:
    """match_own over the segments lo..hi of `store`, in parallel over groups of them."""
    k = _kernels()
    kbuf, kstarts = encode_ids(keys)
    khash = k.hash_ids(kbuf, kstarts)
    rows = np.zeros(0, np.int64) if store.rows is None else store.rows
    sizes = np.cumsum(hi - lo)
    out = np.empty(int(sizes[-1]) if len(sizes) else 0, np.int64)
    parts = _threads(len(out))
    cuts = np.searchsorted(sizes, [len(out) * t // parts for t in range(1, parts)], side="right")
    bounds = [0, *sorted(set(cuts.tolist()) - {0, len(lo)}), len(lo)]
    calls = []
    for a, z in zip(bounds, bounds[1:]):
        start = int(sizes[a - 1]) if a else 0
        calls.append(
            lambda a=a, z=z, start=start: k.match_own(
                store.buf,
                store.starts,
                store.hashes,
                rows,
                lo[a:z],
                hi[a:z],
                kbuf,
                kstarts,
                khash,
                values,
                kofs[a : z + 1],
                out,
                start,
            )  # fmt: skip
        )
    _in_threads(calls)
    return out
