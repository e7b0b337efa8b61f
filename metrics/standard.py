"""Standard metrics for graded qrels with trec_eval's and ir_measures' semantics, computed
for all queries at once.

Families are keyed by trec_eval's names (ndcg, recall, P, map, recip_rank, success, Rprec,
bpref, infap, gm_map, iprec, num_q, num_ret, num_rel, num_rel_ret) and ir_measures' (judged,
err), each at a cut-off K or over the whole list (iprec at a recall level). Rankings and
judgments are matched by integer codes (corpus positions where rankings carry them, never
per-chunk string lookups) in one compiled pass (metrics._scan) that counts, at each K, what
most metrics need, and a second pass for the rest; chunks past the end of a list and
unjudged chunks have grade 0. Ids the corpus lacks match by id, as in trec_eval: a ranked
id the corpus lacks (code -1) is unjudged unless the judgments name that very id, and a
judged id the corpus lacks is relevant and counts in R, whether or not any list holds it.
A query with no relevant chunk (grade >= level) is NaN for the binary metrics; one with no
positive grade is NaN for nDCG and ERR; one without judgments is NaN for every metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, repeat

import numpy as np

from harness.core.run import Ranking


@dataclass(frozen=True)
class Judged:
    """Judgments encoded once: sorted integer keys (query row * stride + chunk code) with
    their grades. Codes are corpus positions when built with the benchmark's vocab, so
    rankings carrying codes match without string lookups; `code` maps judged ids to codes."""

    n_queries: int
    keys: np.ndarray  # int64, sorted
    grades: np.ndarray  # int64, aligned with keys
    rows: np.ndarray  # int64 query row of each key
    stride: int
    corpus_coded: bool
    docs: list[str]  # every judged id, in the order the judgments list them
    codes: np.ndarray  # their codes

    @cached_property
    def code(self) -> dict[str, int]:
        """Judged id -> code (made when an id has to be matched by name)."""
        return dict(zip(self.docs, self.codes.tolist()))


def prepare(
    judgments: Sequence[Mapping[str, int]], vocab: Mapping[str, int] | None = None
) -> Judged:
    """Encode per-query judgments; with `vocab` (chunk id -> corpus position) as codes."""
    judgments = list(judgments)
    lengths = np.fromiter(map(len, judgments), np.int64, len(judgments))
    docs = list(chain.from_iterable(judgments))
    grades = np.fromiter(chain.from_iterable(j.values() for j in judgments), np.int64, len(docs))
    if vocab is None:
        distinct = dict.fromkeys(docs)  # in order of first appearance
        code = dict(zip(distinct, range(len(distinct))))
        fresh = len(code)
        codes = np.fromiter(map(code.__getitem__, docs), np.int64, len(docs))
    else:
        fresh = len(vocab)
        codes = np.fromiter(map(vocab.get, docs, repeat(-1)), np.int64, len(docs))
        # judged but not in the corpus: a code past the corpus, which no ranking can hold
        past: dict[str, int] = {}
        for at in np.flatnonzero(codes < 0).tolist():
            codes[at] = past.setdefault(docs[at], fresh + len(past))
        fresh += len(past)
    rows = np.repeat(np.arange(len(judgments), dtype=np.int64), lengths)
    stride = fresh + 1
    keys = rows * stride + codes
    order = np.argsort(keys, kind="stable")
    return Judged(
        n_queries=len(judgments),
        keys=keys[order],
        grades=grades[order],
        rows=rows[order],
        stride=stride,
        corpus_coded=vocab is not None,
        docs=docs,
        codes=codes,
    )


def flat_codes(rankings: Sequence[Ranking | Sequence[str]], judged: Judged):
    """Every ranking's chunk codes end to end, and where each query's list starts (n + 1
    offsets). Rankings without corpus codes, and ids the corpus lacks (code -1), are looked up
    among the judged ids (-1 if not judged; for a large run's rankings, -1 also for an id
    judged only for other queries, which the scan would not match either)."""
    coded = [getattr(r, "codes", None) for r in rankings]
    if judged.corpus_coded and coded and all(c is not None for c in coded):
        return _corpus_codes(rankings, coded, judged)
    parts = []
    by_id = []  # rankings matched by id: those of one large run in one compiled pass
    for r in rankings:
        codes = getattr(r, "codes", None)
        if codes is not None and judged.corpus_coded:
            absent = np.flatnonzero(codes < 0)
            if len(absent):  # rare: a run naming chunks the corpus lacks
                codes = codes.copy()
                codes[absent] = [judged.code.get(r.ids[i], -1) for i in absent]
            parts.append(codes)
        else:
            by_id.append(len(parts))
            parts.append(r)
    if by_id and len(by_id) == len(parts):  # all matched by id: maybe one store's rankings
        from harness.core.run.store import id_codes_joined

        joined = id_codes_joined(parts, judged.code, _own(judged, by_id, parts))
        if joined is not None:
            return joined
    if by_id:
        from harness.core.run.store import id_codes

        chosen = [parts[i] for i in by_id]
        for i, codes in zip(by_id, id_codes(chosen, judged.code, _own(judged, by_id, chosen))):
            parts[i] = codes
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts)), out=offsets[1:])
    flat = np.concatenate(parts).astype(np.int64, copy=False) if parts else offsets[:0]
    return flat, offsets


def _corpus_codes(rankings, coded: list[np.ndarray], judged: Judged):
    """flat_codes when every ranking carries corpus codes: one concatenation, and the ids
    the corpus lacks (code -1, rare) looked up among the judged ids."""
    offsets = np.zeros(len(coded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, coded), np.int64, len(coded)), out=offsets[1:])
    flat = np.concatenate(coded).astype(np.int64, copy=False)
    absent = np.flatnonzero(flat < 0)
    if len(absent):  # concatenate made a fresh array: written in place
        at = np.searchsorted(offsets, absent, side="right") - 1  # ascending, like absent
        qs, first = np.unique(at, return_index=True)
        for q, js in zip(qs.tolist(), np.split(absent, first[1:])):
            ids, start = rankings[q].ids, int(offsets[q])
            flat[js] = [judged.code.get(ids[j - start], -1) for j in js.tolist()]
    return flat, offsets


def _own(judged: Judged, rows: list[int], rankings):
    """The judged (id, code) pairs of query rows `rows`, as runstore.id_codes takes them:
    a large run's rankings are matched against their own query's judgments (None when no
    ranking is of a large run)."""
    if all(getattr(r, "place", None) is None for r in rankings):
        return None
    from harness.core.run.store import ranges

    at = np.searchsorted(judged.rows, np.arange(judged.n_queries + 1))
    picked = np.asarray(rows, np.int64)
    count = at[picked + 1] - at[picked]
    pick = ranges(at[picked], count)
    values = judged.keys[pick] - judged.rows[pick] * judged.stride
    name = {c: d for d, c in judged.code.items()}
    offsets = np.zeros(len(picked) + 1, np.int64)
    np.cumsum(count, out=offsets[1:])
    return [name[c] for c in values.tolist()], values, offsets


def evaluate(
    rankings: Sequence[Ranking | Sequence[str]] | Coded,
    judgments: Judged | Sequence[Mapping[str, int]],
    wanted: Sequence[tuple[str, int | None]],
    *,
    level: int = 1,
) -> dict[tuple[str, int | None], np.ndarray]:
    """(family, K) -> per-query values, for canonical rankings (Ranking objects or id
    sequences, or already `code`d) and their queries' judgments (raw, or encoded once by
    `prepare`)."""
    # numba: loaded only when standard metrics are asked for
    from metrics._scan import scan, scan_trec

    if level < 1:
        raise ValueError(f"relevance level must be >= 1, got {level}")
    judged = judgments if isinstance(judgments, Judged) else prepare(judgments)
    n = len(rankings)
    if judged.n_queries != n:
        raise ValueError(f"{n} rankings but judgments for {judged.n_queries} queries")
    coded = rankings if isinstance(rankings, Coded) else code(rankings, judged)
    flat, offsets, jstarts, jcodes = coded.flat, coded.offsets, coded.jstarts, coded.jcodes
    ks = [k for family, k in wanted if k is not None and family != "iprec"]
    # width: the uncut metrics read the whole list, and uncut nDCG's ideal every judged chunk
    judged_most = int(np.diff(jstarts).max(initial=0))
    # a cut past every list and every judgment counts what the width counts: the scans run
    # to the width (so K = 10^11 costs nothing), the formulas still divide by K itself
    width = max([1, int(np.diff(offsets).max(initial=0)), judged_most])
    cuts = sorted({*(min(k, width) for k in ks), width})
    col = {c: i for i, c in enumerate(cuts)}
    rel_at, ap_at, dcg_at, idcg_at, first, top_r, num_rel = scan(
        flat, offsets, jcodes, judged.grades, jstarts, np.asarray(cuts, np.int64), level, width
    )
    trec = ()
    if any(family in _SECOND_PASS for family, _ in wanted):
        if any(family == "err" for family, _ in wanted):
            _check_err_grades(judged)
        # bpref, infAP, iprec at each recall level, judged chunks and ERR at each cut, as
        # trec_eval and ir_measures compute them
        points = sorted({k for family, k in wanted if family == "iprec"})
        trec = scan_trec(flat, offsets, jcodes, judged.grades, jstarts, level,
                         np.asarray(points, np.float64), np.asarray(cuts, np.int64))  # fmt: skip
    lengths = np.diff(offsets)
    judged_q = np.where(np.diff(jstarts) > 0, 1.0, np.nan)
    counts = Counts(rel_at, ap_at, dcg_at, idcg_at, first, top_r, num_rel, lengths, judged_q, *trec)
    out: dict[tuple[str, int | None], np.ndarray] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for family, k in wanted:
            if family not in FORMULAS:
                raise ValueError(f"unknown standard metric family '{family}'")
            if family == "iprec":  # k is a recall level: its column among the points
                value = FORMULAS[family](counts, points.index(k), k)
            else:
                cut = width if k is None else k
                value = FORMULAS[family](counts, col[min(cut, width)], cut)
            out[(family, k)] = np.asarray(value, np.float64)
    return out


@dataclass(frozen=True)
class Counts:
    """What the scans counted per query (rows) at each cut (columns): the inputs of every
    formula."""

    rel_at: np.ndarray
    ap_at: np.ndarray
    dcg_at: np.ndarray
    idcg_at: np.ndarray
    first: np.ndarray  # 0-based rank of the first relevant chunk
    top_r: np.ndarray  # relevant chunks in the top R
    num_rel: np.ndarray
    lengths: np.ndarray  # chunks each query's list holds
    judged: np.ndarray  # 1 where a query has judgments, NaN where it has none
    # the second pass (scan_trec), when a family needs it
    bpref: np.ndarray | None = None
    infap: np.ndarray | None = None
    iprec: np.ndarray | None = None  # queries x recall levels
    judged_at: np.ndarray | None = None  # queries x cuts: judged chunks in the top c
    err_at: np.ndarray | None = None  # queries x cuts: ERR over the top c

    @property
    def defined(self) -> np.ndarray:
        """1 where a query has a relevant chunk, NaN where it has none (binary metrics)."""
        return np.where(self.num_rel > 0, 1.0, np.nan)

    @property
    def positive(self) -> np.ndarray:
        """1 where a query has a positive grade, NaN where it has none (graded metrics)."""
        return np.where(self.idcg_at[:, -1] > 0, 1.0, np.nan)


# family -> formula(counts, column of the cut, the cut): one per measure, the cut being the
# list's full width for the uncut ones (map, recip_rank, ndcg, Judged) and the column of
# the recall level for iprec; the registry (metrics.registry) names these families and
# says which take a cut. Counts are defined for every judged query, relevant or not.
FORMULAS = {
    "recall": lambda s, c, k: s.rel_at[:, c] / s.num_rel,
    "P": lambda s, c, k: s.rel_at[:, c] / k * s.defined,
    "success": lambda s, c, k: (s.rel_at[:, c] > 0) * s.defined,
    # first is the width where nothing relevant was found (and K may pass the width)
    "recip_rank": lambda s, c, k: (
        np.where((s.first < k) & (s.rel_at[:, -1] > 0), 1.0 / (s.first + 1), 0.0) * s.defined
    ),
    "map": lambda s, c, k: s.ap_at[:, c] / s.num_rel,
    "gm_map": lambda s, c, k: s.ap_at[:, c] / s.num_rel,  # its mean is geometric
    "Rprec": lambda s, c, k: s.top_r / s.num_rel,
    # 0/0 = NaN where a query has no positive grade
    "ndcg": lambda s, c, k: s.dcg_at[:, c] / s.idcg_at[:, c],
    "bpref": lambda s, c, k: s.bpref * s.defined,
    "infap": lambda s, c, k: s.infap * s.defined,
    "iprec": lambda s, c, k: s.iprec[:, c] * s.defined,
    "err": lambda s, c, k: s.err_at[:, c] * s.positive,
    # ir_measures' Judged@k: judged share of the top min(k, list length); an empty list 0
    "judged": lambda s, c, k: (
        np.where(s.lengths > 0, s.judged_at[:, c] / np.maximum(np.minimum(k, s.lengths), 1), 0.0)
        * s.judged
    ),
    "num_q": lambda s, c, k: s.judged,
    "num_ret": lambda s, c, k: s.lengths * s.judged,
    "num_rel": lambda s, c, k: s.num_rel * s.judged,
    "num_rel_ret": lambda s, c, k: s.rel_at[:, c] * s.judged,
}
# families read from the second pass (scan_trec)
_SECOND_PASS = frozenset({"bpref", "infap", "iprec", "err", "judged"})
ERR_TOP_GRADE = 4  # gdeval's scale: a grade above it has a stopping chance over 1


def _check_err_grades(judged: Judged) -> None:
    top = int(judged.grades.max(initial=0))
    if top > ERR_TOP_GRADE:
        from harness.core.errors import HarnessError

        raise HarnessError(
            f"ERR reads grades 0-{ERR_TOP_GRADE} (gdeval's scale, as ir_measures does), but "
            f"a judgment has grade {top}; map the grades onto 0-{ERR_TOP_GRADE} or drop ERR"
        )


@dataclass(frozen=True)
class Coded:
    """Rankings and judgments as the compiled passes read them, made once for both passes:
    every ranking's chunk codes end to end with each query's offsets, and where each
    query's judgments start with their codes."""

    flat: np.ndarray
    offsets: np.ndarray
    jstarts: np.ndarray
    jcodes: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1


def code(rankings: Sequence[Ranking | Sequence[str]], judged: Judged) -> Coded:
    """`rankings` and `judged` coded for metrics._scan (flat_codes and the judgment layout)."""
    flat, offsets = flat_codes(rankings, judged)
    jstarts = np.searchsorted(judged.rows, np.arange(len(offsets)))
    return Coded(flat, offsets, jstarts, judged.keys - judged.rows * judged.stride)
