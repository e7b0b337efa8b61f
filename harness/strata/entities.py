"""Entities of chunks and queries (docs/stratification.md#entities): name normalisation and the
offline extractor.

The offline extractor needs no network and no model. It finds two kinds of candidates in each
sentence, by rules that are easy to check:

- names: maximal runs of capitalised words ("Kinsey Millhone", "Bank of America"), joined
  across the connectors "of", "the", "de", "von"...; a sentence's first word is kept only
  when the corpus mostly writes it capitalised elsewhere (so "Goetheanum is..." keeps it and
  "Located in..." does not);
- concepts: runs of lowercase content words between stop words and punctuation, covered
  left to right by their longest multi-word sub-phrases (up to `max_words`) that at least
  `min_df` chunks hold ("federal legislature archive" -> "federal legislature"), plus the
  run's head (last) word when no phrase took it; a lone word ending in -ed, -ing or -ly
  (mostly verbs and adverbs) is skipped.

Anything found in more than `max_df` of the chunks is too common to say where a chunk
belongs and is dropped. Per chunk, names come first, then concepts, each by tf-idf, up to
`max_per_chunk`. The description of a mention is its sentence, cut to `context_words`
words around it. docs/stratification.md says why this rather than a keyphrase library.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from harness.core.errors import POSITIVE, ConfigError, check_int


@dataclass(frozen=True)
class Mention:
    """One entity found in one text: its surface name, normalised key and a description."""

    name: str
    key: str
    description: str


_PUNCT = re.compile(r"[^\w\s]|_")
_SPACE = re.compile(r"\s+")


def normalise(name: str) -> str:
    """Lowercase, apostrophes removed, other punctuation and hyphens to spaces, spaces collapsed
    ("Grafton's" -> "graftons", "Christmas-themed" -> "christmas themed")."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = text.replace("'", "").replace("\u2019", "")
    return _SPACE.sub(" ", _PUNCT.sub(" ", text)).strip()


STOPWORDS = frozenset(
    """a about above after again against all also although am among an and any are as at be
    because been before being below between both but by can could did do does doing down during
    each either else ever every few for from further had has have having he her here hers herself
    him himself his how however i if in into is it its itself just least less many may me might
    more most much must my myself neither no nor not now of off on once one only or other ought
    our ours ourselves out over own per rather same shall she should since so some such than that
    the their theirs them themselves then there these they this those though through thus to too
    under until up upon us very via was we were what whatever when whenever where whereas wherever
    whether which while who whom whose why will with within without would yet you your yours
    yourself yourselves another became become becomes first second third later known called
    named several including include includes included based used using well along around across
    towards toward former latter like unlike near onto beyond despite best better worst
    won held made took began begun gave given wrote written left led met found brought bought
    sold told became saw seen went gone came come got ran run grew grown knew built sent spent
    lost kept paid said thought taught fought stood lay laid""".split()
)  # the last lines: irregular past forms and comparatives, which the -ed rule cannot catch
CONNECTORS = frozenset("of the de la le les du des del da di von van der den y & for".split())
CALENDAR = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
)
_TOKEN = re.compile(r"[^\W_](?:[\w'\u2019.&-]*[^\W_])?")
_SENTENCE = re.compile(r"(?<=[.!?])[\"'\u201d)]*\s+")


def _sentences(text: str) -> list[str]:
    """The sentences; a full stop followed by space ends one (abbreviations split)."""
    ends = [m.end() for m in _SENTENCE.finditer(text)]
    return [text[a:b] for a, b in zip([0, *ends], [*ends, len(text)]) if a < b]


def _words(sentence: str) -> list[tuple[str, int, int]]:
    """Tokens with their spans; a trailing possessive 's is dropped from the token."""
    out = []
    for m in _TOKEN.finditer(sentence):
        tok, end = m.group(), m.end()
        if tok[-2:] in ("'s", "\u2019s"):
            tok, end = tok[:-2], end - 2
        tok = tok.rstrip(".")
        out.append((tok, m.start(), m.start() + len(tok)))
    return out


def _is_cap(tok: str) -> bool:
    return tok[:1].isupper() or (any(c.isupper() for c in tok[1:]) and tok[:1].isalpha())


