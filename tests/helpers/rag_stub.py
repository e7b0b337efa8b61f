"""A generator whose answers make end-to-end RAG values hand-computable.

Closed book (no "Doc <rank>" passage line in the prompt): the answer CLOSED gives for the
question at the prompt's end, else "I do not know". With passages: the first word of the first
passage. It counts its prompts on the class (`calls`), so a test can tell that a cached rerun
asked nothing, even of an object the harness built itself (backend custom)."""

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
            if passages:
                answer = passages[0].split()[0]
            else:
                answer = CLOSED.get(p.rsplit("Question: ", 1)[-1].strip(), "I do not know")
            out.append([(answer, [-0.1])])
        return out
