"""Runs: one query's canonical ranking (`Ranking`), a retriever's rankings (`Run`), and every
way one is built, from a dict, a TREC or JSON run file, or what a retriever's search returned.

- `store`: many queries' canonical rankings at once, with vectorised sorts (numpy, or the
  compiled kernels of `_kernels` for large runs);
- `files`: run files read line by line with file:line errors, written, and the unknown-id pass.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import FrozenInstanceError
from itertools import repeat
from pathlib import Path
from types import MappingProxyType

import numpy as np

from harness.core.errors import BenchmarkError

_set = object.__setattr__  # Ranking is immutable: its own setters go around __setattr__


class Ranking:
    """One query's canonical ranked list: parallel tuples of chunk ids and scores.

    `codes` optionally holds each chunk's position in the corpus (Benchmark.vocab), -1 for
    an id the corpus lacks, which lets the standard metrics match judgments without string
    lookups. Immutable, compared by ids and scores (like a frozen dataclass). A ranking of a
    large run (`Ranking.lazy`) reads its ids and scores from the run's arrays
    (harness.core.run.store) when they are first asked for."""

    __slots__ = ("_ids", "_scores", "codes", "place")
    __match_args__ = ("ids", "scores", "codes")

    def __init__(
        self, ids: tuple[str, ...], scores: tuple[float, ...], codes: np.ndarray | None = None
    ):
        _set(self, "_ids", ids)
        _set(self, "_scores", scores)
        _set(self, "codes", codes)
        _set(self, "place", None)  # (store, query position) of a lazy ranking

    @classmethod
    def lazy(cls, store, position: int, codes: np.ndarray | None = None) -> Ranking:
        """Query `position` of a harness.core.run.store.RunStore; ids and scores made on use."""
        r = object.__new__(cls)
        _set(r, "_ids", None)
        _set(r, "_scores", None)
        _set(r, "codes", codes)
        _set(r, "place", (store, position))
        return r

    def with_codes(self, codes: np.ndarray | None) -> Ranking:
        """The same ranking carrying `codes` (a lazy one stays lazy)."""
        if self.place is None:
            return Ranking(self._ids, self._scores, codes)
        r = Ranking.lazy(*self.place, codes)
        _set(r, "_ids", self._ids)  # what was decoded already stays decoded
        _set(r, "_scores", self._scores)
        return r

    @property
    def size(self) -> int:
        """How many chunks the ranking holds (a lazy one's ids are not decoded for it)."""
        if self._ids is not None:
            return len(self._ids)
        store, q = self.place
        return int(store.offsets[q + 1] - store.offsets[q])

    @property
    def ids(self) -> tuple[str, ...]:
        if self._ids is None:
            _set(self, "_ids", self.place[0].ids(self.place[1]))
        return self._ids

    @property
    def scores(self) -> tuple[float, ...]:
        if self._scores is None:
            _set(self, "_scores", self.place[0].scores_of(self.place[1]))
        return self._scores

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field '{name}'")

    def __delattr__(self, name):
        raise FrozenInstanceError(f"cannot delete field '{name}'")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.ids, self.scores) == (other.ids, other.scores)

    def __hash__(self) -> int:
        return hash((self.ids, self.scores))

    def __repr__(self) -> str:
        return f"Ranking(ids={self.ids!r}, scores={self.scores!r})"

    def __reduce__(self):
        return (Ranking, (self.ids, self.scores, self.codes))


_EMPTY = Ranking((), ())


def canonical(
    pairs: Iterable[tuple[str, float]] | Mapping[str, float],
    depth: int,
    vocab: Mapping[str, int] | None = None,
) -> Ranking:
    """Order (chunk_id, score) pairs by score descending, ties by chunk id descending; cut at depth.

    Takes pairs or a {chunk_id: score} mapping. Duplicate ids keep their highest score, so a
    chunk occupies one rank. With `vocab` the ranking carries codes; an id the vocab lacks (a
    run naming a chunk the corpus does not hold) keeps its rank with code -1.
    """
    from harness.core.run.store import best_scores

    best = best_scores(pairs)
    if any(s != s for s in best.values()):  # only NaN differs from itself
        bad = next(k for k, s in best.items() if s != s)
        raise ValueError(f"score of '{bad}' is NaN")
    # Two stable sorts, each on one key (fast paths in CPython): chunk id descending, then
    # score descending, which keeps tied chunks in id order. Python compares str by code
    # point, which is UTF-8 byte order (trec_eval's rule).
    ids = sorted(best, reverse=True)
    ids.sort(key=best.__getitem__, reverse=True)
    del ids[depth:]
    codes = None if vocab is None else np.fromiter(map(vocab.get, ids, repeat(-1)), np.int64)
    return Ranking(tuple(ids), tuple(float(best[i]) for i in ids), codes)


