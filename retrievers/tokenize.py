"""Tokenisers for sparse retrievers: an explicit, configurable step."""

from __future__ import annotations

import re
from collections.abc import Callable

from harness.core.errors import ConfigError, unknown_name

# Lucene's classic English stop set (StandardAnalyzer's ENGLISH_STOP_WORDS_SET).
ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)

_WORD = re.compile(r"[^\W_]+")  # runs of Unicode letters and digits


def whitespace(text: str) -> list[str]:
    """`str.split()`: the RARE setting (case and punctuation kept)."""
    return text.split()


def simple(text: str, *, stopwords: bool = False) -> list[str]:
    """Lowercase, split on anything that is not a letter or digit, optionally drop stopwords."""
    tokens = _WORD.findall(text.lower())
    if stopwords:
        tokens = [t for t in tokens if t not in ENGLISH_STOPWORDS]
    return tokens


TOKENIZERS = ("whitespace", "simple")


def get_tokenizer(name: str, *, stopwords: bool = False) -> Callable[[str], list[str]]:
    """Return the tokeniser called `name`."""
    if name == "whitespace":
        if stopwords:
            raise ConfigError(
                "retriever.stopwords=true needs retriever.tokenizer=simple "
                "(the whitespace tokeniser keeps case, so the stop list would not match)"
            )
        return whitespace
    if name == "simple":
        return (lambda text: simple(text, stopwords=True)) if stopwords else simple
    raise unknown_name("tokenizer", name, TOKENIZERS, "set retriever.tokenizer")
