"""A generator and an NLI model with known outputs, for exact hand-computed ΔSePer values.

StubGenerator answers a prompt from `table` when given: the first key (in order) that the prompt
contains gives the answers, a list of [text, [token log-probs]] used cyclically for the N
samples. Without a table (or when no key matches) it reads the prompt:
- no passage lines ("Doc <rank>..."): the closed book, CLOSED used cyclically;
- with passages: sample i (from 0) answers with the last word of passage (i mod P) + 1,
  punctuation stripped, with one token of log-probability -0.5 * rank.

StubNLI: E(premise ⊢ hypothesis), compared case-insensitively and with surrounding space
stripped: 0.9 when the two are equal, 0.7 when the premise contains the hypothesis, else 0.2.

Both count their calls on the class (`calls`), so a test can tell that a cached rerun asked
nothing, even of an object the harness built itself (backend custom), as in
    +utility.generator.backend=custom
    +utility.generator.target=tests.helpers.utility_stub.StubGenerator
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

CLOSED = (("I do not know", [-1.0, -1.0]), ("unknown", [-2.0]))
_PASSAGE = re.compile(r"^Doc (\d+)\S*\s?(.*)$", re.MULTILINE)


class StubGenerator:
    calls: list[str] = []  # every prompt sampled, across instances
    built = 0

    def __init__(self, table: Mapping[str, Sequence[Any]] | None = None, version: int = 1):
        self.table = {str(k): [(str(t), [float(x) for x in lp]) for t, lp in v]
                      for k, v in (table or {}).items()}  # fmt: skip
        self.version = version
        type(self).built += 1

    def identity(self) -> dict:
        table = {k: [[t, lp] for t, lp in v] for k, v in self.table.items()}
        return {"stub": "generator", "version": self.version, "table": table}

    def answers(self, prompt: str) -> list[tuple[str, list[float]]]:
        for key, answers in self.table.items():
            if key in prompt:
                return answers
        passages = _PASSAGE.findall(prompt)
        if not passages:
            return list(CLOSED)
        out = []
        for rank, text in passages:
            words = re.findall(r"\w+", text)
            out.append((words[-1] if words else "", [-0.5 * int(rank)]))
        return out

    def sample(self, prompts, *, n, temperature, top_p, max_new_tokens, seeds):
        assert len(seeds) == len(prompts)
        out = []
        for p in prompts:
            type(self).calls.append(p)
            pool = self.answers(p)
            out.append([(pool[i % len(pool)][0], list(pool[i % len(pool)][1])) for i in range(n)])
        return out


class StubNLI:
    calls: list[tuple[str, str]] = []
    built = 0

    def __init__(self, version: int = 1):
        self.version = version
        type(self).built += 1

    def identity(self) -> dict:
        return {"stub": "nli", "version": self.version}

    @staticmethod
    def score(premise: str, hypothesis: str) -> float:
        p, h = premise.strip().lower(), hypothesis.strip().lower()
        if p == h:
            return 0.9
        return 0.7 if h in p else 0.2

    def entailment(self, pairs):
        type(self).calls.extend(pairs)
        return [self.score(p, h) for p, h in pairs]


def reset() -> None:
    """Forget the recorded calls and builds (call at the start of a test)."""
    StubGenerator.calls, StubNLI.calls = [], []
    StubGenerator.built = StubNLI.built = 0
