"""The OpenAI embeddings client against the shared fake OpenAI server on 127.0.0.1."""

import json

import numpy as np
import pytest

from harness.core.errors import HarnessError
from retrievers.openai_embed import OpenAIEncoder
from tests.helpers.fake_openai import Reply


@pytest.fixture
def stub(fake_openai):
    """The shared fake server: embeddings are [len(text), 1, 0], answered in reverse order."""
    return fake_openai


def _enc(stub, **kw):
    return OpenAIEncoder(model="text-embedding-3-large", base_url=stub.url, backoff_s=0.0, **kw)


def test_batches_in_order_with_the_key_from_the_environment(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    enc = _enc(stub, batch_size=2, normalize=False, query_prompt="q: ")
    emb = enc.encode(["a", "bbb", "cc"], "query")
    assert emb.dtype == np.float32 and emb[:, 0].tolist() == [4.0, 6.0, 5.0]  # "q: " prefixed
    assert [r.body["input"] for r in stub.requests] == [["q: a", "q: bbb"], ["q: cc"]]
    assert {r.headers["Authorization"] for r in stub.requests} == {"Bearer sk-test"}
    assert stub.requests[0].path == "/v1/embeddings"
    assert enc.usage_tokens == 14
    assert "sk-test" not in json.dumps(enc.identity("query"))


def test_normalised_by_default(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    emb = _enc(stub).encode(["abc"], "document")
    assert np.linalg.norm(emb[0]) == pytest.approx(1.0)


def test_retries_429_and_5xx_then_succeeds(stub, monkeypatch, caplog):
    caplog.set_level("INFO", logger="harness")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    stub.script(Reply(429, headers={"Retry-After": "0"}), Reply(503), Reply(500))
    emb = _enc(stub, max_retries=3).encode(["x"], "query")
    assert emb.shape == (1, 3) and len(stub.requests) == 4
    err = _notes(caplog)
    assert "HTTP 429" in err and "HTTP 503" in err


def test_gives_up_after_max_retries(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    stub.script(Reply(500), Reply(500), Reply(500))
    with pytest.raises(HarnessError, match=r"failed 3 times .*\(last: HTTP 500\)"):
        _enc(stub, max_retries=2).encode(["x"], "query")


def test_client_errors_are_not_retried(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    stub.script(Reply(401))
    with pytest.raises(HarnessError, match="answered HTTP 401"):
        _enc(stub).encode(["x"], "query")
    assert len(stub.requests) == 1


def test_missing_key_is_one_clear_error(stub, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(HarnessError, match="needs an API key in the environment variable OPENAI"):
        _enc(stub).encode(["x"], "query")
    assert stub.requests == []


def test_unreachable_endpoint(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    enc = OpenAIEncoder(model="m", base_url="http://127.0.0.1:9/v1", max_retries=1, backoff_s=0)
    with pytest.raises(HarnessError, match="cannot connect to .*; 2 times"):
        enc.encode(["x"], "query")


def _notes(caplog) -> str:
    """The notes the harness logged (the CLI prints them to stderr as `note:` lines)."""
    return "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("harness"))
