"""Strata read from the benchmark's own data (docs/stratification.md#strata-from-the-data):
`answerable` (yes / partial / no), `grounding` (GaRAGe's pass_r bins) and one stratification per
free query field (`strata.fields`): categorical values as labels, numeric ones cut in tertiles.
Like hop, they never depend on a retriever."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.core.errors import ConfigError, HarnessError, did_you_mean
from harness.core.types import Benchmark, FieldValue, Query, is_number
from harness.strata.semantic import NA, Tertiles

# Stratifications the harness builds itself; a query field may not take one of their names.
BUILT_IN = ("hop", "relevant", "answerable", "grounding", "cluster", "dispersion", "alignment")

# GaRAGe's grounding-quality bins of pass_r, in reading order.
GROUNDING = ("<33%", "33-66%", ">66%")


@dataclass(frozen=True)
class FieldStrata:
    """The strata of the requested query fields: `labels` maps each field to one label per
    query (benchmark order); `cuts` maps each field to its tertile cuts [low_max, mid_max], or
    None when the field was not cut (categorical, or numeric with fewer than 3 distinct
    values, or no defined value)."""

    labels: dict[str, list[str]]
    cuts: dict[str, list[float] | None]


def answerable_labels(benchmark: Benchmark) -> list[str] | None:
    """Each query's `answerable` value; None when every query is answerable (no stratum)."""
    values = [q.answerable for q in benchmark.queries]
    return None if all(v == "yes" for v in values) else values


def grounding_label(query: Query) -> str:
    """The pass_r bin of a query: pass_r = labelled chunks whose label's grade is > 0 /
    labelled chunks (the label's own grade, before dated relevance: GaRAGe counts every
    topically relevant passage, OUTDATED ones included, and unanswerable queries too).

    GaRAGe §3.2: low pass_r < 33 %, medium 33 % <= pass_r < 66 %, high pass_r > 66 %; the
    paper leaves exactly 66 % unbinned and we put it in high (>= 66 %). The bounds are the
    printed 33 % and 66 % (not 1/3 and 2/3), compared in integers so 33/100 is exactly 33 %.
    A query without labels is `n/a`."""
    if not query.labels:
        return NA
    if query.label_grades is None:
        raise HarnessError(
            f"query '{query.query_id}' has relevance labels but they were not graded; judge "
            f"the benchmark first (harness.data.relevance.judge)"
        )
    n = len(query.labels)
    passing = sum(1 for cid in query.labels if query.label_grades.get(cid, 0) > 0)
    if 100 * passing < 33 * n:
        return GROUNDING[0]
    return GROUNDING[1] if 100 * passing < 66 * n else GROUNDING[2]


def grounding_labels(benchmark: Benchmark) -> list[str] | None:
    """Each query's pass_r bin; None when no query has labels (no stratum)."""
    if not any(q.labels for q in benchmark.queries):
        return None
    return [grounding_label(q) for q in benchmark.queries]


def check_fields(benchmark: Benchmark, fields: Sequence[str]) -> None:
    """ConfigError (one line) for a field named like a built-in stratification, a field listed
    twice, or a field that no query of the benchmark has."""
    if isinstance(fields, str):
        raise ConfigError(f"strata.fields must be a list of field names (found {fields!r})")
    have = sorted({name for q in benchmark.queries for name in q.fields})
    seen: set[str] = set()
    for name in fields:
        if not isinstance(name, str) or not name:
            raise ConfigError(f"strata.fields: {name!r} is not a field name; list query fields")
        if name in BUILT_IN:
            raise ConfigError(
                f"strata.fields lists '{name}', the name of a built-in stratification "
                f"({', '.join(BUILT_IN)}); remove it from strata.fields"
            )
        if name in seen:
            raise ConfigError(f"strata.fields lists '{name}' twice; list each field once")
        seen.add(name)
        if name not in have:
            known = (
                f"its queries have the fields {', '.join(have)}"
                if have
                else "its queries have no fields (a query's 'metadata'); drop it from strata.fields"
            )
            raise ConfigError(
                f"strata.fields: no query of {benchmark.name} has the field "
                f"'{name}'{did_you_mean(name, have)}; {known}"
            )


def field_strata(benchmark: Benchmark, fields: Sequence[str]) -> FieldStrata:
    """The labels and tertile cuts of each field in `fields` (checked by check_fields)."""
    check_fields(benchmark, fields)
    labels: dict[str, list[str]] = {}
    cuts: dict[str, list[float] | None] = {}
    for name in fields:
        values = [q.fields.get(name) for q in benchmark.queries]
        labels[name], cut = _field_labels(values)
        cuts[name] = None if cut is None else [cut.low_max, cut.mid_max]
    return FieldStrata(labels, cuts)


def field_cuts(benchmark: Benchmark, fields: Sequence[str]) -> dict[str, list[float] | None]:
    """Field -> its tertile cuts [low_max, mid_max], or None when it was not cut."""
    return field_strata(benchmark, fields).cuts


def _defined(value: FieldValue) -> bool:
    # None, NaN, ±inf (no sensible quantile) and blank strings read as missing
    if value is None:
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        return bool(value.strip())
    return True


def _field_labels(values: Iterable[FieldValue]) -> tuple[list[str], Tertiles | None]:
    values = list(values)
    defined = [v for v in values if _defined(v)]
    if not defined or not all(is_number(v) for v in defined):
        return [_category(v) if _defined(v) else NA for v in values], None
    if len(set(defined)) < 3:  # 1 == 1.0: equal values are one value
        return [_number(v) if _defined(v) else NA for v in values], None
    cut = Tertiles.fit([float(v) for v in defined])
    assert cut is not None  # defined is not empty
    return [cut.label(float(v)) if _defined(v) else NA for v in values], cut


def _category(value: FieldValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_number(value):
        return _number(value)
    return str(value)


def _number(value: FieldValue) -> str:
    """A number as a label: integers without a decimal point (1 and 1.0 both read `1`), other
    floats in their shortest exact form."""
    assert isinstance(value, (int, float))
    if isinstance(value, int) or value.is_integer():
        return str(int(value))
    return repr(value)
