"""The one HTTP client (harness.core.http.ApiClient) against local stub servers on 127.0.0.1:
no key across a redirect, the key redacted from every message, Retry-After capped, total retry
time bounded, 429 then success, an unreachable port, a bad base_url."""

import logging
import socket

import pytest

from harness.core import http
from harness.core.errors import ConfigError, HarnessError
from harness.core.http import ApiClient, Retry
from tests.helpers.fake_openai import FakeOpenAI, Reply

KEY = "sk-secret-0123456789"


def _client(url, **kw):
    kw.setdefault("backoff_s", 0.0)
    return ApiClient(base_url=url, api_key_env="TEST_KEY", section="retriever", **kw)


def _post(client, parse=lambda payload: payload):
    return client.post("embeddings", {"input": ["x"]}, key=KEY, parse=parse, what="for model m")


@pytest.fixture
def sleeps(monkeypatch):
    """Every wait the client asks for, recorded instead of slept (its clock moves on)."""
    asked: list[float] = []
    real = http._clock
    monkeypatch.setattr(http, "_sleep", asked.append)
    monkeypatch.setattr(http, "_clock", lambda: real() + sum(asked))
    return asked


def test_redirect_to_another_origin_is_not_followed_and_sends_no_key(fake_openai):
    with FakeOpenAI() as other:
        fake_openai.script(Reply(307, headers={"Location": f"{other.url}/embeddings"}))
        with pytest.raises(HarnessError) as err:
            _post(_client(fake_openai.url))
        assert other.count() == 0  # the other origin never saw a request, so never the key
    msg = str(err.value)
    assert "redirected (HTTP 307)" in msg and other.url in msg and "retriever.base_url" in msg
    assert fake_openai.requests[0].headers["Authorization"] == f"Bearer {KEY}"


def test_echoed_key_is_redacted_from_the_error(fake_openai):
    fake_openai.script(Reply(400, echo=True))
    with pytest.raises(HarnessError) as err:
        _post(_client(fake_openai.url))
    assert KEY not in str(err.value) and "Bearer ***" in str(err.value)


def test_echoed_key_is_redacted_from_retry_logs_and_the_give_up_message(fake_openai, caplog):
    fake_openai.script(Reply(500, echo=True), Reply(500, echo=True))

    def parse(payload):
        raise Retry(f"unusable: {payload}")

    fake_openai.script(Reply(200, echo=True))
    caplog.set_level(logging.INFO, logger="harness.http")
    with pytest.raises(HarnessError) as err:
        _post(_client(fake_openai.url, max_retries=2), parse=parse)
    assert KEY not in str(err.value) and "***" in str(err.value)
    assert caplog.records and all(KEY not in r.getMessage() for r in caplog.records)


def test_huge_retry_after_is_capped(fake_openai, sleeps):
    fake_openai.script(Reply(429, headers={"Retry-After": "100000"}))
    assert _post(_client(fake_openai.url, max_wait_s=2.5))["data"]
    assert sleeps == [2.5]


def test_retry_after_as_http_date_is_capped_too(fake_openai, sleeps):
    fake_openai.script(Reply(503, headers={"Retry-After": "Fri, 31 Dec 2999 23:59:59 GMT"}))
    assert _post(_client(fake_openai.url))["data"]
    assert sleeps == [60.0]  # the default cap


def test_total_retry_time_is_bounded(fake_openai, sleeps):
    fake_openai.script(*[Reply(429, headers={"Retry-After": "30"})] * 5)
    with pytest.raises(HarnessError, match=r"failed 3 times in \d+ s \(retriever.max_total_s\)"):
        _post(_client(fake_openai.url, max_retries=10, max_total_s=70))
    assert sleeps == [30.0, 30.0]  # a third wait would pass 70 s
    assert fake_openai.count() == 3


