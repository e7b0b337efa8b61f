"""The `rag` config section as the cell pipeline sees it (harness.cell.sections): its checked
settings, its per-query values, the line on what they cost, and when two cells' settings give
comparable numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from harness.rag.spec import RagSpec
from harness.utility.spec import section_difference

# '' when two `rag` sections (as cells record them) give comparable numbers, else the first
# setting that differs, as 'rag.key: A vs B'
difference = partial(section_difference, read=RagSpec.from_config, where="rag")


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
    """One line on what end-to-end RAG cost: prompts answered, cache hits, what the judge
    was asked and could not answer, models loaded (none on a cached rerun); and a line on
    attribution that cannot work as asked (no answer cites, or citations of no chunk)."""
    loaded = ", ".join(counts["models_loaded"]) or "none"
    unreadable = counts["unreadable"]
    lost = [f"{n}: {e['unreadable']}" for n, e in counts["report"].items() if e["unreadable"]]
    judge = [f"{counts['judged']} verdicts"] if counts["judged"] else []
    if counts.get("questions"):
        judge.append(f"{counts['questions']} labels (GaRAGe's, deflection)")
    if counts["judge"] != "lexical":
        judge.append(f"{counts['verdict_hits']} of them answered before (its cache)")
    if unreadable:
        judge.append(f"{unreadable} unreadable ({', '.join(lost)}; NaN)")
    queries = f"{counts['queries']} queries"
    if counts.get("with_reference") not in (None, counts["queries"]):
        queries += f" ({counts['with_reference']} with a reference answer)"
    out = [
        f"rag: {queries}, {counts['prompts']} prompts ({counts['generation_hits']} answers "
        f"from the cache); judge {counts['judge']}: {', '.join(judge) or 'nothing asked'}; "
        f"models loaded: {loaded}; cache {counts['cache']}"
    ]
    if counts["prompts"] and counts.get("empty_answers") == counts["prompts"]:
        out.append(
            f"rag: the generator's answer to every one of the {counts['prompts']} prompts is "
            "empty, so every judged value is 0; check the generator (max_new_tokens, its "
            "chat template, a model that follows instructions)"
        )
    cites = counts.get("attribution")
    if cites and cites["answers"] and not cites["citing"]:
        out.append(
            f"rag: none of the {cites['answers']} answers scored for attribution cites a "
            "passage with an [n] marker, so attribution is 0; the prompt must ask for "
            "citations (rag=garage's does: metrics=garage or +rag=garage)"
        )
    if cites and cites["not_in_corpus"]:
        out.append(
            f"rag: {cites['not_in_corpus']} chunk id(s) the reference answers cite are not in "
            f"the corpus (e.g. {', '.join(map(repr, cites['examples']))}); no answer can cite "
            "them, so attribution recall stays below 1 there"
        )
    return out
