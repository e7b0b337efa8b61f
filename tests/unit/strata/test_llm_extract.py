"""The LLM entity extractor against the shared fake OpenAI-compatible server on 127.0.0.1."""

import pytest

from harness.core.errors import HarnessError
from harness.strata.llm_extract import LLMExtractor
from tests.helpers.fake_openai import FakeOpenAI, Reply

# Recorded answers, as a chat endpoint returns them (content is a string holding JSON).
GOOD = '{"entities": [{"name": "Goetheanum", "description": "a building in Dornach, Switzerland, seat of the Anthroposophical Society"}, {"name": "Rudolf Steiner", "description": "Austrian philosopher who designed the Goetheanum"}, {"name": "goetheanum", "description": "duplicate"}]}'  # noqa: E501
FENCED = '```json\n{"entities": [{"name": "Swiss Federal Assembly", "description": "the federal legislature of Switzerland"}]}\n```'  # noqa: E501
NOT_JSON = "Sure! Here are the entities: Goetheanum, Rudolf Steiner."
WRONG_SHAPE = '{"entities": [{"title": "Goetheanum"}]}'


@pytest.fixture
def stub(monkeypatch):
    """The shared fake server; its chat answers GOOD unless a test scripts other replies."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(chat=GOOD, chat_usage={"prompt_tokens": 100, "completion_tokens": 20}) as s:
        yield s


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
    assert req.path == "/v1/chat/completions"
    assert req.body["model"] == "stub-model"
    assert req.body["response_format"] == {"type": "json_object"}
    assert req.body["messages"][1]["content"] == "The Goetheanum ..."
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
    stub.script(Reply(content=FENCED))
    names = [m.name for m in _ex(stub, tmp_path).extract("x", label="chunk 'c'")]
    assert names == ["Swiss Federal Assembly"]


def test_answer_that_is_not_json_is_retried(stub, tmp_path):
    stub.script(Reply(content=NOT_JSON), Reply(content=WRONG_SHAPE))
    ex = _ex(stub, tmp_path, max_retries=2)
    assert [m.name for m in ex.extract("x", label="chunk 'c'")][0] == "Goetheanum"
    assert len(stub.requests) == 3
    assert ex.usage.prompt_tokens == 300  # unusable answers are still paid for


def test_answer_never_json_fails_naming_the_chunk(stub, tmp_path):
    stub.chat = NOT_JSON
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
    with pytest.raises(HarnessError, match=r"cannot connect to .* for chunk 'c' .*ConnectError"):
        ex.extract("x", label="chunk 'c'")


def test_concurrency_limit_and_order(stub, tmp_path):
    stub.delay_s = 0.05
    ex = _ex(stub, tmp_path, concurrency=3)
    items = [(f"chunk '{i}'", f"text {i}") for i in range(12)]
    out = ex.extract_many(items)
    assert len(out) == 12 and all(m[0].name == "Goetheanum" for m in out)
    assert 1 < stub.max_in_flight <= 3
    sent = sorted(r.body["messages"][1]["content"] for r in stub.requests)
    assert sent == sorted(t for _, t in items)


def test_missing_key_is_one_clear_error(stub, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(HarnessError, match="needs an API key in the environment variable"):
        _ex(stub, tmp_path).extract_many([("chunk 'a'", "x")])
    assert stub.requests == []
