"""`harness.compare(a, b, ...)`: the regression gate's paired comparison as an object."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from harness.core.errors import HarnessError


class Comparison:
    """Every (candidate, metric, stratum) paired test against the baseline (the first cell)."""

    def __init__(self, cells, metrics, rows, opts):
        self.cells, self.metrics, self.rows, self.options = cells, metrics, rows, opts

    @property
    def regressions(self) -> list:
        """Rows whose verdict is a significant drop beyond max_drop."""
        from harness.report.compare import regressions

        return regressions(self.rows)

    @property
    def passed(self) -> bool:
        return not self.regressions

    def to_markdown(self) -> str:
        """The report `python -m harness.compare` prints."""
        from harness.report.compare import render

        return render(self.cells, self.metrics, self.rows, self.options)

    def to_dataframe(self):
        """One row per paired test: baseline, candidate, metric, stratum, n, means, delta, its CI,
        p-values (randomization, t-test, Holm), gated and verdict (values as fractions)."""
        from harness.report.compare import frame

        return frame(self.cells, self.rows)

    def __repr__(self) -> str:
        verdict = "PASS" if self.passed else f"{len(self.regressions)} regression(s)"
        m = len(self.metrics)
        return f"<Comparison of {len(self.cells)} cells on {m} metric{'s' * (m != 1)}: {verdict}>"


def compare(
    baseline: Any,
    *candidates: Any,
    metrics: list[str] | str | None = None,
    max_drop: float = 1.0,
    alpha: float = 0.05,
    min_queries: int = 30,
    permutations: int = 10_000,
    bootstrap: int = 10_000,
    seed: int = 0,
) -> Comparison:
    """Compare result folders (results/<corpus>/<retriever>) or Evaluations of one benchmark,
    the first being the baseline; the same tests and verdicts as python -m harness.compare."""
    from harness.cell.result import Evaluation
    from harness.report.compare import Options, check_options, compare_cells

    if not candidates:
        raise HarnessError("compare needs a baseline and at least one candidate")
    opts = check_options(
        Options(metrics, max_drop, alpha, min_queries, permutations, bootstrap, seed)
    )
    cells = []
    for c in (baseline, *candidates):
        if not isinstance(c, (Evaluation, str, os.PathLike)):
            raise HarnessError(
                f"compare takes result folders or Evaluations (harness.evaluate's results), "
                f"got {type(c).__name__}"
            )
        cells.append(c if isinstance(c, Evaluation) else Evaluation.from_disk(Path(c)))
    names, rows = compare_cells(cells, opts)
    return Comparison(cells, names, rows, opts)
