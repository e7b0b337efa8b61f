"""Leaderboard plots (matplotlib, PNG and SVG): PerfRecall@K by hop, Coverage@K against corpus
Similarity, and with semantic strata the per-cluster box plots and the cluster coverage
scatter. Each function returns the files it wrote."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.tables import order

DPI = 150


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


def perfrecall_by_hop(board: Board, corpora: list[str], out: Path, k: int = 10) -> list[Path]:
    """One panel per corpus: PerfRecall@K (y) by hop depth (x), one line per retriever."""
    from harness.report.leaderboard.tables import hop_labels

    plt = _plt()
    metric = f"perfrecall@{k}"
    names = board.retrievers(corpora)
    styles = _styles(names)
    cols = min(len(corpora), 4)
    rows = -(-len(corpora) // cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(4.2 * cols, 3.6 * rows), squeeze=False, sharey=True
    )
    for ax, corpus in zip(axes.flat, corpora):
        hops = [h for h in hop_labels(board, corpus)]
        for name in order(board, [corpus], metric)[::-1]:
            e = board.cells[corpus][name]
            ys = [e.mean(metric, "hop", h) for h in hops]
            ys = [np.nan if y is None else 100 * y for y in ys]
            ax.plot(
                hops,
                ys,
                label=board.label(name) + (" †" if e.stale else ""),
                linewidth=1.8,
                markersize=6,
                **styles[name],
            )
        ax.set_title(corpus)
        ax.set_xlabel("hop depth (gold groups per query)")
        ax.set_ylim(0, 102)
        ax.legend(fontsize=8, loc="upper right")
    for ax in axes[:, 0]:
        ax.set_ylabel(f"PerfRecall@{k} (%)")
    for ax in list(axes.flat)[len(corpora) :]:
        ax.set_visible(False)
    fig.suptitle(f"PerfRecall@{k} falls with hop depth: every gold group must be in the top {k}")
    fig.tight_layout()
    return _save(fig, out, "perfrecall_by_hop")


def coverage_vs_similarity(board: Board, corpora: list[str], out: Path, k: int = 10):
    """Coverage@K (y) against the corpus's Similarity (%) (x), one line per retriever across
    the corpora; corpora without a Similarity are left out (named in the caption)."""
    plt = _plt()
    metric = f"coverage@{k}"
    have = [c for c in corpora if board.diagnostics.get(c, {}).get("similarity") is not None]
    if not have:
        return []
    have.sort(key=lambda c: board.diagnostics[c]["similarity"])
    xs = {c: 100 * board.diagnostics[c]["similarity"] for c in have}
    embedders = sorted({board.diagnostics[c].get("embedder", "?") for c in have})
    names = board.retrievers(have)
    styles = _styles(names)
    fig, ax = plt.subplots(figsize=(7.6, 4.4))
    for name in order(board, have, metric)[::-1]:
        pts = [(xs[c], board.cells[c][name].mean(metric)) for c in have if name in board.cells[c]]
        pts = [(x, 100 * y) for x, y in pts if y is not None]
        if pts:
            ax.plot(
                *zip(*pts), label=board.label(name), linewidth=1.5, markersize=7, **styles[name]
            )
    for c in have:
        ax.axvline(xs[c], color="grey", linewidth=0.6, linestyle=":")
        ax.annotate(
            c,
            (xs[c], 100),
            rotation=90,
            fontsize=8,
            color="dimgrey",
            xytext=(3, -4),
            textcoords="offset points",
            va="top",
        )
    ax.set_xlabel(f"corpus Similarity (%): mean cosine of chunk pairs ({', '.join(embedders)})")
    ax.set_ylabel(f"Coverage@{k} (%)")
    ax.set_ylim(0, 102)
    missing = [c for c in corpora if c not in have]
    title = f"Coverage@{k} against corpus Similarity"
    if missing:
        title += f"\n(no Similarity for {', '.join(missing)}: python -m harness.diagnose)"
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    fig.tight_layout()
    return _save(fig, out, "coverage_vs_similarity")


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
    """Chunks (x) against queries (y) per semantic cluster, coloured by the cluster's mean
    Coverage@K for each retriever; zero-query clusters in grey on the bottom line."""
    strata = board.strata.get(corpus)
    if not strata:
        return []
    plt = _plt()
    from matplotlib.colors import Normalize

    cells = board.cells[corpus]
    metric = f"coverage@{k}"
    names = [n for n in order(board, [corpus], metric)[::-1] if cells[n].doc.get("semantic")]
    if not names:
        return []
    clusters = strata["clusters"]
    chunks = np.array([c["n_chunks"] for c in clusters], dtype=float)
    queries = np.array([c["n_queries"] for c in clusters], dtype=float)
    ids = [str(c["id"]) for c in clusters]
    zero = queries == 0
    ncols = min(len(names), 3)
    nrows = -(-len(names) // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(4.6 * ncols + 0.8, 3.9 * nrows),
        squeeze=False,
        sharex=True,
        sharey=True,
    )
    norm = Normalize(0, 100)
    sc = None
    for ax, name in zip(axes.flat, names):
        by = (cells[name].doc.get("results") or {}).get("cluster") or {}
        color = np.array(
            [
                100 * by[i]["mean"][metric]
                if i in by and by[i]["mean"].get(metric) is not None
                else np.nan
                for i in ids
            ]
        )
        jitter = 0.5  # zero-query clusters sit on the bottom line of the log axis
        ax.scatter(
            chunks[zero],
            np.full(zero.sum(), jitter),
            s=8,
            color="lightgrey",
            label=f"zero-query clusters ({int(zero.sum())})",
            edgecolors="none",
        )
        keep = ~zero & ~np.isnan(color)
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
        ax.set_title(board.label(name))
        ax.legend(fontsize=7, loc="upper left")
    for ax in axes[-1, :]:
        ax.set_xlabel("chunks in the cluster")
    for ax in axes[:, 0]:
        ax.set_ylabel("queries touching the cluster")
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    cbar = fig.colorbar(sc, ax=axes.ravel().tolist(), shrink=0.9)
    cbar.set_label(f"cluster mean Coverage@{k} (%)")
    s = strata.get("summary") or {}
    fig.suptitle(
        f"{corpus}: query coverage of the semantic clusters (MSC {100 * s.get('msc', 0):.1f}%, "
        f"SCC {100 * s.get('scc', 0):.1f}%, {s.get('zqc', int(zero.sum()))} zero-query clusters)"
    )
    return _save(fig, out, f"clusters_scatter_{corpus}")


def all_plots(board: Board, corpora: list[str], out: Path, k: int = 10) -> list[Path]:
    files = perfrecall_by_hop(board, corpora, out, k)
    files += coverage_vs_similarity(board, corpora, out, k)
    for c in corpora:
        files += cluster_boxplots(board, c, out, k)
        files += cluster_scatter(board, c, out, k)
    return files