def test_429_then_success(fake_openai, sleeps):
    fake_openai.script(Reply(429), Reply(502))
    out = _post(_client(fake_openai.url, backoff_s=0.5))
    assert len(out["data"]) == 1 and sleeps == [0.5, 1.0]  # exponential backoff
    assert fake_openai.count("embeddings") == 3


def _free_port() -> int:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_port_fails_with_one_line(sleeps):
    with pytest.raises(HarnessError) as err:
        _post(_client(f"http://127.0.0.1:{_free_port()}/v1", max_retries=1))
    msg = str(err.value)
    assert "cannot connect to" in msg and "ConnectError" in msg and "\n" not in msg
    assert "2 times); start the server, or set retriever.base_url" in msg and len(sleeps) == 1


def test_a_server_never_reached_is_given_up_soon_one_reached_before_is_waited_for(sleeps):
    client = _client(f"http://127.0.0.1:{_free_port()}/v1", max_retries=6, backoff_s=1.0)
    with pytest.raises(HarnessError, match=r"cannot connect to .*; 3 times\)"):
        _post(client)
    assert sleeps == [1.0, 2.0]  # not minutes: a wrong address or a server not started
    sleeps.clear()
    client._reached = True  # it answered before: a refusal now may be a restart
    with pytest.raises(HarnessError, match="failed 7 times"):
        _post(client)
    assert sleeps == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]


@pytest.mark.parametrize("url", ["notaurl", "ftp://host/v1", "http://", "https://h:99999/v1", None])
def test_bad_base_url_is_a_config_error(url):
    with pytest.raises(ConfigError, match=r"retriever.base_url is .* not an http\(s\) URL"):
        _client(url)


@pytest.mark.parametrize(
    "field, value",
    [("max_retries", -1), ("max_retries", 1.5), ("max_wait_s", -1), ("max_total_s", "x")],
)
def test_bad_retry_settings_are_config_errors(field, value):
    with pytest.raises(ConfigError, match=f"retriever.{field} must be"):
        _client("http://127.0.0.1:1/v1", **{field: value})


def test_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("TEST_KEY", raising=False)
    with pytest.raises(HarnessError, match="environment variable TEST_KEY"):
        _client("http://127.0.0.1:1/v1").key("model m")


def test_credentials_in_base_url_are_masked_in_every_message(sleeps, caplog):
    port = _free_port()
    caplog.set_level(logging.INFO, logger="harness.http")
    with pytest.raises(HarnessError) as err:
        _post(_client(f"http://alice:hunter2@127.0.0.1:{port}/v1", max_retries=1))
    said = [str(err.value), *(r.getMessage() for r in caplog.records)]
    assert len(said) == 2 and all("hunter2" not in m and "alice" not in m for m in said)
    assert f"cannot connect to http://***@127.0.0.1:{port}/v1/embeddings" in said[0]
    with pytest.raises(ConfigError) as bad:
        _client("ftp://alice:hunter2@host/v1")
    assert "hunter2" not in str(bad.value)
    assert http.masked_url("https://u:p@h/v1") == "https://***@h/v1"
    assert http.masked_url("https://h/v1") == "https://h/v1"


def test_a_placeholder_key_is_not_masked_in_messages():
    """A local server takes any key ("x"); masking it would turn every x of a message into
    ***: only a key of 8 characters or more is treated as a secret."""
    client = _client("http://127.0.0.1:9/v1")
    text = "raise retriever.max_retries / retriever.max_total_s"
    assert client._redact(text, "x") == text
    assert KEY not in client._redact(f"got {KEY} back", KEY)


def test_a_server_that_never_answers_in_time_points_at_the_timeout(fake_openai, sleeps):
    fake_openai.script(Reply(delay_s=0.5), Reply(delay_s=0.5))
    with pytest.raises(HarnessError, match=r"no answer within 0.1 s\); check the endpoint, or "
                       r"raise retriever.timeout_s for a slow server"):  # fmt: skip
        _post(_client(fake_openai.url, max_retries=1, timeout_s=0.1))
