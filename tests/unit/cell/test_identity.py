"""Cell folder names: the shipped config keeps its name, a variant lists what differs."""

from harness.cell.identity import cell_name, config_hash, describe_difference, identity

BM25 = {"name": "bm25", "display_name": "BM25", "type": "bm25", "k1": 1.5, "b": 0.75}


def test_shipped_config_keeps_its_name():
    assert cell_name(dict(BM25), BM25, 100) == ("bm25", {})


def test_runtime_keys_do_not_make_a_variant():
    mine = {**BM25, "display_name": "Okapi", "batch_size": 8}
    assert cell_name(mine, BM25, 100) == ("bm25", {})


def test_variant_lists_differing_settings_and_depth():
    name, diff = cell_name({**BM25, "k1": 0.5, "b": 0.3}, BM25, 10)
    assert name == "bm25[b=0.3,k1=0.5,depth=10]"
    assert diff == {"b": 0.3, "k1": 0.5, "depth": 10}


def test_nested_and_added_keys_are_dotted():
    base = {"name": "m", "search": {"backend": "auto", "index": "flat"}}
    mine = {"name": "m", "search": {"backend": "auto", "index": "hnsw"}, "extra": True}
    assert cell_name(mine, base, 100)[0] == "m[extra=true,search.index=hnsw]"


def test_an_empty_mapping_filled_in_names_its_keys_only():
    base = {"name": "h", "fusion": "rrf", "weights": {}}
    mine = {"name": "h", "fusion": "rrf", "weights": {"bm25": 0.3}}
    assert cell_name(mine, base, 100) == ("h[weights.bm25=0.3]", {"weights.bm25": 0.3})
    assert cell_name(dict(base), base, 100)[0] == "h"


def test_a_run_file_is_named_by_its_path_and_identified_by_its_content():
    base = {"name": None, "type": "run_file", "path": "???", "format": "auto", "sha256": None}
    mine = {**base, "name": "mine", "path": "a/mine.trec", "sha256": "sha256:ab"}
    assert cell_name(mine, base, 100) == ("mine", {})
    moved = {**mine, "path": "/elsewhere/mine.trec"}
    assert identity(moved, 100) == identity(mine, 100)
    assert identity({**mine, "sha256": "sha256:cd"}, 100) != identity(mine, 100)


def test_a_whole_float_and_its_int_are_one_setting():
    one, whole = {**BM25, "k1": 1}, {**BM25, "k1": 1.0}
    assert cell_name(one, BM25, 100) == cell_name(whole, BM25, 100) == ("bm25[k1=1]", {"k1": 1})
    assert identity(one, 100) == identity(whole, 100)
    assert cell_name({**BM25, "k1": 1.5}, {**BM25, "k1": 1.5}, 100)[0] == "bm25"
    assert cell_name({**BM25, "b": 1.0}, {**BM25, "b": 1}, 100)[0] == "bm25"


def test_awkward_or_long_variants_become_a_hash():
    mine = {**BM25, "tokenizer": "a b/c"}
    name, _ = cell_name(mine, BM25, 100)
    assert name == f"bm25[cfg-{config_hash(identity(mine, 100))}]"
    many = {**BM25, **{f"option_{i}": i for i in range(8)}}
    assert cell_name(many, BM25, 100)[0].startswith("bm25[cfg-")


def test_different_configs_never_share_a_name():
    names = {cell_name({**BM25, "k1": k1}, BM25, 100)[0] for k1 in (0.5, 0.9, 1.2, 1.5)}
    assert len(names) == 4


def test_no_base_means_the_name_alone():
    assert cell_name({"name": "mine", "alpha": 3}, None, 100) == ("mine", {})


def test_hash_is_stable():
    assert config_hash({"b": 1, "a": [1, 2]}) == config_hash({"a": [1, 2], "b": 1})


def test_describe_difference_names_the_setting():
    text = describe_difference(identity({**BM25, "k1": 0.9}, 100), identity(BM25, 100))
    assert text == "retriever.k1: 0.9 here, 1.5 there"
