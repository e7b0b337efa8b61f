"""The checked `rag` section (conf/rag/e2e.yaml): the generator that answers, how it is prompted
closed-book and with the top K, how its answers are judged, and the cache (docs/rag.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError
from harness.utility.spec import (
    PASSAGE,
    PASSAGE_UNTITLED,
    PROMPT,
    PROMPT_CLOSED,
    ModelSpec,
    _int,
    _known,
    _mapping,
    _number,
    cache_folder,
    canonical_json,
    prompt_templates,
    section_difference,
)

# lexical: the answer holds an acceptable answer once both are normalised (answer_recall's
# normal form, at word boundaries); the NLI, LLM and custom judges are not built yet
JUDGES = ("lexical",)


@dataclass(frozen=True)
class RagSpec:
    """The generator, sampled at `temperature` (0: greedy, the default) for at most
    `max_new_tokens` tokens, its prompts (the utility section's templates), the judge, the
    seed of a non-greedy draw and the cache folder (None: cache_dir()/rag)."""

    generator: ModelSpec
    judge: str = "lexical"
    temperature: float = 0.0
    max_new_tokens: int = 64
    prompt: str = PROMPT
    prompt_closed: str = PROMPT_CLOSED
    passage: str = PASSAGE
    passage_untitled: str = PASSAGE_UNTITLED
    seed: int = 0
    cache: Path | None = None

    @classmethod
    def from_config(cls, section: Mapping | None, where: str = "rag") -> RagSpec:
        """A checked spec from the `rag` config section; every bad value is one ConfigError
        naming the key, the value and the fix."""
        raw = _mapping(section, where)
        _known(raw, where, tuple(f.name for f in fields(cls)))
        gen = ModelSpec.from_config(raw.get("generator"), f"{where}.generator", "generator")
        judge = raw.get("judge", "lexical")
        if judge not in JUDGES:
            raise ConfigError(
                f"{where}.judge is {judge!r}; valid: {', '.join(JUDGES)} (the nli, llm and "
                "custom judges are not built yet)"
            )
        temperature = _number(raw, "temperature", 0.0, where)
        if not temperature >= 0:
            raise ConfigError(f"{where}.temperature must be >= 0 (0: greedy), got {temperature!r}")
        max_new = _int(raw, "max_new_tokens", 64, 1, where)
        texts = prompt_templates(raw, where)
        seed = _int(raw, "seed", 0, 0, where)
        return cls(
            gen, judge, temperature, max_new, **texts, seed=seed, cache=cache_folder(raw, where)
        )

    def identity(self) -> dict[str, Any]:
        """JSON-able, with sorted keys: everything that changes the numbers (not the cache
        folder, batch sizes, devices or how requests travel)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "cache"}
        out["generator"] = self.generator.identity()
        return json.loads(canonical_json(out))


def rag_difference(a: Mapping | None, b: Mapping | None) -> str:
    """'' when two `rag` sections (as cells record them) give comparable numbers, else the
    first setting that differs, as 'rag.key: A vs B'."""
    return section_difference(a, b, RagSpec.from_config, "rag")
