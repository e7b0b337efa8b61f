"""Runs that need the same cache shards at once share the work: each shard is encoded by one
run only, the others read it; a run that dies holding a shard blocks nobody."""

from __future__ import annotations

import json
import signal
import time
from collections import Counter

import numpy as np

from retrievers.embed_cache import encode_cached
from tests.conftest import ROOT
from tests.helpers import claim_worker as worker
from tests.helpers.cli import spawn

SHARDS = len(worker.TEXTS) // worker.SHARD


def _want() -> np.ndarray:
    return np.array([[len(t), int(t.split()[1]), 1.0] for t in worker.TEXTS], np.float32)


def test_two_runs_at_once_encode_each_shard_once(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    args = (tmp_path / "cache", log)
    with (
        spawn("tests.helpers.claim_worker", *args, "a", "barrier", cwd=ROOT) as a,
        spawn("tests.helpers.claim_worker", *args, "b", "barrier", cwd=ROOT) as b,
    ):
        assert a.wait() == 0 and b.wait() == 0
    encoded = Counter(p.name.rsplit(".", 1)[0] for p in log.glob("text *"))
    assert sorted(encoded) == [worker.TEXTS[i * worker.SHARD] for i in range(SHARDS)]
    assert set(encoded.values()) == {1}  # no shard encoded twice
    stats = {t: json.loads((log / f"stats.{t}.json").read_text()) for t in "ab"}
    assert stats["a"]["encoded"] + stats["b"]["encoded"] == SHARDS
    assert stats["a"]["encoded"] >= 1 and stats["b"]["encoded"] >= 1  # both did some
    for t in "ab":
        assert np.array_equal(np.load(log / f"out.{t}.npy"), _want())
        assert stats[t]["cached"] + stats[t]["encoded"] == SHARDS


def test_a_run_that_dies_holding_a_shard_blocks_nobody(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    with spawn("tests.helpers.claim_worker", tmp_path / "cache", log, "a", "hang", cwd=ROOT) as a:
        while not (log / "encoding.a").exists():
            assert a.poll() is None, "the worker ended before it encoded"
            time.sleep(0.01)
        a.send_signal(signal.SIGKILL)
        a.wait()
    emb, stats, calls = _encode_here(tmp_path / "cache")
    assert stats == {"cached": 0, "encoded": SHARDS} and len(calls) == SHARDS
    assert np.array_equal(emb, _want())


def _encode_here(root):
    calls = []

    def encode(texts):
        calls.append(texts[0])
        return np.array([[len(t), int(t.split()[1]), 1.0] for t in texts], np.float32)

    emb, stats = encode_cached(encode, worker.TEXTS, identity=worker.IDENTITY, root=root,
                               shard_size=worker.SHARD, label="t", progress=False)  # fmt: skip
    return emb, stats, calls


def test_a_claim_nobody_lets_go_is_encoded_here_after_the_stall_time(tmp_path, monkeypatch):
    import retrievers.embed_cache as ec

    monkeypatch.setattr(ec, "STALL_S", 0.2)
    log = tmp_path / "log"
    log.mkdir()
    with spawn("tests.helpers.claim_worker", tmp_path / "cache", log, "a", "hang", cwd=ROOT) as a:
        while not (log / "encoding.a").exists():  # it holds shard 0 and never lets go
            assert a.poll() is None, "the worker ended before it encoded"
            time.sleep(0.01)
        emb, stats, calls = _encode_here(tmp_path / "cache")
        assert a.poll() is None  # still holding it
    assert stats == {"cached": 0, "encoded": SHARDS} and calls[-1] == worker.TEXTS[0]
    assert np.array_equal(emb, _want())


def test_a_file_system_without_locks_grants_every_claim(tmp_path, monkeypatch):
    import errno
    import fcntl

    def no_locks(fd, cmd, *args):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "lockf", no_locks)
    emb, stats, calls = _encode_here(tmp_path / "cache")
    assert stats == {"cached": 0, "encoded": SHARDS} and len(calls) == SHARDS
    assert np.array_equal(emb, _want())
