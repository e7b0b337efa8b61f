"""Leaderboard plots (matplotlib, PNG and SVG): PerfRecall@K by hop, Coverage@K against corpus
Similarity, and with semantic strata the per-cluster box plots and the cluster coverage
scatter. Each function returns the files it wrote."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.tables import order

DPI = 150


log = logging.getLogger("harness.report")


def _plt():
    import matplotlib

    matplotlib.use("Agg")  # files only; never a window
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "font.size": 10,
            "axes.titlesize": 11,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "svg.hashsalt": "retrieval-harness",
            "svg.fonttype": "none",
        }
    )
    return plt


def _save(fig, out: Path, stem: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    fig.savefig(paths[0], dpi=DPI, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight", metadata={"Date": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return paths


def _styles(names: list[str]) -> dict[str, dict]:
    """One colour and marker per retriever, stable across every plot."""
    cmap = _plt().get_cmap("tab10")
    markers = "osD^vP*Xh<>"
    return {
        n: {"color": cmap(i % 10), "marker": markers[i % len(markers)]}
        for i, n in enumerate(sorted(names))
    }


def _dodge(n: int, width: float) -> list[float]:
    """Offsets that set n series side by side, so one never hides under another."""
    if n <= 1:
        return [0.0] * n
    return [width * (i / (n - 1) - 0.5) for i in range(n)]


def _legend_outside(fig, axes, n_entries: int) -> None:
    """One legend for the figure, right of the panels: it never covers data."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:
        fig.legend(
            handles,
            labels,
            loc="upper left",
            bbox_to_anchor=(1.0, 0.93),
            fontsize=8,
            frameon=False,
            ncol=1 if n_entries <= 18 else 2,
        )


def perfrecall_by_hop(board: Board, corpora: list[str], out: Path, k: int = 10) -> list[Path]:
    """One panel per corpus with values: PerfRecall@K (y) by hop depth (x) with its 95 %
    bootstrap interval where the cell has one, one marker series per retriever, dodged
    sideways so identical series stay visible; one legend outside the panels. A BEIR-shaped
    corpus is drawn by its number of relevant documents (each its own group). Corpora whose
    cells lack PerfRecall@K get no (empty) panel."""
    from harness.report.leaderboard.tables import group_stratum, hop_labels

    plt = _plt()
    metric = f"perfrecall@{k}"
    by = {c: group_stratum(board, c) for c in corpora}
    drawn = [c for c in corpora if _has(board, c, metric, by[c])]
    if not drawn:
        return []
    names = board.retrievers(drawn)
    styles = _styles(names)
    fig, axes = _panels(plt, len(drawn), 4.4, 3.6, sharey=True)
    for ax, corpus in zip(axes.flat, drawn):
        strat = by[corpus]
        hops = hop_labels(board, corpus, strat)
        series = order(board, [corpus], metric)[::-1]
        for name, dx in zip(series, _dodge(len(series), 0.5)):
            e = board.cells[corpus][name]
            ys = [e.mean(metric, strat, h) for h in hops]
            ys = [np.nan if y is None else 100 * y for y in ys]
            cis = [e.ci(metric, strat, h) for h in hops]
            below = [0.0 if c is None or y != y else y - 100 * c[0] for y, c in zip(ys, cis)]
            above = [0.0 if c is None or y != y else 100 * c[1] - y for y, c in zip(ys, cis)]
            ax.errorbar(
                [i + dx for i in range(len(hops))],
                ys,
                yerr=[below, above],
                elinewidth=0.7,
                capsize=2,
                label=board.label(name) + (" †" if e.stale else ""),
                linewidth=0.9,
                alpha=0.9,
                markersize=6,
                markeredgecolor="black",
                markeredgewidth=0.4,
                **styles[name],
            )
        ax.set_xticks(range(len(hops)), hops)
        ax.set_xlim(-0.6, len(hops) - 0.4)
        ax.set_title(corpus)
        ax.set_xlabel(_GROUPS[strat])
        ax.set_ylim(-3, 103)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"PerfRecall@{k} (%)")
    title = (
        f"PerfRecall@{k} by hop depth: every gold group must be in the top {k}\n"
        "(bars: 95 % bootstrap interval of the mean)"
    )
    beir = [c for c in drawn if by[c] == "relevant"]
    if beir:
        title += f"\n({', '.join(beir)}: by relevant documents, each its own gold group)"
    skipped = [c for c in corpora if c not in drawn]
    if skipped:
        title += f"\n(not computed for {', '.join(skipped)})"
    fig.suptitle(title)
    fig.tight_layout()
    _legend_outside(fig, axes.flat, len(names))
    return _save(fig, out, "perfrecall_by_hop")


