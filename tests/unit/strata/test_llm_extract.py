"""The LLM entity extractor against a stub OpenAI-compatible chat server on 127.0.0.1."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness.errors import HarnessError
from harness.llm_extract import LLMExtractor

# Recorded answers, as a chat endpoint returns them (content is a string holding JSON).
GOOD = '{"entities": [{"name": "Goetheanum", "description": "a building in Dornach, Switzerland, seat of the Anthroposophical Society"}, {"name": "Rudolf Steiner", "description": "Austrian philosopher who designed the Goetheanum"}, {"name": "goetheanum", "description": "duplicate"}]}'  # noqa: E501
FENCED = '```json\n{"entities": [{"name": "Swiss Federal Assembly", "description": "the federal legislature of Switzerland"}]}\n```'  # noqa: E501
NOT_JSON = "Sure! Here are the entities: Goetheanum, Rudolf Steiner."
WRONG_SHAPE = '{"entities": [{"title": "Goetheanum"}]}'


class Stub:
    """Answers POST /v1/chat/completions from `script` (contents in order; then `default`)."""

    def __init__(self):
        self.requests: list[dict] = []
        self.script: list[str] = []
        self.default = GOOD
        self.delay = 0.0
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.requests.append({"path": self.path, "body": body})
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                    content = outer.script.pop(0) if outer.script else outer.default
                time.sleep(outer.delay)
                with outer.lock:  # before replying: the client may send its next one at once
                    outer.in_flight -= 1
                out = json.dumps(
                    {
                        "choices": [{"message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    s = Stub()
    yield s
    s.server.shutdown()


def _ex(stub, tmp_path, **kw):
    params = dict(model="stub-model", base_url=stub.url, backoff_s=0.0, cache_dir=str(tmp_path))
    return LLMExtractor(**{**params, **kw})


def test_valid_answer_is_parsed_deduplicated_and_priced(stub, tmp_path):
    ex = _ex(stub, tmp_path, price_input_per_1m=2.0, price_output_per_1m=10.0)
    mentions = ex.extract("The Goetheanum ...", label="chunk 'c1'")
    assert [(m.name, m.key) for m in mentions] == [
        ("Goetheanum", "goetheanum"),
        ("Rudolf Steiner", "rudolf steiner"),
    ]
    req = stub.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["body"]["model"] == "stub-model"
    assert req["body"]["response_format"] == {"type": "json_object"}
    assert req["body"]["messages"][1]["content"] == "The Goetheanum ..."
    assert (ex.usage.prompt_tokens, ex.usage.completion_tokens) == (100, 20)
    assert ex.cost() == pytest.approx((100 * 2.0 + 20 * 10.0) / 1e6)
    assert "1 requests, 0 answers from the cache, 100 prompt + 20 completion" in ex.summary()


def test_cached_answers_cost_nothing_on_a_rerun(stub, tmp_path):
    _ex(stub, tmp_path).extract("text one", label="chunk 'a'")
    again = _ex(stub, tmp_path)
    assert [m.name for m in again.extract("text one", label="chunk 'a'")] == [
        "Goetheanum",
        "Rudolf Steiner",
    ]
    assert len(stub.requests) == 1 and again.usage.cached == 1 and again.usage.requests == 0
    _ex(stub, tmp_path, model="other-model").extract("text one", label="chunk 'a'")
    assert len(stub.requests) == 2  # the cache key holds the model


def test_fenced_json_is_accepted(stub, tmp_path):
    stub.script = [FENCED]
    names = [m.name for m in _ex(stub, tmp_path).extract("x", label="chunk 'c'")]
    assert names == ["Swiss Federal Assembly"]


def test_answer_that_is_not_json_is_retried(stub, tmp_path):
    stub.script = [NOT_JSON, WRONG_SHAPE]
    ex = _ex(stub, tmp_path, max_retries=2)
    assert [m.name for m in ex.extract("x", label="chunk 'c'")][0] == "Goetheanum"
    assert len(stub.requests) == 3
    assert ex.usage.prompt_tokens == 300  # unusable answers are still paid for


def test_answer_never_json_fails_naming_the_chunk(stub, tmp_path):
    stub.default = NOT_JSON
    ex = _ex(stub, tmp_path, max_retries=1)
    with pytest.raises(HarnessError) as err:
        ex.extract("x", label="chunk 'Goetheanum.txt_page001'")
    msg = str(err.value)
    assert "failed 2 times for chunk 'Goetheanum.txt_page001' (model stub-model)" in msg
    assert "not the entity JSON asked for" in msg and "extractor.max_retries" in msg
    assert not list(tmp_path.rglob("*.json"))  # nothing cached


def test_unreachable_endpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    ex = LLMExtractor(
        model="m", base_url="http://127.0.0.1:9/v1", max_retries=1, backoff_s=0.0,
        cache_dir=str(tmp_path), timeout_s=2,
    )  # fmt: skip
    with pytest.raises(HarnessError, match=r"failed 2 times for chunk 'c' .*URLError"):
        ex.extract("x", label="chunk 'c'")


def test_concurrency_limit_and_order(stub, tmp_path):
    stub.delay = 0.05
    ex = _ex(stub, tmp_path, concurrency=3)
    items = [(f"chunk '{i}'", f"text {i}") for i in range(12)]
    out = ex.extract_many(items)
    assert len(out) == 12 and all(m[0].name == "Goetheanum" for m in out)
    assert 1 < stub.max_in_flight <= 3
    sent = sorted(r["body"]["messages"][1]["content"] for r in stub.requests)
    assert sent == sorted(t for _, t in items)


def test_missing_key_is_one_clear_error(stub, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(HarnessError, match="needs an API key in the environment variable"):
        _ex(stub, tmp_path).extract_many([("chunk 'a'", "x")])
    assert stub.requests == []
