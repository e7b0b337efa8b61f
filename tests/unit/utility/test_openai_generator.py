"""The OpenAI-compatible generator against the fake server: the request it sends (n, seed,
log-probabilities), how it reads completions and chat answers, and one-line errors."""

from __future__ import annotations

import pytest

from harness.core.errors import HarnessError
from harness.utility import ModelSpec
from harness.utility.openai import OpenAIGenerator
from tests.helpers.fake_openai import Reply

KW = dict(n=2, temperature=0.8, top_p=0.95, max_new_tokens=7)


def gen(url: str, **opts) -> OpenAIGenerator:
    spec = ModelSpec("openai", "served-model", options={"base_url": url, "concurrency": 1, **opts})
    return OpenAIGenerator(spec)


def test_completions(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    choices = [
        {"index": 1, "text": " Lyon", "logprobs": {"token_logprobs": [-0.5, -0.25]}},
        {"index": 0, "text": " Paris\n", "logprobs": {"token_logprobs": [-0.1]}},
    ]
    fake_openai.script(Reply(json={"choices": choices}))
    out = gen(fake_openai.url).sample(["Q: capital?"], seeds=[2**40 + 3], **KW)
    assert out == [[("Paris", [-0.1]), ("Lyon", [-0.5, -0.25])]]  # in index order, stripped
    body = fake_openai.requests[0].body
    assert fake_openai.requests[0].path.endswith("/v1/completions")
    assert body == {
        "model": "served-model", "prompt": "Q: capital?", "n": 2, "temperature": 0.8,
        "top_p": 0.95, "max_tokens": 7, "logprobs": 1, "seed": (2**40 + 3) % 2**31,
    }  # fmt: skip


def test_chat(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    lp = {"content": [{"token": "Paris", "logprob": -0.2}]}
    choices = [{"index": i, "message": {"content": "Paris"}, "logprobs": lp} for i in (0, 1)]
    fake_openai.script(Reply(json={"choices": choices}))
    out = gen(fake_openai.url, api="chat").sample(["Q?"], seeds=[1], **KW)
    assert out == [[("Paris", [-0.2]), ("Paris", [-0.2])]]
    body = fake_openai.requests[0].body
    assert body["messages"] == [{"role": "user", "content": "Q?"}] and body["logprobs"] is True


def test_no_logprobs_is_one_line(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    choices = [{"index": i, "text": "Paris", "logprobs": None} for i in (0, 1)]
    fake_openai.script(Reply(json={"choices": choices}))
    with pytest.raises(HarnessError, match="returned no token log-probabilities") as info:
        gen(fake_openai.url).sample(["Q?"], seeds=[1], **KW)
    assert "\n" not in str(info.value)


def test_rag_reads_text_alone_from_a_chat_server_without_logprobs(fake_openai, monkeypatch):
    """End-to-end RAG and its judge read answers as text: no logprobs asked for or needed."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    choices = [{"index": 0, "message": {"content": " Paris "}}]
    fake_openai.script(Reply(json={"choices": choices}))
    spec = ModelSpec("openai", "m", options={"base_url": fake_openai.url, "api": "chat"})
    out = OpenAIGenerator(spec, "rag.generator").sample(["Q?"], seeds=[1], **{**KW, "n": 1})
    assert out == [[("Paris", [])]]
    assert "logprobs" not in fake_openai.requests[0].body


def test_wrong_number_of_choices_is_retried(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    good = [{"index": i, "text": "x", "logprobs": {"token_logprobs": [-1.0]}} for i in (0, 1)]
    fake_openai.script(Reply(json={"choices": good[:1]}), Reply(json={"choices": good}))
    out = gen(fake_openai.url, backoff_s=0).sample(["Q?"], seeds=[1], **KW)
    assert out == [[("x", [-1.0]), ("x", [-1.0])]] and fake_openai.count() == 2


def test_missing_key(fake_openai, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(HarnessError, match="export OPENAI_API_KEY"):
        gen(fake_openai.url).sample(["Q?"], seeds=[1], **KW)
