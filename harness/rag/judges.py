"""The judges of end-to-end RAG answers (docs/rag.md#judges): each marks an answer correct
(True), wrong (False) or, for a model's verdict that cannot be read, None (counted, never
guessed).

- `lexical`: the answer holds an acceptable answer once both are in answer_recall's normal
  form, at word boundaries (offline, free).
- `nli`: an NLI model (harness.utility's) says the answer entails a reference answer with
  probability >= the threshold.
- `llm`: a generator (hf, an OpenAI-compatible server, custom) is asked whether the answer is
  correct given the references, and must reply CORRECT or INCORRECT; any other reply is asked
  once more, then counted as unreadable.
- `custom`: a class with identity() and judge(items) -> [True | False | None].

Exact match and token F1 (SQuAD's, on the same normal form) are computed beside any judge.
Whether an answer declines or asks for clarification (deflected@K, clarified@K; GaRAGe's
deflection, CRUMQs' unanswered and clarification ratios) is read by `deflection`, a phrase
detector, whatever the judge."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from harness.core.errors import HarnessError
from metrics.answers import normalize

# RARE's and CRUMQs' criterion (a correct answer states what a reference answer states;
# wording may differ), in a format a strict parser can read
VERDICT_PROMPT = (
    "You are grading an answer to a question against reference answers. The answer is "
    "correct if it states the same fact as one of the references, in any wording; it is "
    "incorrect if it states something else, adds a contradicting fact, or does not answer.\n\n"
    "Question: {question}\nReference answers: {references}\nAnswer: {answer}\n\n"
    "Reply with exactly one word: CORRECT or INCORRECT."
)
RETRY = "\n\nYour reply could not be read. Reply with exactly one word: CORRECT or INCORRECT."
VERDICT_TOKENS = 8  # "INCORRECT" and an end token fit; a longer reply is cut and unreadable
_VERDICT = re.compile(r"^\W*(CORRECT|INCORRECT)\W*$")


@dataclass(frozen=True)
class Item:
    question: str
    answer: str
    references: tuple[str, ...]  # the acceptable answers as the benchmark writes them


def exact_match(answer: str, references: Sequence[str]) -> bool:
    text = normalize(answer)
    return any(text == normalize(r) for r in references)


def token_f1(answer: str, references: Sequence[str]) -> float:
    """SQuAD's token F1 against the best reference, on the normal form."""
    got = normalize(answer).split()
    best = 0.0
    for ref in references:
        want = normalize(ref).split()
        same = sum((Counter(got) & Counter(want)).values())
        if same:
            p, r = same / len(got), same / len(want)
            best = max(best, 2 * p * r / (p + r))
    return best


class Lexical:
    def identity(self) -> dict:
        return {"judge": "lexical"}

    def judge(self, items: Sequence[Item]) -> list[bool]:
        out = []
        for it in items:
            text = f" {normalize(it.answer)} "
            forms = [f" {f} " for f in (normalize(r) for r in it.references) if f]
            out.append(any(f in text for f in forms))
        return out


class NLIJudge:
    """Correct when P(answer entails a reference) >= threshold for some reference (the
    answer read with its question, as ΔSePer's NLI reads it)."""

    def __init__(self, model, threshold: float):
        self.model, self.threshold = model, threshold

    def identity(self) -> dict:
        return {"judge": "nli", "nli": self.model.identity(), "threshold": self.threshold}

    def judge(self, items: Sequence[Item]) -> list[bool]:
        pairs = [(f"{it.question} {it.answer}", f"{it.question} {r}") for it in items
                 for r in it.references]  # fmt: skip
        from harness.utility.compute import guarded_call

        model = self.model.get()
        probs = guarded_call("the judge's NLI model", model.entailment, pairs) if pairs else []
        if len(probs) != len(pairs):
            raise HarnessError(
                f"the judge's NLI model returned {len(probs)} probabilities for {len(pairs)} pairs"
            )
        out, at = [], 0
        for it in items:
            out.append(max(probs[at : at + len(it.references)], default=0.0) >= self.threshold)
            at += len(it.references)
        return out


