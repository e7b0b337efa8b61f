"""Name normalisation and the offline (rule-based) entity extractor."""

import pytest

from harness.core.errors import ConfigError
from harness.strata.entities import OfflineExtractor, normalise


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("Sue Grafton's", "sue graftons"),
        ("Christmas-themed", "christmas themed"),
        ("  U.S.   Army ", "u s army"),
        ("Alexis Argüello", "alexis argüello"),
        ("ÉCOLE  normale", "école normale"),
        ("--", ""),
    ],
)
def test_normalise(raw, expected):
    assert normalise(raw) == expected


CORPUS = [
    "The Goetheanum is located in Dornach. It hosts the federal legislature archive of "
    "the Bank of America and the private eye museum.",
    "Goetheanum visitors like the federal legislature tours. The private eye exhibition opened.",
    "Located near Basel, the archive keeps letters of Kinsey Millhone, a private eye.",
    "Bart met Lisa on April 30, 1995 at the Fox network studio.",
]


def fitted(**kw):
    # max_df off by default here: in a 4-chunk corpus every repeated phrase is "common"
    return OfflineExtractor(**{"max_df": 1.0, **kw}).fit(CORPUS)


def test_names_concepts_and_ranking():
    names = [m.name for m in fitted().extract(CORPUS[0])]
    # names first; "The" stripped; connectors join "Bank of America"
    assert names[:3] == ["Bank of America", "Dornach", "Goetheanum"]
    # concepts in at least min_df=2 chunks; "archive" (2 chunks) kept, "museum" (1) dropped
    assert "federal legislature" in names and "private eye" in names and "archive" in names
    assert "museum" not in names and "private eye museum" not in names


def test_sentence_initial_capital_kept_only_when_the_corpus_capitalises_it():
    ex = fitted()
    assert "Goetheanum" in [m.name for m in ex.extract(CORPUS[1])]
    # "Located" starts a sentence; the corpus writes "located" lowercase elsewhere
    assert all(not m.name.startswith("Located") for m in ex.extract(CORPUS[2]))


def test_dates_are_not_names_and_possessive_is_dropped():
    names = [m.name for m in fitted().extract(CORPUS[3])]
    assert "April" not in names and not any("1995" in n for n in names)
    assert {"Bart", "Lisa", "Fox"} <= set(names)


def test_description_is_the_sentence_window_and_mentions_are_unique():
    ex = fitted(context_words=6)
    mentions = ex.extract(CORPUS[1])
    keys = [m.key for m in mentions]
    assert len(keys) == len(set(keys))
    fed = next(m for m in mentions if m.key == "federal legislature")
    # 6 words: 2 before the 2-word name, the name, and what follows
    assert fed.description == "like the federal legislature tours."
    assert len(fed.description.split()) <= 6


def test_max_df_drops_what_most_chunks_hold_and_cap_per_chunk():
    ex = fitted(max_df=0.5)  # "private eye" is in 3 of 4 chunks
    assert "private eye" not in [m.key for m in ex.extract(CORPUS[0])]
    assert len(fitted(max_per_chunk=2).extract(CORPUS[0])) == 2


def test_queries_skip_min_df():
    ex = fitted()
    q = "Which museum is in Dornach?"
    assert "museum" not in [m.key for m in ex.extract(q)]
    assert [m.key for m in ex.extract(q, corpus_text=False)] == ["dornach", "museum"]


def test_bad_settings_and_unfitted_use():
    with pytest.raises(ConfigError, match="extractor.max_per_chunk must be a positive integer"):
        OfflineExtractor(max_per_chunk=0)
    with pytest.raises(ConfigError, match=r"extractor.max_df must be a share in \(0, 1\]"):
        OfflineExtractor(max_df=2)
    with pytest.raises(RuntimeError, match="fit the extractor"):
        OfflineExtractor().extract("text")
