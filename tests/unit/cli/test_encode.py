"""`python -m harness.encode`: reading `shard`, the keys it adds, and which retrievers it takes."""

import pytest

from harness.cli.encode import check_shards, dense_parts, own_keys, parse_shard
from harness.core.errors import ConfigError


@pytest.mark.parametrize(
    ("shard", "shards", "want"),
    [(None, None, (0, 1)), ("3/16", None, (3, 16)), (" 0 / 1 ", None, (0, 1)),
     (15, 16, (15, 16)), ("2/4", 4, (2, 4))],
)  # fmt: skip
def test_good_shards(shard, shards, want):
    assert parse_shard(shard, shards) == want


@pytest.mark.parametrize(
    ("shard", "shards", "message"),
    [
        ("16/16", None, "16 of 16 does not exist; slices count from 0: shard=0/16 .. shard=15/16"),
        ("-1/4", None, "write the slice as shard=i/n"),
        ("3/0", None, "slice 3 of 0 does not exist"),
        ("a/b", None, "write the slice as shard=i/n"),
        (3, None, "say how many slices, shard=3/N or shards=N"),
        (None, 4, "name the slice too"),
        ("1/4", 8, "the slice count differs"),
        (True, 2, "write the slice as shard=i/n"),
        (1.5, None, "write the slice as shard=i/n"),
        (2, "x", "shards must be a whole number"),
    ],
)  # fmt: skip
def test_bad_shards_are_one_line_config_errors(shard, shards, message):
    with pytest.raises(ConfigError, match="^shard=") as info:
        parse_shard(shard, shards)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_own_keys_are_added_and_every_sweep_value_is_checked():
    assert own_keys(["shard=3/16", "shards=4", "retriever=minilm", "+shard=1", "-m"]) == [
        "+shard=3/16", "+shards=4", "retriever=minilm", "+shard=1", "-m",
    ]  # fmt: skip
    check_shards(["+shard=range(4)", "+shards=4", "corpus=demo"])
    check_shards(["+shard=0/2,1/2"])
    with pytest.raises(ConfigError, match="slice 4 of 4 does not exist"):
        check_shards(["+shard=range(5)", "+shards=4"])
    with pytest.raises(ConfigError, match="slice 2 of 2"):
        check_shards(["+shard=0/2,2/2"])


def test_only_retrievers_that_encode_have_a_cache_to_fill():
    from retrievers.bm25 import BM25

    with pytest.raises(ConfigError, match="retriever 'bm25' encodes no text"):
        dense_parts(BM25(name="bm25"))
