"""Config sections whose metrics a model computes (ΔSePer's `utility`), in one table: the
plan checks them, scoring computes their metrics, a rescore keeps their stored values when
the run asks for none, the up-to-date check and compare read their settings, and the notes
and timings say what they cost, all through ModelSection, never by a section's name."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.errors import ConfigError


@dataclass(frozen=True)
class ModelSection:
    """`key` is the config section and the `kind` of the metric families it computes;
    `spec_type` ('module:Class') reads and checks the section (from_config, then
    check(metrics)); `compute` is the module with section_values(bench, run, metrics, spec,
    *models) and section_notes(costs)."""

    key: str
    needs: str  # what its metrics need ("a generator and an NLI model")
    option: str  # the shipped config that adds it: conf/<key>/<option>.yaml
    settings: str  # the settings to give it, for the error line
    spec_type: str
    compute: str
    # the model objects a caller may hand in (role, the section key it is recorded under), in
    # the order section_values() takes them
    objects: tuple[tuple[str, str], ...]

    @property
    def add(self) -> str:
        return f"+{self.key}={self.option}"

    def names(self, metrics: Sequence) -> list[str]:
        return [m.name for m in metrics if m.family.kind == self.key]

    def spec_class(self) -> type:
        module, name = self.spec_type.split(":")
        return getattr(importlib.import_module(module), name)  # imports no model library

    def adapter(self):
        return importlib.import_module(self.compute)

    def spec(self, section: Any, metrics: Sequence) -> Any:
        """The checked section, None without one; one of its metrics without the section is
        an error naming how to add it."""
        if section is None:
            wanted = self.names(metrics)
            if wanted:
                raise ConfigError(
                    f"{wanted[0]} needs {self.needs}: add {self.add} (or choose "
                    f"metrics={self.key}), and set {self.settings}"
                )
            return None
        checked = self.spec_class().from_config(section)  # its own errors first
        checked.check(metrics)
        if not self.names(metrics):  # it would be recorded in the cell and do nothing
            raise ConfigError(
                f"the {self.key} section is given ({self.add}, or a metrics config that adds "
                f"it) but no {self.key} metric is asked for; add one to metrics.names "
                f"(docs/{self.key}.md), or leave the section out"
            )
        return checked

    def difference(self, a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> str:
        """'' when two sections (as cells record them; None: none) give comparable numbers,
        else the first setting that differs."""
        from harness.utility.spec import section_difference

        return section_difference(a, b, read=self.spec_class().from_config, where=self.key)


SECTIONS = (
    ModelSection(
        "utility",
        "a generator and an NLI model",
        "seper",
        "utility.generator.model / utility.nli.model",
        "harness.utility.spec:UtilitySpec",
        "harness.utility.compute",
        (("generator", "generator"), ("nli", "nli")),
    ),
    ModelSection(
        "rag",
        "a generator",
        "e2e",
        "rag.generator.model",
        "harness.rag.spec:RagSpec",
        "harness.rag.compute",
        (("generator", "generator"), ("judge", "judge_object")),
    ),
)


def checked_sections(config: Mapping[str, Any], metrics: Sequence) -> dict[str, Any]:
    """{key: checked spec} of the sections `config` has (ConfigError for a bad one, or for
    a metric whose section is missing)."""
    specs = {s.key: s.spec(config.get(s.key), metrics) for s in SECTIONS}
    return {key: spec for key, spec in specs.items() if spec is not None}


def section_values(bench, run, metrics, specs: Mapping[str, Any], models, carried):
    """Per-query values of the sections' metrics (those in `carried` as they are, the
    others computed) and {section: what its computing cost}; `models`: {section: the
    caller's model objects}."""
    given = {m.name: carried[m.name] for m in metrics if m.name in carried}
    costs: dict[str, Any] = {}
    for s in SECTIONS:
        todo = [m for m in metrics if m.family.kind == s.key and m.name not in carried]
        if todo:
            computed, costs[s.key] = s.adapter().section_values(
                bench, run, todo, specs[s.key], *(models.get(s.key) or ())
            )
            given.update(computed)
    return given, costs


def cost_notes(costs: Mapping[str, Any]) -> list[str]:
    by_key = {s.key: s for s in SECTIONS}
    return [line for key, c in costs.items() for line in by_key[key].adapter().section_notes(c)]


def cost_timings(costs: Mapping[str, Any]) -> dict[str, float]:
    """Each section's stages' seconds, for timings.json (utility_generation_s, ...)."""
    seconds = {key: c.get("seconds") or {} for key, c in costs.items()}
    return {f"{key}_{k}_s": float(v) for key, c in seconds.items() for k, v in c.items()}
