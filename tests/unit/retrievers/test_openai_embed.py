"""The OpenAI embeddings client against a stub HTTP server on 127.0.0.1."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from harness.errors import HarnessError
from retrievers.openai_embed import OpenAIEncoder


class Stub:
    """Answers POST /v1/embeddings; `script` lists status codes to give before succeeding."""

    def __init__(self):
        self.requests: list[dict] = []
        self.script: list[int] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers["Authorization"],
                                       "body": body})  # fmt: skip
                code = outer.script.pop(0) if outer.script else 200
                if code != 200:
                    self.send_response(code)
                    if code == 429:
                        self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(b'{"error": {"message": "try later"}}')
                    return
                data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]}
                        for i, t in enumerate(body["input"])]  # fmt: skip
                data.reverse()  # the API may answer out of order; index says where each goes
                out = json.dumps({"data": data, "usage": {"total_tokens": 7}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def stub():
    s = Stub()
    yield s
    s.server.shutdown()


def _enc(stub, **kw):
    return OpenAIEncoder(model="text-embedding-3-large", base_url=stub.url, backoff_s=0.0, **kw)


def test_batches_in_order_with_the_key_from_the_environment(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    enc = _enc(stub, batch_size=2, normalize=False, query_prompt="q: ")
    emb = enc.encode(["a", "bbb", "cc"], "query")
    assert emb.dtype == np.float32 and emb[:, 0].tolist() == [4.0, 6.0, 5.0]  # "q: " prefixed
    assert [r["body"]["input"] for r in stub.requests] == [["q: a", "q: bbb"], ["q: cc"]]
    assert {r["auth"] for r in stub.requests} == {"Bearer sk-test"}
    assert stub.requests[0]["path"] == "/v1/embeddings"
    assert enc.usage_tokens == 14
    assert "sk-test" not in json.dumps(enc.identity("query"))


def test_normalised_by_default(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    emb = _enc(stub).encode(["abc"], "document")
    assert np.linalg.norm(emb[0]) == pytest.approx(1.0)


def test_retries_429_and_5xx_then_succeeds(stub, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    stub.script = [429, 503, 500]
    emb = _enc(stub, max_retries=3).encode(["x"], "query")
    assert emb.shape == (1, 3) and len(stub.requests) == 4
    err = capsys.readouterr().err
    assert "HTTP 429" in err and "HTTP 503" in err


def test_gives_up_after_max_retries(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    stub.script = [500, 500, 500]
    with pytest.raises(HarnessError, match=r"failed 3 times .*\(last: HTTP 500\)"):
        _enc(stub, max_retries=2).encode(["x"], "query")


def test_client_errors_are_not_retried(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    stub.script = [401]
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
    with pytest.raises(HarnessError, match="failed 2 times"):
        enc.encode(["x"], "query")
