"""Markdown tables with their padding taken out, so tests can pin cell contents: every table
row becomes `| a | b |`, the header's rule `|---|---:|`; other lines stay as they are."""

import re

_PIPE = re.compile(r"(?<!\\)\|")
_RULE = re.compile(r":?-+:?")


def _short_rule(cell: str) -> str:
    return (":" if cell.startswith(":") else "") + "---" + (":" if cell.endswith(":") else "")


def squeeze(text: str) -> str:
    out = []
    for line in text.splitlines():
        if line.startswith("|") and line.rstrip().endswith("|"):
            cells = [c.strip() for c in _PIPE.split(line.strip())[1:-1]]
            if all(_RULE.fullmatch(c) for c in cells):  # the header's rule: |---|--:|
                line = "|" + "|".join(_short_rule(c) for c in cells) + "|"
            else:
                line = "| " + " | ".join(cells) + " |"
        out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")
