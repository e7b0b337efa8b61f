"""`python -m harness.diagnose corpus=NAME [embedder=minilm]`: corpus diagnostics
(docs/metrics.md#corpus-diagnostics).

Similarity (%) is the mean cosine over all distinct pairs of chunk embeddings, computed in
O(M·d) from the sum of the normalised embeddings; gold redundancy (%) is the share of gold
groups with more than one chunk. Both go to results/<corpus>/diagnostics.json, which the
leaderboard shows in the Table 3 header row.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import HarnessError

SCHEMA = "retrieval-harness/diagnostics/1"
FILE = "diagnostics.json"


def similarity(emb: np.ndarray) -> float:
    """Mean cosine similarity over distinct pairs of rows, as a fraction.

    With unit rows e_i and s = Σ e_i, Σ_{i≠j} e_i·e_j = ‖s‖² − Σ‖e_i‖², so the M×M matrix is
    never formed. Σ‖e_i‖² (= M up to rounding) keeps the identity exact in floating point."""
    e = np.asarray(emb, dtype=np.float64)
    if e.ndim != 2 or e.shape[0] < 2:
        raise HarnessError(f"similarity needs at least 2 embeddings, got shape {e.shape}")
    norms = np.linalg.norm(e, axis=1)
    if np.any(norms == 0) or not np.all(np.isfinite(norms)):
        bad = int(np.flatnonzero((norms == 0) | ~np.isfinite(norms))[0])
        raise HarnessError(f"embedding {bad} is zero or not finite; cosine is undefined")
    e = e / norms[:, None]
    s = e.sum(axis=0)
    m = e.shape[0]
    return float((s @ s - np.einsum("ij,ij->", e, e)) / (m * (m - 1)))


def gold_redundancy(bench) -> dict[str, Any]:
    """Share of gold groups (over all queries) holding more than one chunk."""
    sizes = [len(g) for q in bench.queries for g in q.groups]
    n = len(sizes)
    multi = sum(1 for s in sizes if s > 1)
    return {
        "value": multi / n if n else float("nan"),
        "n_groups": n,
        "n_redundant": multi,
        "mean_group_size": float(np.mean(sizes)) if n else float("nan"),
    }


def path_for(results_dir: Path, corpus: str) -> Path:
    return Path(results_dir) / corpus / FILE


def load(path: Path) -> dict[str, Any] | None:
    """A diagnostics file, or None when absent; a damaged one is an error naming the path."""
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise HarnessError(
            f"{path}: not valid JSON ({exc}); rerun python -m harness.diagnose"
        ) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise HarnessError(f"{path}: not a diagnostics file (schema {SCHEMA} expected)")
    return doc


def diagnose(bench, embedder, embedder_name: str, results_dir: Path | None) -> dict[str, Any]:
    """Embed the corpus with `embedder` (a Dense retriever, cached), compute both diagnostics
    and merge them into results/<corpus>/diagnostics.json (one entry per embedder)."""
    from harness.core.files import to_json, write_text_atomic

    texts = [c.index_text for c in bench.corpus.values()]
    emb = embedder.embed(texts, "document", f"{embedder_name}: corpus")
    t = time.perf_counter()
    sim = similarity(emb)
    seconds = time.perf_counter() - t
    entry = {
        "value": sim,
        "model": getattr(embedder.encoder, "model_id", None)
        or getattr(embedder.encoder, "model", None)
        or embedder_name,
        "dim": int(np.asarray(emb).shape[1]),
        "n_chunks": len(texts),
    }
    doc = {
        "schema": SCHEMA,
        "corpus": bench.name,
        "checksum": bench.checksum,
        "n_chunks": len(bench.corpus),
        "n_queries": len(bench.queries),
        "gold_redundancy": gold_redundancy(bench),
        "similarity": {embedder_name: entry},
    }
    if results_dir is not None:
        path = path_for(results_dir, bench.name)
        old = load(path)
        if old is not None and old.get("checksum") == bench.checksum:
            doc["similarity"] = {**old.get("similarity", {}), embedder_name: entry}
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, to_json(doc))
        doc["path"] = str(path)
    doc["seconds"] = seconds
    return doc