_GROUPS = {"hop": "hop depth (gold groups per query)", "relevant": "relevant documents per query"}


def _has(board: Board, corpus: str, metric: str, strat: str = "overall") -> bool:
    """Whether any cell of `corpus` has a value of `metric` (in a stratum of `strat`)."""
    for e in board.cells[corpus].values():
        res = e.doc.get("results") or {}
        nodes = [res.get("overall")] if strat == "overall" else (res.get(strat) or {}).values()
        if any(n and (n.get("mean") or {}).get(metric) is not None for n in nodes):
            return True
    return False


def coverage_vs_similarity(board: Board, corpora: list[str], out: Path, k: int = 10):
    """Coverage@K (y) against the corpus's Similarity (%) (x): one marker per (retriever,
    corpus) at exactly its corpus's Similarity (a corpus has one), no lines (corpora are not
    a series), each retriever its own marker shape, half transparent so equal values stay
    visible; corpus names on the top axis; the legend outside. Corpora without a Similarity
    or without Coverage@K are left out, named in the title for what they lack."""
    plt = _plt()
    metric = f"coverage@{k}"
    have = [
        c
        for c in corpora
        if board.diagnostics.get(c, {}).get("similarity") is not None and _has(board, c, metric)
    ]
    if not have:
        return []
    have.sort(key=lambda c: board.diagnostics[c]["similarity"])
    xs = {c: 100 * board.diagnostics[c]["similarity"] for c in have}
    embedders = sorted({board.diagnostics[c].get("embedder", "?") for c in have})
    names = board.retrievers(have)
    styles = _styles(names)
    span = max(xs.values()) - min(xs.values()) if len(have) > 1 else 10.0
    margin = max(span, 10.0) * 0.08
    fig, ax = plt.subplots(figsize=(7.2, 4.4))
    series = order(board, have, metric)[::-1]
    for name in series:
        pts = [(xs[c], board.cells[c][name].mean(metric)) for c in have if name in board.cells[c]]
        pts = [(x, 100 * y) for x, y in pts if y is not None]
        if pts:
            ax.plot(
                *zip(*pts),
                linestyle="none",
                label=board.label(name),
                markersize=8,
                alpha=0.75,
                markeredgecolor="black",
                markeredgewidth=0.5,
                **styles[name],
            )
    for c in have:
        ax.axvline(xs[c], color="grey", linewidth=0.6, linestyle=":", zorder=0)
    top = ax.secondary_xaxis("top")
    top.set_xticks([xs[c] for c in have], _spread_labels(have, xs, span), fontsize=8)
    top.tick_params(length=0)
    ax.set_xlim(min(xs.values()) - margin, max(xs.values()) + margin)
    ax.set_xlabel(f"corpus Similarity (%): mean cosine of chunk pairs ({', '.join(embedders)})")
    ax.set_ylabel(f"Coverage@{k} (%)")
    ax.set_ylim(-3, 103)
    title = f"Coverage@{k} against corpus Similarity"
    no_sim = [c for c in corpora if board.diagnostics.get(c, {}).get("similarity") is None]
    no_cov = [c for c in corpora if c not in no_sim and c not in have]
    lacks = [f"no Similarity for {', '.join(no_sim)}: python -m harness.diagnose corpus=..."]
    lacks = lacks if no_sim else []
    lacks += [f"no Coverage@{k} for {', '.join(no_cov)}"] if no_cov else []
    if lacks:
        title += "\n(" + "; ".join(lacks) + ")"
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    _legend_outside(fig, [ax], len(names))
    return _save(fig, out, "coverage_vs_similarity")


def _spread_labels(corpora: list[str], xs: dict[str, float], span: float) -> list[str]:
    """Corpus names for the top axis; a name too close to the previous one goes on a second
    line, so neighbours never print over each other."""
    out, last, lifted = [], None, False
    for c in corpora:
        close = last is not None and xs[c] - last < max(span, 10.0) * 0.08
        lifted = close and not lifted
        out.append(f"{c}\n" if lifted else c)
        last = xs[c]
    return out


