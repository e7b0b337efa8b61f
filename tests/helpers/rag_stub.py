"""A generator whose answers make end-to-end RAG values hand-computable.

Closed book (no "Doc <rank>" passage line in the prompt): the answer CLOSED gives for the
question at the prompt's end, else "I do not know". With passages: the first word of the first
passage, except that it declines to answer the Atlantis question and, given two passages or
more, asks which capital the Portugal question means. It counts its prompts on the class
(`calls`), so a test can tell that a cached rerun asked nothing, even of an object the harness
built itself (backend custom)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

CLOSED = {
    "What is the capital of France?": "Paris",
    "What is the capital of Germany?": "Munich",
    "What is the capital of Spain?": "Madrid, I think",
    "What is the capital of Portugal?": "Porto",
}
_PASSAGE = re.compile(r"^Doc \d+\S*\s?(.*)$", re.MULTILINE)


class RagStub:
    calls: list[str] = []

    def __init__(self, version: int = 1):
        self.version = version

    def identity(self) -> dict:
        return {"stub": "rag", "version": self.version}

    def sample(self, prompts, *, n, temperature, top_p, max_new_tokens, seeds):
        assert n == 1 and temperature == 0.0 and len(seeds) == len(prompts)
        out = []
        for p in prompts:
            type(self).calls.append(p)
            passages = _PASSAGE.findall(p)
            if passages and "Atlantis" in p:  # unanswerable: it declines with passages
                answer = "I cannot answer that from the given documents."
            elif len(passages) > 1 and "Portugal" in p:  # it asks for clarification
                answer = "Do you mean the capital of Portugal or of Brazil?"
            elif passages:
                answer = passages[0].split()[0]
            else:
                answer = CLOSED.get(p.rsplit("Question: ", 1)[-1].strip(), "I do not know")
            out.append([(answer, [-0.1])])
        return out


class FirstLetterJudge:
    """A custom judge: correct when the answer's first letter is the first reference's; no
    verdict (None) for the Portugal question, as a model's unreadable one. Counts its items."""

    calls: list[str] = []

    def identity(self) -> dict:
        return {"stub": "first-letter"}

    def judge(self, items):
        type(self).calls.extend(it.answer for it in items)
        return [
            None if "Portugal" in it.question else it.answer[:1] == it.references[0][:1]
            for it in items
        ]


class Broken:
    """A generator that fails the way plug-ins do: `mode` raise | none-text | bare-string."""

    def __init__(self, mode: str = "raise"):
        self.mode = mode

    def identity(self) -> dict:
        return {"stub": "broken", "mode": self.mode}

    def sample(self, prompts, *, n, temperature, top_p, max_new_tokens, seeds):
        if self.mode == "raise":
            raise RuntimeError("CUDA error: device-side assert triggered")
        if self.mode == "none-text":
            return [[(None, [0.0])] for _ in prompts]
        return [["an answer"] for _ in prompts]


class GarageStub:
    """GaRAGe-style answers: each passage shown, its sentence with its [rank] citation; then
    "Enjoy your trip!" for Germany (needs no attribution) and "Spain is in Europe." for Spain
    (supported by no passage); it declines the Atlantis question."""

    def identity(self) -> dict:
        return {"stub": "garage"}

    def sample(self, prompts, *, n, temperature, top_p, max_new_tokens, seeds):
        out = []
        for p in prompts:
            if "Atlantis" in p:
                answer = "I cannot answer that from the given documents."
            else:
                said = [f"{t.rstrip('.')} [{r}]." for r, t in enumerate(_PASSAGE.findall(p), 1)]
                if "Germany" in p:
                    said.append("Enjoy your trip!")
                if "Spain" in p:
                    said.append("Spain is in Europe.")
                answer = " ".join(said)
            out.append([(answer, [-0.1])])
        return out


class GarageJudge:
    """A custom judge with GaRAGe's questions, by rules a test can follow by hand.

    eligibility: no verdict (None) for an answer naming both Berlin and Rome; "major" when
    the answer lacks the reference; "minor" when it says "Enjoy"; else "none". support:
    "no_rad" for a sentence ending in "!"; with no passage, None for an Eiffel sentence and
    "supported" for a Rome one (support claimed from nothing: the harness must not believe
    it), else "unsupported"; with passages, "supported" when a passage holds the sentence.
    deflection: "declines" when the answer says "cannot", else "answers"."""

    def identity(self) -> dict:
        return {"stub": "garage-judge"}

    def judge(self, items):
        return [it.references[0].lower() in it.answer.lower() for it in items]

    def eligibility(self, items):
        out = []
        for it in items:
            if "Berlin" in it.answer and "Rome" in it.answer:
                out.append(None)
            elif it.references[0].lower() not in it.answer.lower():
                out.append("major")
            else:
                out.append("minor" if "Enjoy" in it.answer else "none")
        return out

    def support(self, claims):
        out = []
        for c in claims:
            said = c.sentence.rstrip(".").lower()
            if c.sentence.endswith("!"):
                out.append("no_rad")
            elif not c.context:
                out.append(None if "Eiffel" in c.sentence else
                           "supported" if "Rome" in c.sentence else "unsupported")  # fmt: skip
            else:
                out.append("supported" if any(said in t.lower() for t in c.context)
                           else "unsupported")  # fmt: skip
        return out

    def deflection(self, items):
        return ["declines" if "cannot" in it.answer else "answers" for it in items]


def write_fixture(folder: Path, name: str, queries: list, corpus: dict, run: dict) -> tuple:
    """<folder>/<name>.json (RedQA JSON) and <folder>/stub.trec (`run`: query -> ranked ids,
    scores 2, 1, ...): the benchmark and run files of a rag test."""
    bench = folder / f"{name}.json"
    bench.write_text(json.dumps({"metadata": {}, "queries": queries, "corpus": corpus}))
    lines = [f"{q} Q0 {d} {r + 1} {2 - r} stub" for q, ds in run.items() for r, d in enumerate(ds)]
    path = folder / "stub.trec"
    path.write_text("\n".join(lines) + "\n")
    return bench, path


def same(got, want) -> bool:
    """Per-query values equal, NaN where NaN."""
    return all(
        (math.isnan(a) and math.isnan(b)) or math.isclose(a, b)
        for a, b in zip(got, want, strict=True)
    )
