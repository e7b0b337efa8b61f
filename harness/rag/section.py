"""The `rag` config section as the cell pipeline sees it (harness.cell.sections): its checked
settings, its per-query values, the line on what they cost, and when two cells' settings give
comparable numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.rag.spec import RagSpec, rag_difference

difference = rag_difference


def spec(section: Mapping[str, Any], metrics: Sequence = ()) -> RagSpec:
    """The checked section; a GaRAGe metric whose judge cannot read it is a ConfigError
    here, before anything runs."""
    checked = RagSpec.from_config(section)
    checked.check_judge(metrics)
    return checked


def values(bench, run, metrics: Sequence, spec: RagSpec, models) -> tuple[dict, dict]:
    """Per-query values of the rag `metrics` and what they cost; `models`: the caller's
    (generator, judge) objects, or None (built from the spec, only on a cache miss)."""
    from harness.rag.compute import rag_values

    generator, judge = models or (None, None)
    return rag_values(bench, run, metrics, spec, generator, judge)


def notes(counts: Mapping[str, Any]) -> list[str]:
    """One line on what end-to-end RAG cost: prompts answered, cache hits, answers judged,
    models loaded (none on a cached rerun)."""
    loaded = ", ".join(counts["models_loaded"]) or "none"
    unreadable = counts["unreadable"]
    lost = [f"{n}: {e['unreadable']}" for n, e in counts["report"].items() if e["unreadable"]]
    said = f", {unreadable} verdicts unreadable ({', '.join(lost)}; NaN)" if unreadable else ""
    more = counts.get("questions")
    if more:
        said = f", {more} more questions (GaRAGe's, deflection)" + said
    if counts["judge"] != "lexical":
        said = f", {counts['verdict_hits']} verdicts from the cache" + said
    return [
        f"rag: {counts['queries']} queries, {counts['prompts']} prompts "
        f"({counts['generation_hits']} answers from the cache), {counts['judged']} answers "
        f"judged ({counts['judge']}{said}); models loaded: {loaded}; cache {counts['cache']}"
    ]
