"""`python -m harness retriever=... corpus=...`: score a retriever on a benchmark (Hydra CLI)."""

from __future__ import annotations

import logging
import re
import sys
from typing import Any

from harness.cli.hydra_app import launch

log = logging.getLogger("harness")


REPORTS = ("short", "full")
_SHOWN: list = []  # the cells this process printed


def run(cfg: dict[str, Any]):
    """One cell from the resolved config: compute (or reuse) it and print its tables: the
    header, the main table (overall and per stratum), the ties line and where the rest is;
    report=full adds variance explained, the semantic blocks, the deflection section and the
    coverage types of end-to-end RAG."""
    from harness.cell.execute import run_cell
    from harness.core.errors import ConfigError
    from harness.report.terminal import table

    report = cfg.get("report", "short")
    if report not in REPORTS:
        raise ConfigError(f"report is {report!r}; valid: short (the main table) or full")
    result = run_cell(cfg, base=shipped("retriever", cfg["retriever"]))
    for note in result.notes:
        log.info(note)
    gap = "\n" if _SHOWN else ""  # a blank line between the cells a process prints
    _SHOWN.append(result.path)
    print(f"{gap}{result.corpus} · {result.retriever} · {result.n_queries} queries")
    print(table(result.aggregated, result.metrics, skip=("cluster",), undefined=report == "full"))
    if report == "full":
        print(_full(result))
    if result.path is not None:
        rest = "" if report == "full" else "; report=full prints the rest"
        print(f"results: {result.path} (CIs, variance explained, ties in metrics.json{rest})")
    return result


def _full(result) -> str:
    """What report=full adds: VRR against chance, the semantic blocks, the deflection section,
    the coverage types of end-to-end RAG."""
    from harness.report.protocols import lines as protocol_lines
    from harness.report.protocols import rag_lines
    from harness.report.semantic import render
    from metrics.registry import parse_metric

    scored = result.scored
    text = render(scored.aggregated, scored.variance, scored.semantic, result.metrics)
    ks = {parse_metric(m).k for m in result.metrics}  # a cell may hold more than was asked
    blocks = protocol_lines(scored.protocols.get("deflection"), ks)
    blocks += rag_lines(scored.rag, result.metrics)
    text += "\n\n" + "\n".join(blocks) if blocks else ""
    return text + (f"\n\n({result.strata_hint})" if result.strata_hint else "")


def shipped(group: str, resolved: dict[str, Any]) -> dict[str, Any] | None:
    """The shipped config (conf/<group>/<choice>.yaml) this job chose, before its overrides.
    When no override and no experiment touched the group, that is `resolved` itself; else the
    file itself when composing it could not change it, and only failing that is it composed
    again (a run composes its config once; a second composition costs a tenth of a second)."""
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
    return plain_file(group, choice) or named_config(group, choice)


_UNTYPED_GROUPS = ("retriever", "corpus", "extractor")  # Any in harness.core.confs.HarnessConf


def plain_file(group: str, choice: str, _within: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """conf/<group>/<choice>.yaml as a dict, read without Hydra where its composition can only
    give the file as it stands, or merged over the same group's options its defaults list
    names first (`[bm25, _self_]`, `[bm25@parts.bm25, _self_]`): no package header,
    interpolation or other defaults, in a group the schema types Any. None otherwise (then
    compose it)."""
    from omegaconf import DictConfig, ListConfig, OmegaConf

    from harness.core.paths import conf_dir

    path = conf_dir() / group / f"{choice}.yaml"
    if group not in _UNTYPED_GROUPS or choice in _within or not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    if "@package" in text or "${" in text:
        return None
    node = OmegaConf.create(text)
    if not isinstance(node, DictConfig) or not node:
        return None
    parents = node.pop("defaults", None)
    if parents is not None:
        names = list(parents) if isinstance(parents, ListConfig) else []
        if not names or names[-1] != "_self_" or len(set(names)) != len(names):
            return None
        merged = []
        for entry in names[:-1]:  # `option` or `option@key.path` (placed under that key)
            match = re.fullmatch(r"([\w.-]+)(?:@(\w+(?:\.\w+)*))?", str(entry))
            base = match and plain_file(group, match[1], (*_within, choice))
            if base is None:
                return None
            for key in reversed(match[2].split(".") if match[2] else []):
                base = {key: base}
            merged.append(base)
        node = OmegaConf.merge(*merged, node)
    return OmegaConf.to_container(node)


def main(argv: list[str] | None = None) -> None:
    """`harness run KEY=VALUE ...` (also `harness KEY=VALUE ...`, `python -m harness ...`)."""
    launch(run, sys.argv[1:] if argv is None else argv, {"--full": "report=full"})
