"""The checked `rag` section (conf/rag/e2e.yaml): the generator that answers, how it is prompted
closed-book and with the top K, how its answers are judged, and the cache (docs/rag.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError
from harness.rag.judges import VERDICT_PROMPT, asks_of, reads
from harness.utility.spec import (
    PASSAGE,
    PASSAGE_UNTITLED,
    PROBABILITY,
    PROMPT,
    PROMPT_CLOSED,
    ModelSpec,
    _int,
    _mapping,
    _template,
    cache_folder,
    canonical_json,
    choice,
    known,
    number,
    prompt_templates,
)

# lexical: the answer holds an acceptable answer (answer_recall's normal form, at word
# boundaries); nli: an NLI model finds a reference entailed; llm: a generator's one-word
# verdict; custom: a class of your own (harness.rag.judges)
JUDGES = ("lexical", "nli", "llm", "custom")


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
    judge_model: ModelSpec | None = None  # nli, llm, custom: the model the judge runs
    judge_threshold: float = 0.5  # nli: P(answer entails a reference) that counts as correct
    judge_prompt: str = VERDICT_PROMPT  # llm: {question}, {references}, {answer}
    # a judge object handed to harness.evaluate, as the cell records it (its type, identity)
    judge_object: Mapping[str, Any] | None = None

    @classmethod
    def from_config(cls, section: Mapping | None, where: str = "rag") -> RagSpec:
        """A checked spec from the `rag` config section; every bad value is one ConfigError
        naming the key, the value and the fix."""
        raw = _mapping(section, where)
        known(raw, where, tuple(f.name for f in fields(cls)))
        gen = ModelSpec.from_config(raw.get("generator"), f"{where}.generator", "generator")
        judge = raw.get("judge", "lexical")
        choice(judge, JUDGES, f"{where}.judge")
        judge_model = None
        # a judge object handed to harness.evaluate replaces the configured judge
        if judge != "lexical" and raw.get("judge_object") is None:
            section = dict(raw.get("judge_model") or {})
            if judge == "custom":  # a class of one's own: built from its target, never a hub id
                if not section.get("target"):
                    raise ConfigError(
                        f"{where}.judge=custom needs {where}.judge_model.target=pkg.Class (a "
                        "class with identity() and judge(items); docs/rag.md)"
                    )
                section.update(backend="custom", model=section.get("model"))
            elif not section.get("model") and section.get("backend", "hf") != "custom":
                raise ConfigError(
                    f"{where}.judge={judge} needs {where}.judge_model.model (a hub id or folder"
                    f"{'' if judge == 'nli' else ', or a served model with backend=openai'})"
                )
            role = "nli" if judge == "nli" else "generator"
            judge_model = ModelSpec.from_config(section, f"{where}.judge_model", role)
        threshold = number(raw, "judge_threshold", 0.5, where, PROBABILITY)
        judge_prompt = _template(
            raw.get("judge_prompt", VERDICT_PROMPT),
            f"{where}.judge_prompt",
            {"question", "references", "answer"},
            {"question", "references", "answer"},
        )
        temperature = number(raw, "temperature", 0.0, where, ">= 0 (0: greedy)")
        max_new = _int(raw, "max_new_tokens", 64, 1, where)
        texts = prompt_templates(raw, where)
        seed = _int(raw, "seed", 0, 0, where)
        recorded = raw.get("judge_object")
        if recorded is not None and not isinstance(recorded, Mapping):
            raise ConfigError(f"{where}.judge_object is set by harness.evaluate(judge=...) only")
        return cls(
            gen, judge, temperature, max_new, **texts, seed=seed, cache=cache_folder(raw, where),
            judge_model=judge_model, judge_threshold=threshold, judge_prompt=judge_prompt,
            judge_object=None if recorded is None else dict(recorded),
        )  # fmt: skip

    def check(self, metrics: Sequence) -> None:
        """Each metric's questions need a judge that answers them: GaRAGe's eligibility and
        sentence support only the llm judge or a custom class with those methods; a verdict
        every judge but a custom class without judge() (checked on the class, not built)."""
        needed = asks_of(metrics)
        if not needed or self.judge_object is not None or self.judge == "llm":
            return
        cls = None
        if self.judge == "custom":  # the class, not built
            from harness.utility.models import target_class

            cls = target_class(self.judge_model, "rag.judge_model")
        for ask, metric in sorted(needed.items()):
            if reads(self.judge, ask, cls):
                continue
            said = f"the {self.judge} judge reads no {ask}"
            if cls is not None:
                said = f"rag.judge_model.target {self.judge_model.target} has no {ask}() method"
            raise ConfigError(
                f"{metric} needs a judge that reads {ask}: {said}; set rag.judge=llm with "
                f"rag.judge_model.model, or a custom judge with {ask}(...) (docs/rag.md#garage)"
            )

    def identity(self) -> dict[str, Any]:
        """JSON-able, with sorted keys: everything that changes the numbers (not the cache
        folder, batch sizes, devices or how requests travel)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "cache"}
        out["generator"] = self.generator.identity()
        # what the judge does not read does not change the numbers
        if self.judge != "nli":
            out.pop("judge_threshold")
        if self.judge != "llm":
            out.pop("judge_prompt")
        out["judge_model"] = self.judge_model.identity() if self.judge_model else None
        return json.loads(canonical_json(out))