def cluster_boxplots(board: Board, corpus: str, out: Path, k: int = 10) -> list[Path]:
    """Per retriever, the spread of per-cluster mean Coverage@K and PerfRecall@K over the
    clusters with at least min_queries queries."""
    plt = _plt()
    cells = board.cells[corpus]
    names = [n for n in order(board, [corpus], f"coverage@{k}") if cells[n].doc.get("semantic")]
    if not names:
        return []
    min_q = cells[names[0]].doc["semantic"].get("min_queries", 5)
    fig, axes = plt.subplots(1, 2, figsize=(max(6.4, 1.6 * len(names) + 3), 4.2), sharey=True)
    for ax, fam, long in zip(axes, ("coverage", "perfrecall"), ("Coverage", "PerfRecall")):
        metric = f"{fam}@{k}"
        data, labels = [], []
        for n in names:
            by = (cells[n].doc.get("results") or {}).get("cluster") or {}
            vals = [
                100 * s["mean"][metric]
                for lab, s in by.items()
                if lab != "n/a" and s.get("n", 0) >= min_q and s["mean"].get(metric) is not None
            ]
            data.append(vals)
            labels.append(f"{board.label(n)}\n({len(vals)} clusters)")
        ax.boxplot(
            data,
            showmeans=True,
            meanprops={"marker": "^", "markerfacecolor": "white", "markeredgecolor": "black"},
        )
        ax.set_xticks(range(1, len(labels) + 1), labels, fontsize=8)
        ax.set_title(f"{long}@{k} per cluster")
        ax.set_ylim(-2, 102)
    axes[0].set_ylabel("cluster mean (%)")
    fig.suptitle(
        f"{corpus}: spread across semantic clusters with ≥ {min_q} queries "
        "(box: quartiles, ▲: mean)"
    )
    fig.tight_layout()
    return _save(fig, out, f"clusters_box_{corpus}")


def cluster_scatter(board: Board, corpus: str, out: Path, k: int = 10) -> list[Path]:
    """Chunks (x) against queries (y) per semantic cluster of at least min_cluster_entities
    entities (the clusters the run's coverage figures count), coloured by the cluster's mean
    Coverage@K, one panel per retriever with cluster values, in the box plots' order;
    zero-query clusters in grey on the bottom line; MSC, SCC and ZQC as the run reports them."""
    strata = board.strata.get(corpus)
    if not strata:
        return []
    plt = _plt()
    from matplotlib.colors import Normalize
    from matplotlib.ticker import FuncFormatter, NullFormatter

    cells = board.cells[corpus]
    metric = f"coverage@{k}"
    with_strata = [n for n in order(board, [corpus], metric) if cells[n].doc.get("semantic")]
    names = [n for n in with_strata if _cluster_means(cells[n], metric)]
    if not names:
        return []
    coverage = cells[names[0]].doc["semantic"].get("coverage") or {}
    min_entities = coverage.get("min_cluster_entities", 1)
    # (a strata file without entity counts: every cluster)
    clusters = [c for c in strata["clusters"] if (c["n_entities"] or min_entities) >= min_entities]
    chunks = np.array([c["n_chunks"] for c in clusters], dtype=float)
    queries = np.array([c["n_queries"] for c in clusters], dtype=float)
    ids = [str(c["id"]) for c in clusters]
    zero = queries == 0
    fig, axes = _panels(plt, len(names), 4.6, 3.9, extra=0.8, sharex=True, sharey=True)
    norm = Normalize(0, 100)
    sc = None
    for ax, name in zip(axes.flat, names):
        by = _cluster_means(cells[name], metric)
        color = np.array([100 * by[i]["mean"][metric] if i in by else np.nan for i in ids])
        jitter = 0.5  # zero-query clusters sit on the bottom line of the log axis
        ax.scatter(
            chunks[zero],
            np.full(zero.sum(), jitter),
            s=8,
            color="lightgrey",
            edgecolors="none",
        )
        keep = ~zero & ~np.isnan(color)
        ax.scatter(  # touched, but no query's primary cluster: no cluster mean to colour
            chunks[~zero & np.isnan(color)],
            queries[~zero & np.isnan(color)],
            s=14,
            facecolors="white",
            edgecolors="black",
            linewidths=0.5,
        )
        sc = ax.scatter(
            chunks[keep],
            queries[keep],
            c=color[keep],
            cmap="viridis",
            norm=norm,
            s=14 + 2 * np.sqrt(queries[keep]),
            edgecolors="black",
            linewidths=0.3,
        )
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # 1, 10, 100 rather than 10^0 and crowded minors
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(NullFormatter())
        ax.set_title(board.label(name))
    for ax in axes[-1, :]:
        ax.set_xlabel("chunks in the cluster")
    for ax in axes[:, 0]:
        ax.set_ylabel("queries touching the cluster")
    cbar = fig.colorbar(sc, ax=axes.ravel().tolist(), shrink=0.9)
    cbar.set_label(f"cluster mean Coverage@{k} (%)")
    fig.text(  # the key for the grey dots, below the panels rather than over the data
        0.01,
        -0.02,
        f"grey dots on the bottom line: the {int(zero.sum())} clusters no query touches; "
        "white: touched, but no query's primary cluster (so no cluster mean)",
        fontsize=8,
        color="dimgrey",
    )
    s = coverage if "msc" in coverage else strata.get("summary") or {}
    title = (
        f"{corpus}: query coverage of the {len(clusters)} semantic clusters"
        + (f" of ≥ {min_entities} entities" if min_entities > 1 else "")
        + f" (MSC {100 * s.get('msc', 0):.1f}%, SCC {100 * s.get('scc', 0):.1f}%, "
        f"ZQC {s.get('zqc', int(zero.sum()))})"
    )
    left = [board.label(n) for n in with_strata if n not in names]
    if left:
        title += f"\n(no cluster values: {', '.join(left)})"
    fig.suptitle(title)
    return _save(fig, out, f"clusters_scatter_{corpus}")


