"""A generator whose answers make end-to-end RAG values hand-computable.

Closed book (no "Doc <rank>" passage line in the prompt): the answer CLOSED gives for the
question at the prompt's end, else "I do not know". With passages: the first word of the first
passage, except that it declines to answer the Atlantis question and, given two passages or
more, asks which capital the Portugal question means. It counts its prompts on the class
(`calls`), so a test can tell that a cached rerun asked nothing, even of an object the harness
built itself (backend custom)."""

from __future__ import annotations

import re

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
