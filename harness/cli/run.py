"""`python -m harness retriever=... corpus=...`: score a retriever on a benchmark (Hydra CLI)."""

from __future__ import annotations

import logging
import sys
from typing import Any

from harness.cli.hydra_app import launch

log = logging.getLogger("harness")


def run(cfg: dict[str, Any]):
    """One cell from the resolved config: compute (or reuse) it and print its tables."""
    from harness.cell.execute import run_cell
    from harness.report.protocols import lines as protocol_lines
    from harness.report.semantic import render
    from harness.report.terminal import table

    result = run_cell(cfg, base=shipped("retriever", cfg["retriever"]))
    for note in result.notes:
        log.info(note)
    print(f"\n{result.corpus} · {result.retriever} · {result.n_queries} queries")
    print(table(result.aggregated, result.metric_names, skip=("cluster",)))
    print(render(result.aggregated, result.variance, result.semantic, result.metric_names))
    deflection = protocol_lines(result.protocols.get("deflection"))
    if deflection:
        print("\n" + "\n".join(deflection))
    if result.strata_hint:
        print(f"\n({result.strata_hint})")
    if result.cell_dir is not None:
        print(f"results: {result.cell_dir}")
    return result


def shipped(group: str, resolved: dict[str, Any]) -> dict[str, Any] | None:
    """The shipped config (conf/<group>/<choice>.yaml) this job chose, before its overrides.
    When no override and no experiment touched the group, that is `resolved` itself, and
    composing it again (a tenth of a second at every start) is skipped."""
    from hydra.core.hydra_config import HydraConfig

    from harness.core.confs import named_config

    if not HydraConfig.initialized():  # called outside a Hydra job (tests, scripts)
        return None
    hc = HydraConfig.get()
    choice = hc.runtime.choices.get(group)
    if not choice:
        return None
    keys = [o.split("=", 1)[0].lstrip("+~") for o in hc.overrides.task]
    touched = any(k.startswith((f"{group}.", f"{group}@")) or f"@{group}" in k for k in keys)
    if not touched and not hc.runtime.choices.get("experiment"):
        return resolved
    return named_config(group, choice)


def main(argv: list[str] | None = None) -> None:
    """Console entry (`harness ...` and `python -m harness ...`)."""
    launch(run, sys.argv[1:] if argv is None else argv)