class LLMJudge:
    """A generator asked for a one-word verdict, greedy, within VERDICT_TOKENS tokens; an
    unreadable reply is asked once more with a reminder, then left None."""

    def __init__(self, generator, prompt: str, store, generations):
        self.generator, self.prompt = generator, prompt
        self._store, self._generations = store, generations
        self.unreadable = 0

    def identity(self) -> dict:
        return {"judge": "llm", "generator": self.generator.identity(), "prompt": self.prompt}

    def _ask(self, prompts: list[str]) -> dict[str, bool | None]:
        decoding = SimpleNamespace(samples=1, temperature=0.0, top_p=1.0,
                                   max_new_tokens=VERDICT_TOKENS, seed=0)  # fmt: skip
        _, replies, _ = self._generations(
            prompts, decoding, self.generator, self._store, "end-to-end RAG judge"
        )
        return {p: verdict(replies[p][0][0]) for p in prompts}

    def judge(self, items: Sequence[Item]) -> list[bool | None]:
        prompts = [
            self.prompt.format(question=it.question, answer=it.answer,
                               references="; ".join(it.references))
            for it in items
        ]  # fmt: skip
        got = self._ask(list(dict.fromkeys(prompts)))
        again = [p + RETRY for p in dict.fromkeys(p for p in prompts if got[p] is None)]
        if again:
            retried = self._ask(again)
            got.update({p[: -len(RETRY)]: retried[p] for p in again})
        out = [got[p] for p in prompts]
        self.unreadable = sum(v is None for v in out)
        return out


def verdict(reply: str) -> bool | None:
    """CORRECT -> True, INCORRECT -> False (case, spaces and punctuation around the word
    aside); anything else None: never guessed."""
    m = _VERDICT.match(reply.strip().upper())
    return None if m is None else m.group(1) == "CORRECT"


def agreement(a: Sequence[bool | None], b: Sequence[bool | None]) -> dict[str, Any]:
    """How often two judges agree on the items both could read, and Cohen's kappa (None
    when undefined: no item, or both judges constant and alike)."""
    both = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    n = len(both)
    if not n:
        return {"n": 0, "share": None, "kappa": None}
    observed = sum(x == y for x, y in both) / n
    pa, pb = sum(x for x, _ in both) / n, sum(y for _, y in both) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    kappa = None if chance == 1 else (observed - chance) / (1 - chance)
    return {"n": n, "share": observed, "kappa": kappa}


# An answer that says it cannot answer (GaRAGe's deflection, CRUMQs' "unanswered"), or that
# asks the user what they mean (CRUMQs' clarification); read on the lowercased answer with
# its apostrophes made plain. A phrase list, offline and free: a model judge of deflection
# is not built.
_DECLINES = re.compile(
    r"\b(i (do not|don't|dont|cannot|can't|am unable to) (know|answer|say|tell|find)"
    r"|(cannot|can't|can not|unable to|not able to|impossible to) (be )?(answer(ed)?"
    r"|determined?|find|found|say|said|tell|told)"
    r"|no (information|answer|mention|relevant (information|document|passage)s?)"
    r"|not (enough|sufficient) (information|context|evidence)"
    r"|insufficient (information|context|evidence)"
    r"|(is|are) not (mentioned|provided|given|stated|specified|available)"
    r"|(does|do) not (say|mention|provide|specify|state|contain))\b"
)
_CLARIFIES = re.compile(
    r"\b(do you mean|did you mean|(could|can|would) you (please )?(clarify|specify)"
    r"|please (clarify|specify)|which (one|of (these|them|the)) do you)\b"
)


def deflection(answer: str) -> str:
    """ "clarifies" (it asks what the user means), "declines" (it says it cannot answer) or
    "answers"."""
    text = " ".join(answer.lower().replace("\u2019", "'").split())
    if _CLARIFIES.search(text):
        return "clarifies"
    return "declines" if _DECLINES.search(text) else "answers"