class Run:
    """Per-query canonical rankings produced by one retriever; sorted once, at construction."""

    def __init__(self, name: str, rankings: Mapping[str, Ranking], depth: int):
        self.name = name
        self.depth = depth
        self._rankings = MappingProxyType(dict(rankings))

    @classmethod
    def from_scores(
        cls,
        name: str,
        scores: Mapping[str, Iterable[tuple[str, float]] | Mapping[str, float]],
        depth: int,
        vocab: Mapping[str, int] | None = None,
    ) -> Run:
        """Build a run from unordered (chunk_id, score) pairs, or {chunk_id: score}, per query;
        with the benchmark's `vocab` the rankings carry corpus codes. The same rankings as
        `canonical` per query, sorted for all queries at once (harness.core.run.store)."""
        from harness.core.run.store import RunStore, order_scores

        ordered = order_scores(scores, depth, vocab)
        if isinstance(ordered, RunStore):
            return cls.from_store(name, ordered, depth)
        return cls(name, {q: Ranking(*r) for q, r in ordered.items()}, depth)

    @classmethod
    def from_store(cls, name: str, store, depth: int) -> Run:
        """A run over a harness.core.run.store.RunStore (canonical rows of many queries): its
        rankings read ids and scores from the store's arrays when first asked for."""
        off = store.offsets.tolist()
        codes = store.codes
        rankings = {
            q: Ranking.lazy(store, i, None if codes is None else codes[off[i] : off[i + 1]])
            for i, q in enumerate(store.query_ids)
        }
        return cls(name, rankings, depth)

    @classmethod
    def from_dict(
        cls,
        scores: Mapping[str, Mapping[str, float]],
        *,
        name: str = "run",
        depth: int | None = None,
    ) -> Run:
        """A run from `{query_id: {chunk_id: score}}` (any order; canonical order is made here).
        `depth` cuts each list (None: keep every chunk)."""
        return cls.of(scores, name=name, depth=depth)

    @classmethod
    def from_trec(
        cls, path: str | Path, *, name: str | None = None, depth: int | None = None
    ) -> Run:
        """A run read from a TREC run file (or a JSON run; either may be gzipped); the name
        defaults to the file's stem.
        A large TREC file is read and ordered by compiled code (harness.core.run.store)."""
        from harness.core.run.files import read_run, read_run_rows, run_stem

        path = Path(path).expanduser()
        rows = read_run_rows(path)
        if rows is None:
            return cls.from_dict(read_run(path), name=name or run_stem(path), depth=depth)
        if depth is None:
            depth = int(rows.lengths().max(initial=0)) or 1
        return cls.from_store(name or run_stem(path), rows.store(depth), depth)

    @classmethod
    def of(
        cls,
        given: Run | Mapping,
        *,
        name: str | None = None,
        depth: int | None = None,
        where: str = "",
    ) -> Run:
        """The one way from data to a Run: a Run (renamed when `name` differs, cut at `depth`),
        or `{query_id: {chunk_id: score}}` / `{query_id: [(chunk_id, score), ...]}` or a pandas
        DataFrame (Run.from_df) made canonical, scores finite (as Run.from_trec has them).
        `depth` None keeps every chunk; `where` starts an error with where the data came
        from (a retriever's search)."""
        from harness.core.frames import is_frame, run_scores

        checked = is_frame(given)  # run_scores checks every row, naming it
        if checked:
            given = run_scores(given)
        if isinstance(given, Run):
            run = given if name in (None, given.name) else Run(name, given._rankings, given.depth)
            return run if depth is None else run.cut(depth)
        if not isinstance(given, Mapping):
            raise BenchmarkError(
                f"{where}a run must be a harness.Run or a mapping {{query_id: {{chunk_id: "
                f"score}}}}, got {type(given).__name__}"
            )
        text = True  # every id a str, as a run file's and a DataFrame's are
        for qid, docs in () if checked else given.items():
            if isinstance(docs, Mapping):
                pairs = docs.items()
            elif isinstance(docs, (list, tuple)) and all(
                isinstance(p, (list, tuple)) and len(p) == 2 for p in docs
            ):
                pairs = docs
            else:
                raise BenchmarkError(
                    f"{where}run query '{qid}' maps to {type(docs).__name__}, expected "
                    "{chunk_id: score}"
                )
            text = text and type(qid) is str
            for c, v in pairs:  # one pass: finite scores, and whether every id is a str
                if not _finite(v):  # as Run.from_trec refuses them: no order among infinities
                    from harness.core.frames import bad_score

                    raise BenchmarkError(f"{where}run query '{qid}', chunk '{c}': {bad_score(v)}")
                text = text and type(c) is str
        if not text:
            given = _as_text(given, where)
        if depth is None:
            depth = max((len(d) for d in given.values()), default=0) or 1
        return cls.from_scores(name or "run", given, depth)

    def cut(self, depth: int) -> Run:
        """The run with every list cut at `depth` (itself when no list is longer)."""
        if self.depth <= depth:
            return self
        cut = {}
        for q, r in self._rankings.items():
            codes = None if r.codes is None else r.codes[:depth]
            cut[q] = Ranking(r.ids[:depth], r.scores[:depth], codes)
        return Run(self.name, cut, depth)

    @classmethod
    def from_df(cls, df, *, name: str = "run", depth: int | None = None) -> Run:
        """A run from a pandas DataFrame with PyTerrier's columns (`qid, docno, score`) or
        ir_measures' (`query_id, doc_id, score`); other columns (`rank`) are ignored, the
        order comes from the scores. `depth` cuts each list (None: keep every chunk)."""
        return cls.of(df, name=name, depth=depth)

    def to_df(self):
        """The run as a pandas DataFrame: qid, docno, score, rank (from 0), PyTerrier's
        columns, in canonical order."""
        from harness.core.frames import run_frame

        return run_frame(self)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """`{query_id: {chunk_id: score}}` in canonical order."""
        return {q: dict(zip(r.ids, r.scores)) for q, r in self._rankings.items()}

    def to_trec(self, path: str | Path, *, tag: str | None = None) -> Path:
        """Write the run as a TREC run file (full-precision scores, canonical order), atomically."""
        from harness.core.files import write_text_atomic
        from harness.core.run.files import trec_lines

        path = Path(path).expanduser()
        write_text_atomic(path, trec_lines(self, self.query_ids(), tag or self.name))
        return path

    def __getitem__(self, query_id: str) -> Ranking:
        """The query's ranking; an empty one for a query the retriever returned nothing for."""
        return self._rankings.get(query_id, _EMPTY)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._rankings

    def __len__(self) -> int:
        return len(self._rankings)

    def query_ids(self) -> list[str]:
        """Query ids present in the run, in insertion order."""
        return list(self._rankings)

    def __repr__(self) -> str:
        n = len(self)
        return f"Run({self.name!r}, {n:,} quer{'y' if n == 1 else 'ies'}, depth {self.depth})"


def _as_text(given: Mapping, where: str) -> dict[str, list[tuple[str, float]]]:
    """A run's query and chunk ids as text ({1: {7: 0.5}} reads as the file 1 Q0 7 ... would);
    two query ids with one text ('1' and 1) are refused, not merged."""
    out: dict[str, list[tuple[str, float]]] = {}
    first: dict[str, object] = {}
    for qid, docs in given.items():
        pairs = docs.items() if isinstance(docs, Mapping) else docs
        key = str(qid)
        if key in out:
            raise BenchmarkError(
                f"{where}run query ids {first[key]!r} and {qid!r} are one id as text; give "
                "each query once"
            )
        first[key] = qid
        out[key] = [(str(c), v) for c, v in pairs]
        if isinstance(docs, Mapping) and len({c for c, _ in out[key]}) < len(docs):
            shown = next(c for c in docs if sum(str(d) == str(c) for d in docs) > 1)
            raise BenchmarkError(
                f"{where}run query {key!r}: chunk ids that are one id as text ({shown!r} and "
                f"{str(shown)!r}); give each chunk once"
            )
    return out


def _finite(value: object) -> bool:
    try:
        return math.isfinite(value)
    except TypeError:
        return False
