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
