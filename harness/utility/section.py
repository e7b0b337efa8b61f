"""The `utility` config section as the cell pipeline sees it (harness.cell.sections): its
checked settings, its per-query values, the line on what they cost, and when two cells'
settings give comparable numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from harness.utility.spec import UtilitySpec, section_difference

# '' when two `utility` sections (as cells record them) give comparable numbers, else the
# first setting that differs, as 'utility.key: A vs B'
difference = partial(section_difference, read=UtilitySpec.from_config, where="utility")


def spec(section: Mapping[str, Any], metrics: Sequence = ()) -> UtilitySpec:
    return UtilitySpec.from_config(section)


def values(bench, run, metrics: Sequence, spec: UtilitySpec, models) -> tuple[dict, dict]:
    """Per-query values of the utility `metrics` and what they cost; `models`: the caller's
    (generator, nli) objects, or None (loaded from the spec, only on a cache miss)."""
    from harness.utility.compute import utility_values

    generator, nli = models or (None, None)
    families = tuple(dict.fromkeys(m.family.name for m in metrics))
    ks = sorted({m.k for m in metrics})
    computed, counts = utility_values(
        bench, run, ks, spec, families=families, generator=generator, nli=nli
    )
    return {m.name: computed[m.name] for m in metrics}, counts


def notes(counts: Mapping[str, Any]) -> list[str]:
    """One line on what the utility metrics cost: prompts, what came from the cache, which
    models had to be loaded (none on a cached rerun)."""
    loaded = ", ".join(counts["models_loaded"]) or "none"
    return [
        f"utility: {counts['queries']} queries, {counts['prompts']} prompts x "
        f"{counts['samples']} samples ({counts['generation_hits']} from the cache), "
        f"{counts['nli_pairs']} NLI pairs ({counts['nli_hits']} cached entries); "
        f"models loaded: {loaded}; cache {counts['cache']}"
    ]
