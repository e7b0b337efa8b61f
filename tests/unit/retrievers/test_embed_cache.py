"""The sharded embedding cache: keys, reuse, resume, damage detection, dimension checks."""

import json

import numpy as np
import pytest

from harness.core.errors import HarnessError
from retrievers.embed_cache import (
    EmbeddingCache,
    cache_key,
    encode_cached,
    fill_cache,
    slice_shards,
)

TEXTS = [f"text number {i}" for i in range(10)]
ID = {"model": "m", "revision": None, "prompt": None, "dtype": "fp32", "normalize": True}


class Fake:
    """An encoder that records what it was asked to encode."""

    def __init__(self, dim=3):
        self.calls: list[list[str]] = []
        self.dim = dim

    def __call__(self, texts):
        self.calls.append(list(texts))
        return np.array([[len(t), i, self.dim] + [0] * (self.dim - 3) for i, t in enumerate(texts)],
                        dtype=np.float32)  # fmt: skip


def _encode(fake, root, texts=TEXTS, identity=ID, shard_size=4):
    return encode_cached(fake, texts, identity=identity, root=root, shard_size=shard_size,
                         label="test", progress=False)  # fmt: skip


def test_key_depends_on_identity_texts_and_shards():
    k = cache_key(ID, TEXTS, 4)[0]
    assert k == cache_key(dict(ID), list(TEXTS), 4)[0]
    assert k != cache_key({**ID, "dtype": "bf16"}, TEXTS, 4)[0]
    assert k != cache_key({**ID, "prompt": "query: "}, TEXTS, 4)[0]
    assert k != cache_key(ID, TEXTS[:-1] + ["changed"], 4)[0]
    assert k != cache_key(ID, TEXTS, 5)[0]
    # boundaries count: ["ab", "c"] is not ["a", "bc"]
    assert cache_key(ID, ["ab", "c"], 4)[0] != cache_key(ID, ["a", "bc"], 4)[0]


def test_second_run_reuses_every_shard(tmp_path):
    first, second = Fake(), Fake()
    a, stats_a = _encode(first, tmp_path)
    b, stats_b = _encode(second, tmp_path)
    assert [len(c) for c in first.calls] == [4, 4, 2]
    assert second.calls == [] and stats_b == {"cached": 3, "encoded": 0}
    assert stats_a == {"cached": 0, "encoded": 3}
    assert np.array_equal(a, b) and a.dtype == np.float32 and a.shape == (10, 3)
    files = sorted(p.name for p in next(tmp_path.glob("*/*")).iterdir())
    assert files == ["000000.json", "000000.npy", "000001.json", "000001.npy", "000002.json",
                     "000002.npy", "claims", "meta.json"]  # fmt: skip
    assert (next(tmp_path.glob("*/*")) / "claims").stat().st_size == 0  # locks only
    meta = json.loads(next(tmp_path.glob("*/*/meta.json")).read_text())
    assert meta["identity"] == ID and meta["n_texts"] == 10


def test_missing_shards_are_encoded_again_and_only_those(tmp_path, caplog):
    caplog.set_level("INFO", logger="harness")
    full, _ = _encode(Fake(), tmp_path)
    shard_dir = next(tmp_path.glob("*/*"))
    (shard_dir / "000001.json").unlink()  # as if killed before the sidecar was renamed in
    fake = Fake()
    again, stats = _encode(fake, tmp_path)
    assert fake.calls == [TEXTS[4:8]] and stats == {"cached": 2, "encoded": 1}
    assert np.array_equal(full, again)
    assert "resuming, 2 of 3 shards" in _notes(caplog)


@pytest.mark.parametrize(
    "damage", ["bytes", "sidecar", "shape", "sidecar-list", "sidecar-not-utf8", "sidecar-deep"]
)
def test_damaged_shard_is_reported_and_rebuilt(tmp_path, caplog, damage):
    caplog.set_level("INFO", logger="harness")
    full, _ = _encode(Fake(), tmp_path)
    shard_dir = next(tmp_path.glob("*/*"))
    npy, side = shard_dir / "000002.npy", shard_dir / "000002.json"
    if damage == "bytes":
        npy.write_bytes(npy.read_bytes()[:-4] + b"\0\0\0\0")
    elif damage == "sidecar":
        side.write_text("{not json")
    elif damage == "sidecar-list":  # valid JSON, not the object a sidecar is
        side.write_text("[1, 2]")
    elif damage == "sidecar-not-utf8":
        side.write_bytes(b'{"rows": "\xff"}')
    elif damage == "sidecar-deep":
        side.write_text("[" * 100_000 + "]" * 100_000)
    else:
        info = json.loads(side.read_text())
        info["rows"] = [8, 11]
        side.write_text(json.dumps(info))
    fake = Fake()
    again, _ = _encode(fake, tmp_path)
    assert fake.calls == [TEXTS[8:]]
    assert np.array_equal(full, again)
    err = _notes(caplog)
    assert "000002.npy" in err and "encoding it again" in err