def _panels(plt, n: int, width: float, height: float, extra: float = 0.0, **share):
    """A figure of n panels, up to three a row (axes as a 2-D array), the unused ones hidden."""
    cols = min(n, 3)
    rows = -(-n // cols)
    size = (width * cols + extra, height * rows)
    fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False, **share)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig, axes


def _cluster_means(cell, metric: str) -> dict:
    """cluster id -> the cell's summary there, for the clusters where `metric` has a mean."""
    by = (cell.doc.get("results") or {}).get("cluster") or {}
    return {i: s for i, s in by.items() if (s.get("mean") or {}).get(metric) is not None}


def coverage_types(board: Board, corpora: list[str], out: Path, k: int = 10) -> list[Path]:
    """RARE's Figure 7: per corpus, one bar per retriever cell with end-to-end RAG at K,
    split into the shares of the four coverage types, with the E2E accuracy within each type
    written in its segment. Corpora without such cells get no panel."""
    from metrics.rag import TYPES

    with_rag = [c for c in corpora if any(_types(e) for e in board.cells[c].values())]
    drawn = [c for c in with_rag if any(str(k) in _types(e) for e in board.cells[c].values())]
    if len(drawn) < len(with_rag):  # say so, rather than leave a plot out silently
        held = sorted(
            {int(x) for c in with_rag for e in board.cells[c].values() for x in _types(e)}
        )
        log.info(
            f"no coverage-types plot at K = {k} for {', '.join(sorted(set(with_rag) - set(drawn)))}"
            f": its cells hold e2e@K at K = {', '.join(map(str, held))}; --k {held[-1]} draws it"
        )
    if not drawn:
        return []
    plt = _plt()
    colours = {"intersection": "#4c72b0", "retrieval_only": "#55a868",
               "parametric_only": "#dd8452", "complementary": "#c44e52"}  # fmt: skip
    fig, axes = plt.subplots(
        1, len(drawn), figsize=(4.8 * len(drawn), 3.8), squeeze=False, sharey=True
    )
    for ax, corpus in zip(axes.flat, drawn):
        cells = {n: e for n, e in board.cells[corpus].items() if str(k) in _types(e)}
        names = sorted(cells, key=board.label)
        bottom = np.zeros(len(names))
        for t, _, _ in TYPES:
            blocks = [_types(cells[n])[str(k)][t] for n in names]
            share = np.array([100 * (b["share"] or 0.0) for b in blocks])
            ax.bar(range(len(names)), share, bottom=bottom, color=colours[t], label=t,
                   edgecolor="white", linewidth=0.5)  # fmt: skip
            for i, (b, s) in enumerate(zip(blocks, share)):
                if b["accuracy"] is not None and s >= 6:
                    ax.text(i, bottom[i] + s / 2, f"{100 * b['accuracy']:.0f}%", ha="center",
                            va="center", fontsize=8, color="white")  # fmt: skip
            bottom += share
        ax.set_xticks(range(len(names)), [board.label(n) for n in names], rotation=30, ha="right")
        ax.set_ylim(0, 100)
        ax.set_axisbelow(True)  # the grid behind the bars
        ax.set_title(corpus)
    axes[0, 0].set_ylabel("share of the queries judged (%)")
    _legend_outside(fig, axes.flat, len(TYPES))
    fig.suptitle(
        f"Coverage types at K = {k}: closed-book correct x PerfRecall@{k} = 1\n"
        "(in each segment: the E2E accuracy within that type)",
        y=1.09,
    )
    return _save(fig, out, f"coverage_types_at_{k}")


def _types(cell) -> dict:
    return (cell.scored.rag or {}).get("coverage_types") or {}


def all_plots(board: Board, corpora: list[str], out: Path, k: int = 10) -> list[Path]:
    files = perfrecall_by_hop(board, corpora, out, k)
    files += coverage_types(board, corpora, out, k)
    files += coverage_vs_similarity(board, corpora, out, k)
    for c in corpora:
        files += cluster_boxplots(board, c, out, k)
        files += cluster_scatter(board, c, out, k)
    return files
