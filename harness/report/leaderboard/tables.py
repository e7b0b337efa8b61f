"""Leaderboard tables built from a Board: the RARE Table 3 layout, a hop table per corpus and
the reproduction report against the published numbers, each as a plain Table that the renderers
(board_render) turn into Markdown, LaTeX and CSV."""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.cell.result import Evaluation
from harness.core.tables import fixed
from harness.report.leaderboard.collect import AUTHORS, MODEL_CARD, SHIPPED, Board
from harness.report.terminal import scale

# as the RARE paper prints its group metrics
SHORT = {"coverage": "Cov", "perfrecall": "Perf", "group_ndcg": "NDCG", "group_mrr": "MRR"}
TABLE3_METRICS = ("coverage", "perfrecall")
HOP_METRICS = ("coverage", "perfrecall", "group_ndcg", "group_mrr")


@dataclass
class Value:
    value: float | None = None  # percent (a metric not in percent, answer_rank: as it is)
    text: str | None = None  # instead of a number (OK / FAIL, a name)
    ci: tuple[float, float] | None = None  # the 95 % bootstrap interval, in value's units
    best: bool = False
    mark: bool = False  # significantly below the best of its column (Holm-corrected)
    stale: bool = False  # scored on other data than the corpus's other cells


@dataclass
class Table:
    key: str  # file stem under leaderboard/
    title: str
    stub: str  # header of the first (label) column
    columns: list[str]
    rows: list[tuple[str, list[Value]]]
    groups: list[tuple[str, int]] = field(default_factory=list)  # spanning headers
    # LaTeX only: print as several tables, each with these column positions of every group
    # (a wide table split, never shrunk below a readable size); (caption suffix, positions)
    parts: list[tuple[str, list[int]]] = field(default_factory=list)
    group_notes: list[str] = field(default_factory=list)  # a second header line per group
    published: list[tuple[str, list[Value]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Options:
    k: int = 10
    alpha: float = 0.05
    tolerance: float = 0.5  # percentage points, |reproduced - published|
    permutations: int = 10_000
    seed: int = 0


def metric_name(family: str, k: int) -> str:
    return f"{family}@{k}"


def header(family: str, k: int) -> str:
    return SHORT[family] if family == "group_mrr" else f"{SHORT[family]}@{k}"


def _scaled(metric: str, x) -> float | None:
    """`metric`'s value as shown: in percent for a share, as it is otherwise (answer_rank)."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else scale(metric) * x


def _value(e: Evaluation, metric: str, strat: str = "overall", label: str | None = None) -> Value:
    """A cell's mean (and interval) in percent, or as it is for a metric not in percent
    (answer_rank); no value when it lacks the metric or the stratum."""
    ci, f = e.ci(metric, strat, label), scale(metric)
    return Value(
        _scaled(metric, e.mean(metric, strat, label)),
        ci=None if ci is None else (f * ci[0], f * ci[1]),
        stale=e.stale,
    )


class Significance:
    """Paired randomization tests against the best retriever of a column, on the per-query
    files (docs/metrics.md#paired-randomization-test); Holm-corrected over the retrievers of
    that column (cells are read with their per_query.csv, checked, when results/ is read)."""

    def __init__(self, board: Board, opts: Options):
        self.board, self.opts = board, opts

    def below_best(
        self, entries: dict[str, Evaluation], best: str, metric: str, strat: str, label: str | None
    ) -> set[str]:
        """Retrievers significantly below `best` on `metric` within the stratum."""
        base = entries[best]
        if metric not in base.values:
            return set()
        ref = self._values(base, metric, strat, label)
        from metrics.registry import aggregate_of, higher_is_better
        from metrics.stats import compare_many, holm

        names, pairs = [], []
        for name, entry in entries.items():
            if name == best or entry.stale or metric not in entry.values:
                continue
            other = self._values(entry, metric, strat, label)
            common = sorted(set(ref) & set(other))
            if common:
                names.append(name)
                pairs.append(
                    (np.array([ref[q] for q in common]), np.array([other[q] for q in common]))
                )
        tested = compare_many(
            pairs,
            permutations=self.opts.permutations,
            samples=0,
            seed=self.opts.seed,
            kinds=[aggregate_of(metric)] * len(pairs),
        )
        pvals = []
        for r in tested:
            worse = r.mean_b < r.mean_a if higher_is_better(metric) else r.mean_b > r.mean_a
            p = r.p_randomization if r.n else 1.0
            pvals.append(p if worse else 1.0)
        return {n for n, p in zip(names, holm(pvals)) if p < self.opts.alpha}

    @staticmethod
    def _values(cell, metric: str, strat: str, label: str | None) -> dict[str, float]:
        vals = cell.values[metric]
        if strat == "overall":
            return dict(zip(cell.query_ids, vals))
        labels = cell.strata.get(strat)
        if labels is None:
            return {}
        return {q: v for q, v, lab in zip(cell.query_ids, vals, labels) if lab == label}


def mark_best(
    rows: list[tuple[str, list[Value]]],
    column: int,
    sig: Significance | None,
    entries: dict[str, Evaluation],
    metric: str,
    strat: str = "overall",
    label: str | None = None,
    tol: float = 1e-9,
) -> None:
    live = [(name, vals[column]) for name, vals in rows if vals[column].value is not None]
    live = [(n, v) for n, v in live if not v.stale]
    if not live:
        return
    from metrics.registry import higher_is_better

    pick = max if higher_is_better(metric) else min  # outdated@K: the lowest is best
    top = pick(v.value for _, v in live)
    best_names = [n for n, v in live if abs(v.value - top) < tol]
    for _, v in live:
        v.best = abs(v.value - top) < tol
    if sig is None or len(live) < 2:
        return
    present = {n: entries[n] for n, _ in live if n in entries}
    below = sig.below_best(present, best_names[0], metric, strat, label)
    for n, v in live:
        v.mark = n in below


def order(board: Board, corpora: Sequence[str], metric: str) -> list[str]:
    """Retrievers sorted by their mean `metric` over the corpora of `corpora` where every one
    of them has it (common_corpora), weakest first (the paper's Table 3 order: BM25 on top,
    the strongest at the bottom): a mean over different corpora would compare apples with
    pears. Without a common corpus, over what each has."""
    names = board.retrievers(list(corpora))
    common = common_corpora(board, corpora, metric) or list(corpora)

    def key(name: str):
        vals = [board.cells[c][name].mean(metric) for c in common if name in board.cells[c]]
        vals = [v for v in vals if v is not None]
        return (np.mean(vals) if vals else -1.0, name)

    return sorted(names, key=key)


def common_corpora(board: Board, corpora: Sequence[str], metric: str) -> list[str]:
    """The corpora of `corpora` on which every retriever shown has a value of `metric`."""
    names = board.retrievers(list(corpora))

    def has(c: str, name: str) -> bool:
        e = board.cells[c].get(name)
        return e is not None and e.mean(metric) is not None

    return [c for c in corpora if all(has(c, n) for n in names)]


def _diag_note(board: Board, corpus: str) -> str:
    d = board.diagnostics.get(corpus) or {}
    parts = []
    if d.get("similarity") is not None:
        parts.append(f"Sim {100 * d['similarity']:.1f}% ({d.get('embedder', '?')})")
    if d.get("redundancy") is not None:
        parts.append(f"Red {100 * d['redundancy']:.1f}%")
    return " · ".join(parts) or "diagnostics: run python -m harness.diagnose"


def table3(board: Board, corpora: Sequence[str], opts: Options, sig: Significance | None):
    """Rows = retrievers, column groups = corpora, columns Coverage@K and PerfRecall@K; the
    published Table 3 rows below; best per column bold, * significantly below the best."""
    k = opts.k
    metrics = [metric_name(f, k) for f in TABLE3_METRICS]
    columns = [(c, header(f, k), metric_name(f, k), "overall", None, board.cells[c])
               for c in corpora for f in TABLE3_METRICS]  # fmt: skip
    published = []
    ref_rows: dict[str, dict[tuple[str, str], float]] = {}
    for ref in board.references:
        if ref.source == "rare-paper-table3":
            ref_rows.setdefault(ref.retriever, {})[(ref.corpus, ref.metric)] = ref.value
    if k == 10:
        for name, got in ref_rows.items():
            vals = [Value(got.get((c, m))) for c in corpora for m in metrics]
            if any(v.value is not None for v in vals):
                published.append((f"{board.label(name)} (published)", vals))
    title = f"Coverage@{k} and PerfRecall@{k} (%), RARE Table 3 layout"
    table = grouped_table(
        board, order(board, corpora, metrics[0]), columns, sig, "table3", title, drop=False,
        group_notes=[_diag_note(board, c) for c in corpora], published=published,
    )  # fmt: skip
    table.notes = _legend(board, corpora, sig, published=bool(published), table=table)
    table.notes.append(
        "Sim: corpus Similarity, the mean cosine of chunk pairs under the named embedder; "
        "Red: gold redundancy, the share of gold groups with more than one chunk"
    )
    if len(corpora) > 1:
        common = common_corpora(board, corpora, metrics[0])
        over = ", ".join(common) if common else "each retriever's own corpora (none is common)"
        by = header(TABLE3_METRICS[0], k)
        table.notes.append(f"Rows: weakest first by mean {by} over {over}")
    return table


def hop_labels(board: Board, corpus: str, stratification: str = "hop") -> list[str]:
    from harness.core.labels import label_order

    labels = set()
    for e in board.cells[corpus].values():
        labels |= set(((e.doc.get("results") or {}).get(stratification) or {}).keys())
    return label_order(labels)


def group_stratum(board: Board, corpus: str) -> str:
    """The stratification that counts a query's gold groups on `corpus`: `hop`, or `relevant`
    on a BEIR-shaped corpus, where each relevant document is its own group
    (harness.strata.hop.group_stratum)."""
    if not hop_labels(board, corpus) and hop_labels(board, corpus, "relevant"):
        return "relevant"
    return "hop"


def field_names(board: Board, corpus: str) -> list[str]:
    """The query fields (strata.fields) some cell of the corpus is stratified by."""
    found: dict[str, None] = {}
    for e in board.cells[corpus].values():
        names = ((e.doc.get("config") or {}).get("strata") or {}).get("fields") or []
        found.update((str(f), None) for f in names if (e.doc.get("results") or {}).get(f))
    return list(found)


def _file_part(name: str) -> str:
    """`name` as part of a file name: itself when it is plain, else its plain characters and
    eight hex digits of its SHA-256 (two fields never share a file)."""
    if re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        return name
    plain = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_.")[:32]
    return f"{plain}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def fields(board: Board, corpus: str, opts: Options, sig: Significance | None) -> list[Table]:
    """The hop table's shape for each query field of `strata.fields` (`by_<field>_<corpus>`)."""
    return [hops(board, corpus, opts, sig, field) for field in field_names(board, corpus)]


def hops(
    board: Board, corpus: str, opts: Options, sig: Significance | None, by: str = "hop"
) -> Table:
    """Rows = retrievers; column groups overall and each hop depth (or each label of the
    stratification `by`: a query field), with its query count; columns Coverage,
    PerfRecall, NDCG, MRR at K. A BEIR-shaped corpus counts relevant documents instead of
    gold groups (harness.strata.hop.group_stratum): its `relevant` strata stand for hop."""
    k = opts.k
    hop = by == "hop"
    by = group_stratum(board, corpus) if hop else by
    metrics = [metric_name(f, k) for f in HOP_METRICS]
    cells = board.cells[corpus]
    names = order(board, [corpus], metrics[0])
    columns, groups = [], []
    for strat, label in [("overall", None)] + [(by, h) for h in hop_labels(board, corpus, by)]:
        ns = {e.n(strat, label) for e in cells.values() if not e.stale} - {None}
        n = f"n={ns.pop()}" if len(ns) == 1 else "n differs"
        name = {"overall": "overall", "hop": f"{label}-hop", "relevant": f"{label} relevant"}
        group = f"{name.get(strat, label)} ({n})"
        groups.append((group, len(HOP_METRICS)))  # a field label may read like another group
        columns += [
            (group, header(f, k), m, strat, label, cells) for f, m in zip(HOP_METRICS, metrics)
        ]
    key = f"hops_{corpus}" if hop else f"by_{_file_part(by)}_{corpus}"
    title = f"{corpus}: overall and by {_BY.get(by, by)}, @{k} (%)"
    parts = [("Coverage and PerfRecall", [0, 1]), ("NDCG and MRR", [2, 3])]
    table = grouped_table(
        board, names, columns, sig, key, title, drop=False, groups=groups, parts=parts
    )
    table.notes = _legend(board, [corpus], sig, published=False, table=table)
    return table


_BY = {"hop": "hop depth", "relevant": "relevant documents per query"}


@functools.cache
def _pinned_file(corpus: str) -> str | None:
    """The git blob id the shipped config of `corpus` pins its file to (None: none pins it)."""
    from omegaconf import OmegaConf

    from harness.core.paths import conf_dir

    path = conf_dir() / "corpus" / f"{corpus}.yaml"
    return OmegaConf.load(path).get("git_blob_sha1") if path.is_file() else None


def reproduction(board: Board, corpora: Sequence[str], opts: Options) -> tuple[Table, int]:
    """Every published number that has a reproduced cell, with the delta and OK / FAIL at the
    tolerance; returns the table and the number of FAILs."""
    rows, fails, unrun = [], 0, set()
    tied = unrecorded = 0
    other_data: set[tuple[str, str]] = set()
    missing: dict[tuple[str, str], set[str]] = {}
    configs: dict[str, set[str]] = {AUTHORS: set(), SHIPPED: set(), MODEL_CARD: set()}
    for ref in board.references:
        if ref.corpus not in corpora:
            continue
        match = board.reproducing(ref.corpus, ref.retriever)  # the authors' setup first
        if match is None:
            unrun.add((ref.corpus, ref.retriever))
            continue
        e = match.entry
        configs[match.config].add(e.retriever)
        pinned = _pinned_file(ref.corpus)
        held = ((e.doc.get("benchmark") or {}).get("metadata") or {}).get("git_blob_sha1")
        if pinned and held and held != pinned:  # the corpus's name, another file's data
            other_data.add((ref.corpus, str(held)))
        got = _scaled(ref.metric, e.mean(ref.metric))
        delta = None if got is None else got - ref.value
        ok = delta is not None and abs(delta) <= opts.tolerance + 1e-9 and not e.stale
        computed = ref.metric in (e.doc.get("metrics") or [])
        if not computed:
            missing.setdefault((ref.corpus, e.retriever), set()).add(ref.metric)
        span = tie_range(e, ref.metric)
        slack = opts.tolerance + ROUNDING + 1e-9
        by_ties = (
            not ok
            and computed
            and not e.stale
            and span is not None
            and span[0] - slack <= ref.value <= span[1] + slack
        )
        tied += span is not None and span[1] - span[0] > 1e-9
        unrecorded += computed and not _records_ties(e)
        same_data = not (pinned and held and held != pinned)
        fails += computed and not ok and not by_ties and match.counts and same_data
        miss = ("FAIL" if match.counts else "differs") if same_data else "other data"
        status = "OK" if ok else "OK (ties)" if by_ties else (miss if computed else "not computed")
        rows.append(
            (
                match.label,
                [
                    Value(text=ref.corpus),
                    Value(text=ref.metric),
                    Value(text=ref.source),
                    Value(ref.value),
                    Value(got, stale=e.stale),
                    Value(text="-" if delta is None else fixed(delta, signed=True)),
                    Value(text=status),
                    Value(text=_span_text(span, _records_ties(e) or not computed)),
                ],
            )
        )
    table = Table(
        key="reproduction",
        title=f"Reproduction of the published numbers (tolerance ±{opts.tolerance:g} points)",
        stub="Retriever",
        columns=[
            "Corpus",
            "Metric",
            "Source",
            "Published",
            "Reproduced",
            "Δ",
            "Status",
            "Tie range",
        ],
        rows=rows,
    )
    if not rows:
        table.notes.append("no published number has a reproduced cell here")
    if tied:
        table.notes.append(
            "Tie range: the lowest and highest reproduced value over every order of tied "
            "scores (docs/metrics.md#ties); OK (ties): outside the tolerance but inside the "
            f"tie range widened by the tolerance and {ROUNDING:g} (published numbers carry two "
            "decimals); -: no query's value depends on tied scores"
        )
    if unrecorded:
        table.notes.append(
            "not recorded: the cell predates tie ranges; rerun it with force=true to record them"
        )
    for corpus, held in sorted(other_data):
        pinned = str(_pinned_file(corpus))[:12]
        table.notes.append(
            f"other data: the {corpus} cells were scored on a file (git blob {held[:12]}) that "
            f"is not the published one (conf/corpus/{corpus}.yaml pins {pinned}); their "
            "differences are not failures"
        )
    if unrun:
        table.notes.append(
            f"{len(unrun)} published (corpus, retriever) cells were not run here: "
            + ", ".join(f"{r} on {c}" for c, r in sorted(unrun)[:6])
            + (" …" if len(unrun) > 6 else "")
        )
    for (corpus, name), metrics in sorted(missing.items()):
        variant = board.cells[corpus][name].doc.get("variant")
        choice = "retriever=..." if variant else f"retriever={name}"
        table.notes.append(
            f"not computed: {name} on {corpus} lacks {', '.join(sorted(metrics))}; add it "
            f"without retrieving again: python -m harness corpus={corpus} {choice} "
            f"metrics.names=[{','.join(sorted(metrics))}] (the stored ranked list is scored)"
        )
    table.notes += _compared_notes(configs)
    sources = sorted({r.source for r in board.references})
    if sources:
        table.notes.append("sources: " + ", ".join(sources) + " (see docs/metrics.md)")
    return table, fails


ROUNDING = 0.005  # half a unit of the published numbers' last digit (two decimals)


def tie_range(e: Evaluation, metric: str) -> tuple[float, float] | None:
    """The cell's overall tie range of `metric` in percent (as it is for a metric not in
    percent) (metrics.json `ties`), or None where the cell records none (cells from before
    tie ranges)."""
    ties = ((e.doc.get("results") or {}).get("overall") or {}).get("ties")
    bounds = ties.get(metric) if isinstance(ties, dict) else None
    if not isinstance(bounds, list) or len(bounds) != 2:
        return None
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in bounds):
        return None
    return scale(metric) * bounds[0], scale(metric) * bounds[1]


def _records_ties(e: Evaluation) -> bool:
    return isinstance(((e.doc.get("results") or {}).get("overall") or {}).get("ties"), dict)


def _span_text(span: tuple[float, float] | None, recorded: bool) -> str:
    if span is None:
        return "-" if recorded else "not recorded"
    return "-" if span[1] - span[0] <= 1e-9 else f"{fixed(span[0])}–{fixed(span[1])}"


def _compared_notes(configs: dict[str, set[str]]) -> list[str]:
    """Which config the reproduced rows ran (docs/leaderboard.md, the reproduction report)."""
    notes = []
    if configs[AUTHORS] or configs[SHIPPED]:
        notes.append(
            "compared: the authors' setup, "
            + ", ".join(sorted(configs[AUTHORS] | configs[SHIPPED]))
            + " (`<model>-rare` configs run a model as the RARE authors' code did; a config "
            "without one is their setup already)"
        )
    if configs[MODEL_CARD]:
        notes.append(
            f"(model card): {', '.join(sorted(configs[MODEL_CARD]))} ran the model-card config, "
            "not the authors' setup; a miss there reads 'differs', not FAIL, and does not fail "
            "--check; run retriever=<name>-rare for the comparison that counts"
        )
    return notes


def cutoffs(per_cell: list[set[int]]) -> tuple[list[int], list[str]]:
    """The cutoffs every cell has (else all of them, shown with '-'), and the note naming
    the ones left out."""
    union = set().union(*per_cell)
    ks = set.intersection(*per_cell) or union
    dropped = sorted(union - ks)
    note = f"not shown: @{', @'.join(map(str, dropped))} (not in every cell; leaderboard.csv "
    return sorted(ks), [note + "has every value)"] if dropped else []


def section_mismatch(cells: dict[str, Evaluation], key: str) -> str:
    """'' when every cell's `key` section (utility, rag) gives comparable numbers, else a
    warning naming the first setting that differs: their values do not compare, so no best
    is marked among them."""
    from harness.cell.sections import SECTIONS

    section = next(s for s in SECTIONS if s.key == key)
    sections = {n: (e.doc.get("config") or {}).get(key) or {} for n, e in cells.items()}
    first = next(iter(sections.values()))
    for name, other in sections.items():
        diff = section.difference(first, other)
        if diff:
            return (
                f"the cells were scored with different {key} settings ({diff}, e.g. for "
                f"{name}): their values do not compare, and no best is marked"
            )
    return ""


def weakest_first(names, score) -> list[str]:
    """`names` by score(name), lowest first; those without a score (None) on top, then by
    name."""
    return sorted(names, key=lambda n: (-math.inf if (x := score(n)) is None else x, n))


def held_metrics(e: Evaluation) -> set[str]:
    """Every metric a cell holds: the names it was scored with and its overall means."""
    overall = (e.doc.get("results") or {}).get("overall") or {}
    return set(e.doc.get("metrics") or []) | set(overall.get("mean") or {})


def cell_ks(e: Evaluation, families) -> set[int]:
    """The cutoffs K at which the cell holds a metric family@K of `families`."""
    out = set()
    for name in held_metrics(e):
        family, _, k = name.partition("@")
        if family in families and k.isdigit():
            out.add(int(k))
    return out


def grouped_table(
    board: Board,
    names: list[str],
    columns: list[tuple[str, str, str, str, str | None, dict[str, Evaluation]]],
    sig: Significance | None,
    key: str,
    title: str,
    drop: bool = True,
    marked: bool = True,
    **table: Any,
) -> Table | None:
    """Rows `names`, a column per (group, header, metric, stratification, label, cells): the
    mean of the row's cell in `cells` ('-' without one) in that stratum. With `drop`, a column
    no cell has a value in is dropped (a group with it when it empties; None when none is
    left); each column's best value is marked (unless not `marked`); `table`: the Table's
    other fields (`groups` where runs of one group name are not enough to tell groups apart)."""
    rows = [
        (n, [_value(c[n], m, s, lab) if n in c else Value() for _, _, m, s, lab, c in columns])
        for n in names
    ]
    keep = [
        i for i in range(len(columns)) if not drop or any(v[i].value is not None for _, v in rows)
    ]
    if not keep:
        return None
    rows = [(n, [v[i] for i in keep]) for n, v in rows]
    columns = [columns[i] for i in keep]
    for j, (_, _, m, s, lab, c) in enumerate(columns if marked else ()):
        mark_best(rows, j, sig, c, m, s, lab)
    return Table(
        key=key,
        title=title,
        stub="Retriever",
        columns=[col[1] for col in columns],
        rows=[(board.label(n), v) for n, v in rows],
        groups=table.pop("groups", None)
        or [(g, len(list(run))) for g, run in itertools.groupby(col[0] for col in columns)],
        **table,
    )


def _legend(
    board: Board, corpora, sig: Significance | None, published: bool, table: Table
) -> list[str]:
    notes = ["bold: best reproduced value of its column"]
    if any(v.value is None for _, vals in table.rows for v in vals):
        notes.append(
            "-: no value (the cell was not scored with that metric, or has no query in that "
            "stratum; python -m harness with metrics.names=[...] scores its stored ranked list)"
        )

    if sig is not None:
        notes.append(
            "*: significantly below the best of its column (paired randomization test, "
            f"{sig.opts.permutations:,} sign flips, Holm-corrected over the column's "
            f"retrievers, α = {sig.opts.alpha:g})"
        )
    if any(e.stale for c in corpora for e in board.cells[c].values()):
        notes.append("†: scored on other benchmark data than the corpus's other cells")
    if published:
        notes.append("(published): RARE paper, Table 3")
    return notes