def test_dimension_change_under_the_same_identity_is_an_error(tmp_path):
    _encode(Fake(dim=3), tmp_path)
    (next(tmp_path.glob("*/*")) / "000001.json").unlink()
    with pytest.raises(HarnessError, match="dimension 5 but the cached ones .* have 3"):
        _encode(Fake(dim=5), tmp_path)


def test_no_cache_encodes_everything(tmp_path):
    fake = Fake()
    emb, stats = encode_cached(fake, TEXTS, identity=ID, root=None, shard_size=4, label="x")
    assert sum(fake.calls, []) == TEXTS and emb.shape == (10, 3) and not any(tmp_path.iterdir())


def test_nothing_pickled(tmp_path):
    _encode(Fake(), tmp_path)
    for npy in tmp_path.glob("*/*/*.npy"):
        np.load(npy, allow_pickle=False)  # raises if an object array were stored


def test_shard_size_must_be_positive(tmp_path):
    with pytest.raises(HarnessError, match="shard size"):
        EmbeddingCache(tmp_path, ID, TEXTS, 0)


def test_cache_off_encodes_in_the_same_shards(tmp_path):
    # batching changes the last bits of real embeddings; cache on or off must agree exactly
    on, off = Fake(), Fake()
    a, _ = _encode(on, tmp_path)
    b, stats = _encode(off, None)
    assert on.calls == off.calls and [len(c) for c in off.calls] == [4, 4, 2]
    assert np.array_equal(a, b) and stats == {"cached": 0, "encoded": 3}


def _notes(caplog) -> str:
    """The notes the harness logged (the CLI prints them to stderr as `note:` lines)."""
    return "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("harness"))


def test_full_disk_is_one_error_naming_the_cache_and_keeps_written_shards(tmp_path, monkeypatch):
    import errno

    import retrievers.embed_cache as ec

    real = ec._write_atomic
    written = []

    def filling(path, data):
        if len(written) >= 3:  # meta.json, then shard 0's two files fit; then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        written.append(path.name)
        real(path, data)

    monkeypatch.setattr(ec, "_write_atomic", filling)
    with pytest.raises(HarnessError, match=r"cannot write the embedding cache .*No space left"):
        _encode(Fake(), tmp_path)
    monkeypatch.setattr(ec, "_write_atomic", real)
    fake = Fake()
    _encode(fake, tmp_path)
    assert fake.calls == [TEXTS[4:8], TEXTS[8:]]  # shard 0 was kept and reused


def test_slices_cover_every_shard_once_in_order():
    for n_shards in (0, 1, 3, 10, 17):
        for parts in (1, 2, 3, 16, 20):
            covered = [i for p in range(parts) for i in slice_shards(n_shards, p, parts)]
            assert covered == list(range(n_shards))
            sizes = [len(slice_shards(n_shards, p, parts)) for p in range(parts)]
            assert max(sizes) - min(sizes) <= 1
    for bad in ((2, 2), (-1, 2), (0, 0)):
        with pytest.raises(HarnessError, match="need 0 <= slice < slices"):
            slice_shards(5, *bad)


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_any_slicing_fills_exactly_the_files_of_one_run(tmp_path, parts):
    texts = [f"text number {i}" for i in range(23)]
    whole = Fake()
    _encode(whole, tmp_path / "whole", texts=texts)
    sliced, reports = Fake(), []
    for p in range(parts):
        report = fill_cache(sliced, texts, identity=ID, root=tmp_path / "sliced", shard_size=4,
                            label="t", part=(p, parts), progress=False)  # fmt: skip
        reports.append(report)
    assert _files(tmp_path / "sliced") == _files(tmp_path / "whole")
    assert sorted(sliced.calls) == sorted(whole.calls)  # the same rows in the same calls
    assert sum(r["encoded"] for r in reports) == 6 and all(r["n_shards"] == 6 for r in reports)
    rows = [r["rows"] for r in reports if r["shards"]]
    assert rows[0][0] == 0 and rows[-1][1] == 23
    # afterwards an ordinary run encodes nothing
    again = Fake()
    _, stats = _encode(again, tmp_path / "sliced", texts=texts)
    assert again.calls == [] and stats == {"cached": 6, "encoded": 0}


def test_a_slice_refilled_reuses_its_shards(tmp_path):
    first, second = Fake(), Fake()
    args = dict(identity=ID, root=tmp_path, shard_size=4, label="t", part=(1, 2), progress=False)
    a = fill_cache(first, TEXTS, **args)
    b = fill_cache(second, TEXTS, **args)
    assert (a["encoded"], a["cached"], b["encoded"], b["cached"]) == (2, 0, 0, 2)
    assert second.calls == [] and list(a["shards"]) == [1, 2] and a["rows"] == (4, 10)
