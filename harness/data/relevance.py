"""Named relevance labels and dated relevance: turn a benchmark's labels into the graded
judgments and gold groups that are scored (docs/protocols.md#labels-and-dates).

The data keeps the labels as written (GaRAGe: ANSWER-THE-QUESTION, RELATED, OUTDATED, UNKNOWN,
IRRELEVANT); `relevance.grades` maps each to a grade, and for fast-changing questions a passage
that is outdated (labelled so, or older than the question's validity window) counts as
non-relevant. Judging is a step of its own, after loading, so one loaded benchmark can be
scored under several label maps and the data's checksum stays the file's."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.core.confs import RelevanceConf
from harness.core.errors import BenchmarkError, ConfigError, did_you_mean
from harness.core.labels import label_key
from harness.core.types import Benchmark, Query

log = logging.getLogger("harness.data")

OUTDATED = "OUTDATED"
_DEFAULTS = RelevanceConf()  # the config schema's defaults, so the API and the CLI agree
GARAGE_GRADES = dict(_DEFAULTS.grades)


@dataclass(frozen=True)
class RelevanceSpec:
    """How labels and dates become relevance (the `relevance` config section)."""

    grades: Mapping[str, int] = field(default_factory=lambda: dict(GARAGE_GRADES))
    dynamism_field: str = _DEFAULTS.dynamism_field
    outdated_for: tuple[str, ...] = tuple(_DEFAULTS.outdated_for)
    max_age_days: Mapping[str, int] = field(default_factory=lambda: dict(_DEFAULTS.max_age_days))
    distractors: tuple[str, ...] = tuple(_DEFAULTS.distractors)

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None) -> RelevanceSpec:
        """Check a `relevance` section (None or {}: the defaults); bad values raise ConfigError."""
        cfg = dict(cfg or {})
        unknown = sorted(set(cfg) - set(cls().as_config()))
        if unknown:
            fields = list(cls().as_config())
            raise ConfigError(
                f"relevance.{unknown[0]} is not a setting"
                f"{did_you_mean(unknown[0], fields)}; valid: {', '.join(fields)}"
            )
        base = cls()
        grades = cfg.get("grades", base.grades)
        if not isinstance(grades, Mapping) or not grades:
            raise ConfigError(
                f"relevance.grades must map label names to grades, e.g. "
                f"{{RELATED: 1}} (got {grades!r})"
            )
        checked: dict[str, int] = {}
        for name, grade in grades.items():
            if isinstance(grade, bool) or not isinstance(grade, int) or grade < 0:
                raise ConfigError(
                    f"relevance.grades.{name} must be an integer grade >= 0, got {grade!r}"
                )
            key = label_key(name)
            if key in checked and checked[key] != grade:
                raise ConfigError(
                    f"relevance.grades names label {key} twice with grades {checked[key]} "
                    f"and {grade}; keep one"
                )
            checked[key] = grade
        field_name = cfg.get("dynamism_field", base.dynamism_field)
        if not isinstance(field_name, str) or not field_name:
            raise ConfigError(f"relevance.dynamism_field must be a field name, got {field_name!r}")
        ages = cfg.get("max_age_days", base.max_age_days) or {}
        if not isinstance(ages, Mapping):
            raise ConfigError(
                f"relevance.max_age_days must map dynamism values to days, e.g. {{fast: 7}} "
                f"(got {ages!r})"
            )
        for value, days in ages.items():
            if isinstance(days, bool) or not isinstance(days, int) or days < 0:
                raise ConfigError(
                    f"relevance.max_age_days.{value} must be a number of days >= 0, got {days!r}"
                )
        distractors = tuple(
            map(label_key, _names(cfg.get("distractors", base.distractors), "distractors"))
        )
        known = {*checked, *base.distractors}  # the grades' labels, and the default ones
        unknown = [d for d in distractors if d not in known]
        if unknown:  # a distractor is a label; one no grade names would never match
            raise ConfigError(
                f"relevance.distractors names '{unknown[0]}', which relevance.grades does not "
                f"list{did_you_mean(unknown[0], list(checked))}; labels: {', '.join(checked)}"
            )
        return cls(
            grades=checked,
            dynamism_field=field_name,
            outdated_for=_names(cfg.get("outdated_for", base.outdated_for), "outdated_for"),
            max_age_days={str(k): int(v) for k, v in ages.items()},
            distractors=distractors,
        )

    def as_config(self) -> dict[str, Any]:
        """The settings as a cell records them (and compares them on a rerun)."""
        return {
            "grades": dict(sorted(self.grades.items())),
            "dynamism_field": self.dynamism_field,
            "outdated_for": list(self.outdated_for),
            "max_age_days": dict(sorted(self.max_age_days.items())),
            "distractors": list(self.distractors),
        }


def _names(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigError(f"relevance.{key} must be a list, e.g. [fast] (got {value!r})")
    if not all(isinstance(x, str) and x for x in value):
        raise ConfigError(f"relevance.{key} must list names (strings), got {list(value)!r}")
    return tuple(value)


def load_judged(cfg: Mapping[str, Any]) -> Benchmark:
    """The benchmark of a resolved config (`corpus`) as it is scored (`relevance`): what every
    command that reads gold loads, so a run, its strata and its diagnostics see the same."""
    from harness.data.benchmarks import load_benchmark

    return judge(load_benchmark(cfg["corpus"]), RelevanceSpec.from_config(cfg.get("relevance")))


def judge(bench: Benchmark, spec: RelevanceSpec | None = None) -> Benchmark:
    """The benchmark as it is scored under `spec`: labels become grades, outdated passages of
    fast-changing questions grade 0, a gold chunk whose grade is 0 leaves its group, and each
    query knows its outdated passages and validity window. A benchmark without labels, dates
    or dynamism comes back unchanged."""
    spec = spec or RelevanceSpec()
    key = "judged:" + json.dumps(spec.as_config(), sort_keys=True)
    if key in bench.derived:  # judged before with these settings: every run reuses it
        return bench.derived[key]
    judged = _judged(bench, spec)
    if bench.queries and not any(q.groups or q.answerable == "no" for q in judged.queries):
        raise BenchmarkError(
            f"{bench.source}: no query has a relevant chunk (every gold group is empty, or "
            "every grade is 0 under the relevance settings), so there is nothing to score; "
            "check the file's gold (or relevance.grades)"
        )
    bench.derived[key] = judged
    return judged


def _judged(bench: Benchmark, spec: RelevanceSpec) -> Benchmark:
    if any(q.labels or q.date is not None for q in bench.queries):  # the settings matter
        _check_matches(bench, spec)
    if not any(_needs(q, spec) for q in bench.queries):
        return bench
    counts = {"labels": 0, "outdated_zeroed": 0, "groups_emptied": 0, "queries_windowed": 0}
    queries = tuple(_judge_query(bench, q, spec, counts) for q in bench.queries)
    absent = bench.metadata.get("labelled_not_in_corpus")
    if absent:  # after the labels were checked: a bad label is the one line a run prints
        log.info(
            f"{bench.source}: {absent['labels']} label(s) name {absent['chunks']} chunk id(s) "
            f"not in the corpus (e.g. {', '.join(map(repr, absent['examples']))}); kept, and "
            "only a run file can rank those chunks: no retriever finds them in the corpus"
        )
    if counts["groups_emptied"]:
        log.info(
            f"{bench.source}: {counts['groups_emptied']} gold group(s) of fast-changing "
            f"questions hold only outdated passages; they count as not found (see "
            f"docs/protocols.md#labels-and-dates)"
        )
    meta = {**bench.metadata, "relevance": counts}
    return replace(bench, queries=queries, metadata=meta)


def _check_matches(bench: Benchmark, spec: RelevanceSpec) -> None:
    """Refuse a dynamism setting changed from its default that matches nothing in the data
    (`dynamism_field=nosuch`, `outdated_for=[rapid]`): it would change no grade, silently."""
    default, name = RelevanceSpec(), spec.dynamism_field
    values = sorted({str(v) for q in bench.queries if (v := q.fields.get(name)) is not None})
    if name != default.dynamism_field and not values:
        fields = sorted({k for q in bench.queries for k in q.fields})
        raise ConfigError(
            f"relevance.dynamism_field '{name}': no query of {bench.name} has that field"
            f"{did_you_mean(name, fields)}; fields: {', '.join(fields) or 'none'}"
        )
    unknown = [v for v in spec.outdated_for if v not in values]
    if values and tuple(spec.outdated_for) != default.outdated_for and unknown:
        raise ConfigError(
            f"relevance.outdated_for names '{unknown[0]}', which no query's {name} is"
            f"{did_you_mean(unknown[0], values)}; values: {', '.join(values)}"
        )


def _needs(q: Query, spec: RelevanceSpec) -> bool:
    return bool(q.labels) or q.fields.get(spec.dynamism_field) is not None


def _judge_query(bench: Benchmark, q: Query, spec: RelevanceSpec, counts: dict) -> Query:
    named = (q.labels or {}).items()
    labels = {cid: _checked_label(bench, q, cid, name, spec) for cid, name in named}
    counts["labels"] += len(labels)
    dynamism = q.fields.get(spec.dynamism_field)
    window = spec.max_age_days.get(str(dynamism)) if dynamism is not None else None
    counts["queries_windowed"] += window is not None and q.date is not None
    outdated = frozenset(c for c, lab in labels.items() if lab == OUTDATED) if q.labels else None
    probe = replace(q, outdated=outdated, max_age_days=window)
    strict = dynamism is not None and str(dynamism) in spec.outdated_for

    grades = dict(q.judgments)
    for cid, lab in labels.items():
        grades[cid] = spec.grades[lab]
    if strict:
        for cid in sorted(grades):
            chunk = bench.corpus.get(cid)
            stale = (outdated is not None and cid in outdated) or (
                chunk is not None and probe.is_outdated(chunk)
            )
            if stale and grades[cid] > 0:
                grades[cid] = 0
                counts["outdated_zeroed"] += 1
    if q.answerable == "no":
        grades = {}
    groups = q.groups
    if q.answerable != "no":
        if (not q.groups and not q.absent and labels) or bench.one_chunk_groups:
            # Labelled data without listed groups (BEIR, GaRAGe), or BEIR's qrels with labels
            # beside grades: each relevant passage is a group of its own, as BEIR qrels are
            # read (the groups from the grades alone lost the labelled passages)
            groups = tuple(frozenset([c]) for c, g in grades.items() if g > 0)
        else:
            kept = tuple(frozenset(c for c in g if grades.get(c, 1) > 0) for g in q.groups)
            counts["groups_emptied"] += sum(1 for g, k in zip(q.groups, kept) if g and not k)
            groups = kept
    label_grades = {c: spec.grades[lab] for c, lab in labels.items()} if q.labels else None
    return replace(probe, qrels=grades, groups=groups, label_grades=label_grades)


def _checked_label(bench: Benchmark, q: Query, cid: str, name: str, spec: RelevanceSpec) -> str:
    key = label_key(name)
    if key not in spec.grades:
        known = list(spec.grades)
        raise BenchmarkError(
            f"{bench.source}: query '{q.query_id}' labels chunk '{cid}' '{name}', which "
            f"relevance.grades does not list{did_you_mean(key, known)} (known: "
            f"{', '.join(known)}); add it, e.g. relevance.grades.{key}=1"
        )
    return key
