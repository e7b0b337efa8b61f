"""The judges of end-to-end RAG answers (docs/rag.md#what-each-number-means): each marks an
answer correct (True), wrong (False) or, for a model's verdict that cannot be read, None
(counted, never guessed).

- `lexical`: the answer holds an acceptable answer once both are in answer_recall's normal
  form, at word boundaries (offline, free).
- `nli`: an NLI model (harness.utility's) says the answer entails a reference answer with
  probability >= the threshold.
- `llm`: a generator (hf, an OpenAI-compatible server, custom) is asked whether the answer is
  correct given the references, and must reply CORRECT or INCORRECT; any other reply is asked
  once more, then counted as unreadable.
- `custom`: a class with identity() and judge(items) -> [True | False | None].

Exact match and token F1 (SQuAD's, on the same normal form) are computed beside any judge.

GaRAGe's measures ask a judge three more things (docs/rag.md#garage): `eligibility(items)`
(does the answer address the request, the reference as baseline: "none" | "minor" | "major"
issue), `support(claims)` (one sentence against a context: "supported" | "unsupported" |
"contradictory" | "no_rad", needing no attribution) and `deflection(items)` ("answers" |
"declines" | "clarifies"). The llm judge has all three; a custom judge has those it defines.
Without a judge's `deflection`, `deflection` below, a phrase detector, reads the answer."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.errors import HarnessError, guarded_call
from metrics.answers import answer_form, holds_answer

# RARE's and CRUMQs' criterion (a correct answer states what a reference answer states;
# wording may differ), in a format a strict parser can read
VERDICT_PROMPT = (
    "You are grading an answer to a question against reference answers. The answer is "
    "correct if it states the same fact as one of the references, in any wording; it is "
    "incorrect if it states something else, adds a contradicting fact, or does not answer.\n\n"
    "Question: {question}\nReference answers: {references}\nAnswer: {answer}\n\n"
    "Reply with exactly one word: CORRECT or INCORRECT."
)
# GaRAGe's judge prompts (its appendix B.2-B.4) asked for a short reply a strict parser reads:
# the label alone, no analysis, so VERDICT_TOKENS bounds every reply
ELIGIBILITY_PROMPT = (
    "You are judging whether a response addresses a user's request, with a baseline response "
    "written by a person as the reference. List to yourself the instructions of the request, "
    "explicit and implied, and check whether the response meets them. A major issue: it does "
    "not address the main request, does not answer, or misses or contradicts what the "
    "baseline gives as essential. A minor issue: it addresses the request but misses a detail "
    "or a less important instruction.\n\n"
    "Request: {question}\nBaseline response: {references}\nResponse: {answer}\n\n"
    "Reply with exactly one of: NO ISSUES, MINOR ISSUES, MAJOR ISSUES."
)
SUPPORT_PROMPT = (
    "You are checking one sentence of a response to a question against a context. SUPPORTED: "
    "the context entails the sentence; be strict, and use no world knowledge unless it is "
    "trivial. CONTRADICTORY: the context falsifies it. UNSUPPORTED: neither. NO_RAD: the "
    "sentence needs no factual attribution (an opinion, greeting, question or disclaimer)."
    "\n\nQuestion: {question}\nContext:\n{context}\n\nSentence: {sentence}\n\n"
    "Reply with exactly one word: SUPPORTED, UNSUPPORTED, CONTRADICTORY or NO_RAD."
)
DEFLECTION_PROMPT = (
    "You are classifying a response to a question. ATTEMPTED: it attempts to answer the "
    "question. MISSING: it says it is not sure, does not know, or cannot answer. CLARIFY: it "
    "asks the user what they mean instead of answering.\n\n"
    "Question: {question}\nResponse: {answer}\n\n"
    "Reply with exactly one word: ATTEMPTED, MISSING or CLARIFY."
)
VERDICT_TOKENS = 8  # the longest label and an end token fit; a longer reply is cut, unreadable
# what each question asks, its prompt, the replies it reads and the label each one gives
ASKS = {
    "judge": ({"CORRECT": True, "INCORRECT": False}, "CORRECT or INCORRECT"),
    "eligibility": (
        {"NO ISSUES": "none", "NO ISSUE": "none", "MINOR ISSUES": "minor",
         "MINOR ISSUE": "minor", "MAJOR ISSUES": "major", "MAJOR ISSUE": "major"},
        "NO ISSUES, MINOR ISSUES or MAJOR ISSUES",
    ),
    "support": (
        {"SUPPORTED": "supported", "UNSUPPORTED": "unsupported",
         "CONTRADICTORY": "contradictory", "NO_RAD": "no_rad", "NO RAD": "no_rad"},
        "SUPPORTED, UNSUPPORTED, CONTRADICTORY or NO_RAD",
    ),
    "deflection": (
        {"ATTEMPTED": "answers", "MISSING": "declines", "CLARIFY": "clarifies"},
        "ATTEMPTED, MISSING or CLARIFY",
    ),
}  # fmt: skip
# what each metric family asks the judge (the deflection families ask it when it can)
ASKED_BY = {
    **dict.fromkeys(("e2e", "closed_book", "rag_gain", "parametric_gain"), ("judge",)),
    "eligibility": ("eligibility",),
    "ufactuality": ("support",),
    "uraf": ("support",),
    "factuality": ("eligibility", "support"),
    "raf": ("eligibility", "support"),
}


def asks_of(metrics) -> dict[str, str]:
    """Each question the metrics ask the judge -> the first metric that asks it."""
    out: dict[str, str] = {}
    for m in metrics:
        for ask in ASKED_BY.get(m.family.name, ()):
            out.setdefault(ask, m.name)
    return out


def reads(kind: str, ask: str, impl: Any = None) -> bool:
    """Whether a judge of `kind` (lexical, nli, llm, custom) answers `ask`: the lexical and
    nli judges give verdicts only, the llm judge answers every question, a custom judge the
    ones its object or class `impl` has a method for. The one rule: the plan checks
    configured judges by it (RagSpec.check), scoring checks objects handed in."""
    if kind in ("lexical", "nli"):
        return ask == "judge"
    return kind == "llm" or callable(getattr(impl, ask, None))


LABELS = {ask: (*dict.fromkeys(replies.values()), None) for ask, (replies, _) in ASKS.items()}


@dataclass(frozen=True)
class Item:
    question: str
    answer: str
    references: tuple[str, ...]  # the acceptable answers as the benchmark writes them


@dataclass(frozen=True)
class Claim:
    """One sentence of an answer and the passages that may support it (none: nothing can)."""

    question: str
    sentence: str
    context: tuple[str, ...]


def exact_match(answer: str, references: Sequence[str]) -> bool:
    text = answer_form(answer)
    return any(text == answer_form(r) for r in references)


def token_f1(answer: str, references: Sequence[str]) -> float:
    """SQuAD's token F1 against the best reference, on the normal form."""
    got = answer_form(answer).split()
    best = 0.0
    for ref in references:
        want = answer_form(ref).split()
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
            forms = [f" {f} " for f in (answer_form(r) for r in it.references) if f]
            out.append(holds_answer(it.answer, forms))
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
    """A generator asked for a one-word verdict (or GaRAGe's labels), greedy, within
    VERDICT_TOKENS tokens; an unreadable reply is asked once more with a reminder, then
    left None."""

    def __init__(self, generator, prompt: str, store, generations):
        self.generator, self.prompt = generator, prompt
        self._store, self._generations = store, generations

    def identity(self) -> dict:
        return {"judge": "llm", "generator": self.generator.identity(), "prompt": self.prompt}

    def _ask(self, ask: str, prompts: list[str]) -> list:
        replies = ASKS[ask][0]
        decoding = dict(samples=1, temperature=0.0, top_p=1.0, max_new_tokens=VERDICT_TOKENS,
                        seed=0)  # fmt: skip

        def read(asked: list[str]) -> dict[str, Any]:
            _, got, _ = self._generations(
                asked, decoding, self.generator, self._store, "end-to-end RAG judge"
            )
            return {p: label(got[p][0][0], replies) for p in asked}

        retry = retry_note(ask)
        got = read(list(dict.fromkeys(prompts)))
        again = [p + retry for p in dict.fromkeys(p for p in prompts if got[p] is None)]
        if again:
            got.update({p[: -len(retry)]: v for p, v in read(again).items()})
        return [got[p] for p in prompts]

    def judge(self, items: Sequence[Item]) -> list[bool | None]:
        return self._ask("judge", [
            self.prompt.format(question=it.question, answer=it.answer,
                               references="; ".join(it.references))
            for it in items
        ])  # fmt: skip

    def eligibility(self, items: Sequence[Item]) -> list[str | None]:
        return self._ask("eligibility", [
            ELIGIBILITY_PROMPT.format(question=it.question, answer=it.answer,
                                      references=" / ".join(it.references))
            for it in items
        ])  # fmt: skip

    def support(self, claims: Sequence[Claim]) -> list[str | None]:
        return self._ask("support", [
            SUPPORT_PROMPT.format(question=c.question, sentence=c.sentence,
                                  context="\n".join(c.context) or "(no passage)")
            for c in claims
        ])  # fmt: skip

    def deflection(self, items: Sequence[Item]) -> list[str | None]:
        return self._ask("deflection", [
            DEFLECTION_PROMPT.format(question=it.question, answer=it.answer) for it in items
        ])  # fmt: skip


def retry_note(ask: str) -> str:
    """What an unreadable reply's prompt is asked again with."""
    return f"\n\nYour reply could not be read. Reply with exactly one of: {ASKS[ask][1]}."


def label(reply: str, replies: dict[str, Any]) -> Any:
    """The label of a reply that is exactly one of `replies` (case, spaces and punctuation
    around it aside); None for anything else: never guessed."""
    said = " ".join(re.sub(r"^[^\w]+|[^\w]+$", "", reply.strip().upper()).split())
    return replies.get(said)


def verdict(reply: str) -> bool | None:
    """CORRECT -> True, INCORRECT -> False; anything else None."""
    return label(reply, ASKS["judge"][0])


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
# its apostrophes made plain. A phrase list, offline and free, used when the judge has no
# deflection() of its own.
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
