"""The reading order of stratum labels, shared by every table, and the one spelling rule of
relevance label names."""

from __future__ import annotations

import re

# Labels with a reading order of their own (position within their stratification): tertiles,
# GaRAGe's pass_r bins, answerability.
_ORDERED = {
    **{label: i for i, label in enumerate(("low", "mid", "high"))},
    **{label: i for i, label in enumerate(("<33%", "33-66%", ">66%"))},
    **{label: i for i, label in enumerate(("yes", "partial", "no"))},
}
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e[+-]?\d+)?")  # e.g. 5, -1, 0.25, 1e-05 (a trailing + allowed)


def label_order(labels: list[str]) -> list[str]:
    """Distinct labels in reading order: numbers ascending, then low / mid / high
    (<33% / 33-66% / >66%, yes / partial / no), then the rest alphabetically (so `n/a` comes
    last)."""

    def key(label: str) -> tuple[int, float, str]:
        head = label.rstrip("+")
        if _NUMBER.fullmatch(head):
            return (0, float(head), label)
        if label in _ORDERED:
            return (1, float(_ORDERED[label]), label)
        return (2, 0.0, label)

    return sorted(set(labels), key=key)


def label_key(name: str) -> str:
    """A relevance label name as labels are compared: case-insensitive, with '_' and runs of
    spaces read as '-' (RELATED_INFORMATION, "related information" -> RELATED-INFORMATION)."""
    return "-".join(str(name).strip().upper().replace("_", " ").split())
