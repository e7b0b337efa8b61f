"""Results (harness.cell.result.Evaluation) made from hand-written metrics.json documents, for
report tests that need no folder on disk."""

from pathlib import Path

from harness.cell.result import Evaluation


def cell(corpus, retriever, doc, checksum="sha256:a", *, stale=False, path=None, **per_query):
    """`doc` completed with the fields every cell has; `per_query`: query_ids, strata, values."""
    full = {
        "corpus": corpus,
        "retriever": retriever,
        "benchmark": {"checksum": checksum, "n_queries": 0},
        "depth": 100,
        "config": {},
        **doc,
    }
    full.setdefault("metrics", list(full["results"]["overall"]["mean"]))
    where = Path(path) if path else Path(f"/nowhere/{corpus}/{retriever}")
    result = Evaluation.from_doc(full, path=where, **per_query)
    result.stale = stale
    return result
