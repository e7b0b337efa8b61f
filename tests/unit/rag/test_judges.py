"""The judges of end-to-end RAG (harness.rag.judges): the strict verdict parser, the retry of
an unreadable verdict and its count, the NLI judge's threshold, exact match and token F1, and
the agreement of two judges, each against values computed by hand."""

from __future__ import annotations

import math

import pytest

from harness.rag.judges import (
    ASKS,
    VERDICT_TOKENS,
    Claim,
    Item,
    Lexical,
    LLMJudge,
    NLIJudge,
    agreement,
    deflection,
    exact_match,
    label,
    retry_note,
    token_f1,
    verdict,
)
from harness.utility.cache import Store
from harness.utility.compute import generations
from harness.utility.models import Given

RETRY = retry_note("judge")


@pytest.mark.parametrize(
    ("reply", "want"),
    [
        ("CORRECT", True),
        ("incorrect", False),
        ("  Correct.  ", True),
        ("**INCORRECT**", False),
        ("CORRECT, because Paris is the capital", None),  # more than the word: not guessed
        ("INCORR", None),  # cut off by the token budget
        ("", None),
        ("yes", None),
    ],
)
def test_verdicts_are_read_strictly(reply, want):
    assert verdict(reply) is want


def test_exact_match_and_token_f1_on_the_normal_form():
    assert exact_match("The Eiffel Tower.", ["eiffel tower"])
    assert not exact_match("Eiffel Tower in Paris", ["Eiffel Tower"])
    # answer "eiffel tower in paris" (4 tokens) vs "eiffel tower" (2): 2 shared,
    # precision 1/2, recall 1, F1 = 2/3
    assert math.isclose(token_f1("Eiffel Tower in Paris", ["Eiffel Tower", "Louvre"]), 2 / 3)
    assert token_f1("nothing alike", ["Eiffel Tower"]) == 0.0


def test_an_answer_of_articles_only_is_judged_whole():
    # "A" (vitamin A) and "The The" (the band) normalise to nothing: never equal to anything
    assert exact_match("A", ["a."]) and not exact_match("The", ["A"])
    assert not exact_match("an answer", ["A"]) and not exact_match("", ["The The"])
    assert token_f1("The The", ["the the"]) == 1.0
    items = [Item("q", "A", ("A",)), Item("q", "It is a vitamin", ("A",)), Item("q", "x", ("A",))]
    assert Lexical().judge(items) == [True, False, False]  # "a" is in most text: whole only


def test_lexical_judge_matches_at_word_boundaries():
    items = [
        Item("q", "Madrid, I think", ("Madrid",)),
        Item("q", "Madridista", ("Madrid",)),
        Item("q", "the answer is 1990", ("1990", "nineteen ninety")),
    ]
    assert Lexical().judge(items) == [True, False, True]


def test_agreement_share_and_kappa_by_hand():
    a = [True, True, False, False, True, None]
    b = [True, False, False, False, True, True]  # the None item is left out: 5 pairs
    got = agreement(a, b)
    # observed 4/5; pa = 3/5, pb = 2/5; chance = 0.6*0.4 + 0.4*0.6 = 0.48
    assert got["n"] == 5 and math.isclose(got["share"], 0.8)
    assert math.isclose(got["kappa"], (0.8 - 0.48) / (1 - 0.48))
    assert agreement([True, True], [True, True])["kappa"] is None  # both constant: undefined
    assert agreement([None], [True]) == {"n": 0, "share": None, "kappa": None}


class Replies:
    """A generator replying from a table keyed by the prompt's answer line; a prompt with
    the retry reminder gets `retry` instead."""

    def __init__(self, first: dict[str, str], retry: dict[str, str]):
        self.first, self.retry, self.prompts = first, retry, []

    def identity(self):
        return {"stub": "replies"}

    def sample(self, prompts, *, n, temperature, top_p, max_new_tokens, seeds):
        assert temperature == 0.0 and max_new_tokens == 8
        out = []
        for p in prompts:
            self.prompts.append(p)
            answer = p.split("\nAnswer: ", 1)[1].split("\n", 1)[0]
            table = self.retry if p.endswith(RETRY) else self.first
            out.append([(table[answer], [0.0])])
        return out


def test_llm_judge_retries_an_unreadable_verdict_once_then_counts_it(tmp_path):
    from harness.rag.judges import VERDICT_PROMPT

    gen = Replies(
        {"Paris": "CORRECT", "Lyon": "INCORRECT", "Nice": "I think so", "Metz": "Well"},
        {"Nice": "correct.", "Metz": "maybe"},
    )
    judge = LLMJudge(Given(gen, "generator"), VERDICT_PROMPT, Store(tmp_path), generations)
    items = [Item("Capital of France?", a, ("Paris",)) for a in ("Paris", "Lyon", "Nice", "Metz")]
    assert judge.judge(items) == [True, False, True, None]
    assert sum(p.endswith(RETRY) for p in gen.prompts) == 2  # only the two unreadable
    gen.prompts.clear()
    assert judge.judge(items) == [True, False, True, None]  # verdicts come from the cache
    assert gen.prompts == []


