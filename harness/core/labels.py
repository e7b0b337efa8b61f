"""The reading order of stratum labels, shared by every table."""

from __future__ import annotations

_ORDERED = ("low", "mid", "high")  # tertile strata


def label_order(labels: list[str]) -> list[str]:
    """Distinct labels in reading order: numbers ascending, then low / mid / high, then the
    rest alphabetically (so `n/a` comes last)."""

    def key(label: str) -> tuple[int, float, str]:
        head = label.rstrip("+")
        if head.isdigit():
            return (0, float(head), label)
        if label in _ORDERED:
            return (1, float(_ORDERED.index(label)), label)
        return (2, 0.0, label)

    return sorted(set(labels), key=key)
