"""RARE's coverage types (§5.5, Figure 7) from per-query values: each query by whether the
closed-book answer was correct and whether the top K held every gold group (PerfRecall@K = 1),
with the share of queries of each type and the end-to-end accuracy within it."""

from __future__ import annotations

import numpy as np

# (type, closed-book correct, every gold group retrieved)
TYPES = (
    ("intersection", True, True),
    ("retrieval_only", False, True),
    ("parametric_only", True, False),
    ("complementary", False, False),
)


def coverage_types(e2e, closed_book, perfrecall) -> dict:
    """{type: {n, share, accuracy}} over the queries where all three values are defined;
    accuracy is the mean of e2e within the type (None when it has no query), share its part
    of those queries (the shares sum to 1)."""
    e2e, closed, pr = (np.asarray(x, dtype=np.float64) for x in (e2e, closed_book, perfrecall))
    defined = ~(np.isnan(e2e) | np.isnan(closed) | np.isnan(pr))
    total = int(defined.sum())
    out = {"queries": total}
    for name, correct, covered in TYPES:
        inside = defined & ((closed == 1.0) == correct) & ((pr == 1.0) == covered)
        n = int(inside.sum())
        out[name] = {
            "n": n,
            "share": n / total if total else None,
            "accuracy": float(e2e[inside].mean()) if n else None,
        }
    return out


def relevant(query) -> frozenset[str]:
    """The chunks labelled relevant to a query: in a gold group, or judged grade > 0."""
    graded = (cid for cid, grade in (query.qrels or {}).items() if grade > 0)
    return frozenset(graded).union(*query.groups)


def deflection_split(deflected, insufficient) -> dict:
    """GaRAGe's deflection rates: the share of answers that decline among the queries whose
    top K held no relevant passage (true positives) and among the rest (false positives),
    over the queries whose deflection was read."""
    values = np.asarray(deflected, dtype=np.float64)
    out = {}
    for name, inside in (("insufficient", True), ("sufficient", False)):
        chosen = ~np.isnan(values) & (np.asarray(insufficient) == inside)
        n = int(chosen.sum())
        out[name] = {"n": n, "deflected": float(values[chosen].mean()) if n else None}
    return out