class Entails:
    def identity(self):
        return {"stub": "nli"}

    def entailment(self, pairs):
        # the premise "q answer" entails "q reference" when the answer names the reference
        return [0.9 if h.split(" ", 1)[1].lower() in p.lower() else 0.1 for p, h in pairs]


def test_nli_judge_uses_the_best_reference_and_the_threshold():
    judge = NLIJudge(Given(Entails(), "nli"), threshold=0.5)
    items = [
        Item("q", "It is Paris", ("Lyon", "Paris")),
        Item("q", "It is Lyon", ("Paris",)),
    ]
    assert judge.judge(items) == [True, False]
    assert NLIJudge(Given(Entails(), "nli"), threshold=0.95).judge(items) == [False, False]


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ("I don't know.", "declines"),
        ("I don\u2019t know", "declines"),
        ("The documents do not mention it.", "declines"),
        ("There is not enough information to answer.", "declines"),
        ("It cannot be determined from the passages.", "declines"),
        ("Do you mean the city or the state?", "clarifies"),
        ("Could you clarify which year?", "clarifies"),
        ("Paris", "answers"),
        ("unknown", "answers"),  # a bare word is an answer, not a refusal
        ("No, it is Lyon.", "answers"),
    ],
)
def test_deflection_reads_declines_and_clarifications(answer, kind):
    assert deflection(answer) == kind


@pytest.mark.parametrize(
    ("ask", "reply", "want"),
    [
        ("eligibility", "NO ISSUES", "none"),
        ("eligibility", "Minor issue.", "minor"),
        ("eligibility", "**MAJOR ISSUES**", "major"),
        ("eligibility", "Major", None),  # cut off: not guessed
        ("support", "supported", "supported"),
        ("support", "NO_RAD", "no_rad"),
        ("support", "no rad", "no_rad"),
        ("support", "CONTRADICTORY.", "contradictory"),
        ("support", "SUPPORTED by passage 2", None),
        ("deflection", "MISSING", "declines"),
        ("deflection", "Clarify", "clarifies"),
        ("deflection", "ATTEMPTED", "answers"),
        ("deflection", "declines", None),  # the label's own name is not a reply it asks for
    ],
)
def test_garage_labels_are_read_strictly(ask, reply, want):
    assert label(reply, ASKS[ask][0]) == want


class Labels:
    """A generator replying to GaRAGe's judge prompts from a table keyed by the sentence (or
    answer) the prompt asks about; a retried prompt gets `retry`."""

    def __init__(self, first: dict[str, str], retry: dict[str, str]):
        self.first, self.retry, self.prompts = first, retry, []

    def identity(self):
        return {"stub": "labels"}

    def sample(self, prompts, *, n, temperature, top_p, max_new_tokens, seeds):
        assert temperature == 0.0 and max_new_tokens == VERDICT_TOKENS
        out = []
        for p in prompts:
            self.prompts.append(p)
            line = next(x for x in p.split("\n") if x.startswith(("Sentence: ", "Response: ")))
            key = line.split(": ", 1)[1]
            table = self.retry if "could not be read" in p else self.first
            out.append([(table[key], [0.0])])
        return out


def test_llm_judge_asks_garage_questions_with_their_context_and_retries_once(tmp_path):
    gen = Labels(
        {"Paris is big.": "SUPPORTED", "Hello!": "no_rad", "Lyon is big.": "unsure"},
        {"Lyon is big.": "UNSUPPORTED"},
    )
    judge = LLMJudge(Given(gen, "generator"), "unused", Store(tmp_path), generations)
    claims = [
        Claim("q?", "Paris is big.", ("Paris is a big city.",)),
        Claim("q?", "Hello!", ()),
        Claim("q?", "Lyon is big.", ("Paris is a big city.", "Lyon is small.")),
    ]
    assert judge.support(claims) == ["supported", "no_rad", "unsupported"]
    # the context is in the prompt, passage by passage; none is said to be none
    assert "Context:\nParis is a big city.\nLyon is small.\n" in gen.prompts[2]
    assert "Context:\n(no passage)\n" in gen.prompts[1]
    assert [p.endswith(retry_note("support")) for p in gen.prompts] == [False] * 3 + [True]
    gen = Labels({"I cannot say.": "MISSING", "Paris.": "ATTEMPTED"}, {})
    judge = LLMJudge(Given(gen, "generator"), "unused", Store(tmp_path), generations)
    items = [Item("q?", "I cannot say.", ()), Item("q?", "Paris.", ())]
    assert judge.deflection(items) == ["declines", "answers"]
