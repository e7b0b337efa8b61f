"""Terminal text for the protocol sections of a cell: deflection on the retrieval side (can the
retriever's scores tell answerable queries from unanswerable ones; metrics.deflection) and the
coverage types of end-to-end RAG (metrics.rag)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

from harness.core.tables import text
from harness.core.types import ANSWERABLE

STATS = ("mean", "min", "q25", "median", "q75", "max")


def num(x: float | None) -> str:
    """A value to three places; '-' for none or NaN."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def top_k(key: str) -> int:
    """The K of a `top<K>` or `top<K>_mean` key."""
    return int(key[3:].split("_", 1)[0])


def lines(block: Mapping[str, Any] | None, ks: Collection[int] | None = None) -> list[str]:
    """The deflection section (metrics.json protocols.deflection): the top-1 score by
    answerable value, the AUROC line and, with labels, the distractor line; [] for None.
    `ks`: the cutoffs shown (a cell may hold more than a run asked for); None: all."""
    if not block:
        return []
    out = [
        "",
        "Deflection (retrieval side): top-1 score by answerable (raw retriever scores; quartiles",
        "linearly interpolated; empty: nothing retrieved, below every threshold)",
    ]
    header = ["answerable", "n", "empty", *STATS]
    body = []
    for a in ANSWERABLE:
        s = block["top1"].get(a) or {}
        if not block["n"].get(a):
            continue
        body.append(
            [a, str(s.get("n", 0)), str(s.get("empty", 0))] + [num(s.get(k)) for k in STATS]
        )
    out += text(header, body, left=1)
    auroc = block.get("auroc") or {}
    parts = [f"top-1 {num(auroc.get('top1'))}"]
    parts += [
        f"top-{top_k(key)} mean {num(v)}"
        for key, v in sorted(auroc.items(), key=lambda kv: top_k(kv[0]))
        if key != "top1" and (ks is None or top_k(key) in ks)
    ]
    n = block["n"]
    partial = n.get("partial", 0)
    out.append(
        f"AUROC answerable (yes, {n.get('yes', 0)}) vs unanswerable (no, {n.get('no', 0)}) by "
        "score, 0.5 = chance" + (f" ({partial} partial left out)" if partial else "") + ":"
    )
    out.append("  " + ", ".join(parts))
    d = block.get("distractors") or {}
    ats = sorted((k for k in d if k.startswith("top")), key=top_k)
    ats = [k for k in ats if ks is None or top_k(k) in ks]
    if d and (ats or ks is None):  # a K asked for that the block lacks: no line, not "0"
        shares = [f"@{top_k(k)} {100 * d[k]['share']:.1f}% ({d[k]['queries']})" for k in ats]
        n_lab = d[ats[0]]["n"] if ats else 0
        out.append(f"Unanswerable queries ({n_lab} with labels) with a distractor in the top K:")
        out.append(
            "  " + (", ".join(shares) or "-") + f"; distractors: {', '.join(d.get('labels', []))}"
        )
    return out


def rag_lines(block: Mapping[str, Any] | None, shown: Collection[str] | None = None) -> list[str]:
    """End-to-end RAG's blocks (metrics.json's rag block): RARE's coverage types (Figure 7:
    per K, each type's queries, share and E2E accuracy within it) and GaRAGe's deflection
    rates; [] without them. `shown`: the metrics shown (a cell may hold more than a run asked
    for): a K's coverage types go with e2e@K, its deflection rates with deflected@K, a
    judging row with its metric; None: all."""
    if not block:
        return []

    def kept(part: Mapping[str, Any] | None, family: str) -> dict[str, Any]:
        return {k: v for k, v in (part or {}).items() if shown is None or f"{family}@{k}" in shown}

    out = _coverage_lines(kept(block.get("coverage_types"), "e2e"))
    split = kept(block.get("deflection"), "deflected")
    if split:
        out += [
            "",
            "Answers that decline (GaRAGe's deflection, %): where the top K held no relevant",
            "passage (true positives) and where it held one (false positives)",
        ]
        body = [
            [f"@{k}"] + [f"{by[side]['n']}" if by[side]["deflected"] is None else
                         f"{100 * by[side]['deflected']:.2f} ({by[side]['n']})"
                         for side in ("insufficient", "sufficient")]
            for k, by in split.items()
        ]  # fmt: skip
        out += text(["K", "no relevant passage (n)", "some (n)"], body, left=2)
    judging = block.get("judging")
    if judging:
        out += ["", "Judging (end-to-end RAG): per metric, what the judge read and could not"]
        body = [[name, str(e["answers"]), str(e["unreadable"]), _judged(e)]
                for name, e in judging.items() if _judged_shown(name, shown)]  # fmt: skip
        align = ["left", "right", "right", "left"]
        out += text(["metric", "answers", "unreadable", "detail"], body, align=align)
    return out


def _judged_shown(name: str, shown: Collection[str] | None) -> bool:
    """Whether a judging row is about a metric shown (deflection@K: deflected@K or
    clarified@K)."""
    if shown is None:
        return True
    family, _, k = name.partition("@")
    both = ("deflected", "clarified") if family == "deflection" else (family,)
    return any(f"{f}@{k}" in shown if k else f in shown for f in both)


def _judged(entry: Mapping[str, Any]) -> str:
    """One entry of the judging report in words."""

    def agree(a: Mapping[str, Any]) -> str:
        if not a["n"]:
            return "-"
        kappa = "-" if a["kappa"] is None else f"{a['kappa']:.2f}"
        return f"{100 * a['share']:.1f}% (kappa {kappa})"

    parts = []
    if "exact_match" in entry:
        parts.append(f"EM {100 * entry['exact_match']:.1f}, F1 {100 * entry['token_f1']:.1f}")
    if "agreement_with_lexical" in entry:
        parts.append(f"agrees with lexical {agree(entry['agreement_with_lexical'])}")
    if "sentences" in entry:
        parts.append(f"{entry['sentences']} sentences")
    if "labels" in entry:
        parts.append(", ".join(f"{k} {v}" for k, v in entry["labels"].items()))
    if entry.get("supported_without_passage"):
        n = entry["supported_without_passage"]
        parts.append(f"{n} 'supported' with no passage, counted unsupported")
    for said, a in (entry.get("agreement_with_phrases") or {}).items():
        parts.append(f"{said}: agrees with phrases {agree(a)}")
    return "; ".join(parts)


def _coverage_lines(types: Mapping[str, Any] | None) -> list[str]:
    if not types:
        return []
    from metrics.rag import TYPES

    out = [
        "",
        "Coverage types (end-to-end RAG): closed-book correct x PerfRecall@K = 1, each type's",
        "share of the answerable queries and the E2E accuracy within it (%)",
    ]
    body = []
    for k, by in types.items():
        for name, _, _ in TYPES:
            t = by[name]
            share, acc = t["share"], t["accuracy"]
            body.append(
                [f"@{k}", name, str(t["n"])]
                + ["-" if x is None else f"{100 * x:.2f}" for x in (share, acc)]
            )
    return out + text(["K", "type", "n", "share", "accuracy"], body, left=2)