@dataclass(frozen=True)
class _Candidate:
    name: str
    kind: str  # "name" or "concept"
    sentence: str
    start: int  # of the mention within the sentence


_COUNTS = ("max_per_chunk", "max_words", "context_words", "min_df")  # positive integers


class OfflineExtractor:
    """Rule-based names and concepts; fit on the corpus once (document frequencies, casing)."""

    kind = "offline"

    def __init__(
        self,
        *,
        max_per_chunk: int = 10,
        max_words: int = 4,
        context_words: int = 20,
        min_df: int = 2,
        max_df: float = 0.1,
        name: str = "offline",
        method: str = "keyphrase",
    ):
        counts = (max_per_chunk, max_words, context_words, min_df)
        for key, value in zip(_COUNTS, counts):
            setattr(self, key, check_int(value, f"extractor.{key}", what=POSITIVE))
        if not isinstance(max_df, (int, float)) or not 0 < max_df <= 1:
            raise ConfigError(f"extractor.max_df must be a share in (0, 1], got {max_df!r}")
        self.max_df = float(max_df)
        self._df: Counter[str] = Counter()
        self._n_docs = 0
        self._lower: Counter[str] = Counter()
        self._upper: Counter[str] = Counter()

    def identity(self) -> dict:
        """What the extraction depends on (for cache keys and the strata file)."""
        settings = {k: getattr(self, k) for k in (*_COUNTS, "max_df")}
        return {"extractor": self.kind, "version": 1, **settings}

    # -- candidates ---------------------------------------------------------------------------

    def _candidates(self, text: str, min_df: int) -> list[_Candidate]:
        out: list[_Candidate] = []
        for sent in _sentences(text):
            words = _words(sent)
            out += self._names(sent, words)
            out += self._concepts(sent, words, min_df)
        return out

    def _sentence_initial_is_common(self, tok: str) -> bool:
        low = tok.lower()
        return low in STOPWORDS or self._lower[low] > self._upper[low]

    def _names(self, sent: str, words: list[tuple[str, int, int]]) -> list[_Candidate]:
        out = []
        i, n = 0, len(words)
        while i < n:
            tok = words[i][0]
            if not _is_cap(tok) or (i == 0 and self._sentence_initial_is_common(tok)):
                i += 1
                continue
            j = i + 1  # extend across capitalised words, numbers after a name, and connectors
            last = i
            while j < n and _adjacent(sent, words[j - 1], words[j]):
                t = words[j][0]
                if _is_cap(t) or t.isdigit():
                    last = j
                    j += 1
                elif t.lower() in CONNECTORS and j + 1 < n and j - last <= 2:
                    j += 1
                else:
                    break
            run = words[i : last + 1]
            while run and run[0][0].lower() in STOPWORDS:  # "The Simpsons" -> "Simpsons"
                run = run[1:]
            if run and not all(w[0].lower() in CALENDAR or w[0].isdigit() for w in run):
                name = sent[run[0][1] : run[-1][2]]
                if len(name) > 1:
                    out.append(_Candidate(name, "name", sent, run[0][1]))
            i = last + 1
        return out

    def _runs(self, words: list[tuple[str, int, int]], sent: str) -> list[list[tuple]]:
        """Maximal runs of lowercase content words with only spaces between them."""
        runs: list[list[tuple[str, int, int]]] = []
        run: list[tuple[str, int, int]] = []
        for w in words:
            tok = w[0]
            content = (
                tok.islower() and tok.isalpha() and len(tok) > 2 and tok not in STOPWORDS
            ) or (tok.islower() and "-" in tok and len(tok) > 3)
            if content and run and _adjacent(sent, run[-1], w):
                run.append(w)
                continue
            if run:
                runs.append(run)
            run = [w] if content else []
        if run:
            runs.append(run)
        return runs

    def _ngrams(self, run: list[tuple]) -> list[tuple[int, int]]:
        """(start, stop) of every sub-phrase of a run up to max_words long."""
        n = len(run)
        return [(i, j) for i in range(n) for j in range(i + 1, min(n, i + self.max_words) + 1)]

    def _concepts(self, sent: str, words: list[tuple[str, int, int]], min_df: int):
        """Cover each run left to right with its longest multi-word sub-phrases that at least
        `min_df` chunks hold ("federal legislature archive" -> "federal legislature" when
        only that recurs); then the run's last word (English puts the head noun last) if no
        phrase took it and it is not a lone -ed/-ing/-ly word (mostly verbs and adverbs)."""
        out = []
        for run in self._runs(words, sent):
            i, covered = 0, False
            while i < len(run) - 1:
                for j in range(min(len(run), i + self.max_words), i + 1, -1):
                    phrase = sent[run[i][1] : run[j - 1][2]]
                    if self._df[normalise(phrase)] >= min_df:
                        out.append(_Candidate(phrase, "concept", sent, run[i][1]))
                        covered = j == len(run)
                        i = j
                        break
                else:
                    i += 1
            last = run[-1]
            if not covered and not last[0].endswith(("ed", "ing", "ly")):
                if self._df[normalise(last[0])] >= min_df:
                    out.append(_Candidate(last[0], "concept", sent, last[1]))
        return out

    # -- corpus statistics ----------------------------------------------------------------------

    def fit(self, texts: Iterable[str]) -> OfflineExtractor:
        """Document frequency of every candidate, and how often each word is written
        lowercase vs capitalised mid-sentence (to judge sentence-initial capitals)."""
        self._df.clear()
        self._lower.clear()
        self._upper.clear()
        self._n_docs = 0
        texts = list(texts)
        for text in texts:  # casing first: _candidates reads it
            for sent in _sentences(text):
                for k, (tok, _, _) in enumerate(_words(sent)):
                    if tok.islower():
                        self._lower[tok] += 1
                    elif k > 0 and _is_cap(tok):
                        self._upper[tok.lower()] += 1
        for text in texts:  # every name, and every sub-phrase of a concept run, once per chunk
            self._n_docs += 1
            keys = set()
            for sent in _sentences(text):
                words = _words(sent)
                keys |= {normalise(c.name) for c in self._names(sent, words)}
                for run in self._runs(words, sent):
                    keys |= {
                        normalise(sent[run[i][1] : run[j - 1][2]]) for i, j in self._ngrams(run)
                    }
            self._df.update(keys)
        return self

    def _keep(self, key: str) -> bool:
        if not key or key in STOPWORDS:
            return False
        df = self._df[key]
        return not (df > self.max_df * self._n_docs and df > 1)

    def extract(self, text: str, *, corpus_text: bool = True) -> list[Mention]:
        """The entities of one text, de-duplicated by normalised name, best first.

        `corpus_text=False` (queries) skips the min_df test: a query's concept need not
        occur in the corpus at all to be looked up (the longest sub-phrase is taken)."""
        if self._n_docs == 0:
            raise RuntimeError("fit the extractor on the corpus before extracting")
        tf: Counter[str] = Counter()
        first: dict[str, _Candidate] = {}
        for c in self._candidates(text, self.min_df if corpus_text else 0):
            key = normalise(c.name)
            if not self._keep(key):
                continue
            tf[key] += 1
            if key not in first or (first[key].kind == "concept" and c.kind == "name"):
                first[key] = c
        n = max(self._n_docs, 1)

        def rank(key: str) -> tuple:
            idf = math.log((n + 1) / (self._df[key] + 1)) + 1
            return (first[key].kind != "name", -tf[key] * idf, key)

        chosen = sorted(first, key=rank)[: self.max_per_chunk]
        return [Mention(first[k].name, k, self._describe(first[k])) for k in chosen]

    def _describe(self, c: _Candidate) -> str:
        """The mention's sentence, cut to `context_words` words centred on the mention."""
        before = c.sentence[: c.start].split()
        after = c.sentence[c.start :].split()
        keep_before = min(len(before), max(0, (self.context_words - len(c.name.split())) // 2))
        words = before[len(before) - keep_before :] + after
        return " ".join(words[: self.context_words])


def _adjacent(sent: str, a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    """Only spaces between two tokens (a comma, quote or bracket ends a phrase)."""
    return sent[a[2] : b[1]].isspace()
