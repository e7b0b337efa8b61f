"""One fake OpenAI-compatible HTTP server for the tests: POST {url}/embeddings and
{url}/chat/completions on 127.0.0.1, on an ephemeral port, in a background thread.

    with FakeOpenAI(chat='{"entities": []}') as api:      # or the `fake_openai` fixture
        client(base_url=api.url)                          # url ends in /v1
        api.script(Reply(429, headers={"Retry-After": "0"}), Reply(503))  # then the default
        assert api.count("chat/completions") == 3

Every request is recorded (path, headers, parsed JSON body) before it is answered. Replies
come from the `script` queue first (one per request, whichever endpoint), then from the
defaults: for chat, `chat` (a string, or a function of the request body returning the
message content) with `chat_usage`; for embeddings, `embed(text)` for each input, listed in
reverse order (the API may answer out of order; `index` says where each goes) with
`embed_usage`. Any other path answers 404. A fault inside the fake itself (a default
function that raised) answers 500 and is raised again when the server is closed, so it
cannot pass for a retried server error.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = ["FakeOpenAI", "Reply", "Request", "fake_openai"]

ENDPOINTS = ("embeddings", "chat/completions")


@dataclass(frozen=True)
class Reply:
    """One scripted answer. status != 200 sends an OpenAI-style error body unless `json`
    is given; `content` is a chat message's content (the default's place); `json` replaces
    the whole body; `echo` answers with the request's own headers as the body (a server that
    reflects what it got); `delay_s` waits before answering."""

    status: int = 200
    content: str | None = None
    json: Any = None
    echo: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass(frozen=True)
class Request:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON, or the raw text if it was not JSON

    @property
    def endpoint(self) -> str | None:
        """'embeddings', 'chat/completions', or None for any other path."""
        return next((e for e in ENDPOINTS if self.path.rstrip("/").endswith("/" + e)), None)


def length_embedding(text: str) -> list[float]:
    """The default embedding: [len(text), 1, 0], so a test can tell inputs apart."""
    return [float(len(text)), 1.0, 0.0]


class FakeOpenAI:
    """A configurable OpenAI-compatible server; see the module docstring."""

    def __init__(
        self,
        *,
        chat: str | Callable[[Any], str] = '{"entities": []}',
        chat_usage: dict | None = None,
        embed: Callable[[str], list[float]] = length_embedding,
        embed_usage: dict | None = None,
        delay_s: float = 0.0,
    ):
        self.chat = chat
        self.chat_usage = chat_usage or {"prompt_tokens": 100, "completion_tokens": 20}
        self.embed = embed
        self.embed_usage = embed_usage or {"total_tokens": 7}
        self.delay_s = delay_s
        self.requests: list[Request] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.faults: list[BaseException] = []
        self._script: list[Reply] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._closed = False

    # --- what a test uses ---------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order; then the defaults answer."""
        with self._lock:
            self._script.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._script)

    def count(self, endpoint: str | None = None) -> int:
        """Requests received so far: all of them, or those to one endpoint."""
        with self._lock:
            return sum(endpoint is None or r.endpoint == endpoint for r in self.requests)

    def close(self) -> None:
        """Stop serving and free the port; raise the first fault the fake itself had."""
        if not self._closed:
            self._closed = True
            self._server.shutdown()
            self._server.server_close()
            self._thread.join()
        if self.faults:
            raise AssertionError(f"the fake OpenAI server failed: {self.faults[0]!r}")

    def __enter__(self) -> FakeOpenAI:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:  # the test's own failure is the one to report
            self.faults.clear()
            self.close()

    # --- what the handler uses ----------------------------------------------------------

    def _receive(self, req: Request) -> Reply | None:
        with self._lock:
            self.requests.append(req)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._script.pop(0) if self._script else None

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _answer(self, req: Request, scripted: Reply | None) -> tuple[int, dict, bytes]:
        reply = scripted or Reply()
        time.sleep(reply.delay_s if scripted else self.delay_s)
        if reply.echo:
            body = {"error": {"message": "echo", "headers": req.headers}}
        elif reply.json is not None:
            body = reply.json
        elif req.endpoint is None:
            return 404, reply.headers, _error(f"no such endpoint: {req.path}")
        elif reply.status != 200:
            return reply.status, reply.headers, _error("try later")
        elif req.endpoint == "chat/completions":
            content = reply.content
            if content is None:
                content = self.chat(req.body) if callable(self.chat) else self.chat
            body = {
                "choices": [{"message": {"role": "assistant", "content": content}}],
                "usage": self.chat_usage,
            }
        else:
            texts = req.body["input"]
            texts = [texts] if isinstance(texts, str) else texts
            data = [{"index": i, "embedding": self.embed(t)} for i, t in enumerate(texts)]
            data.reverse()  # the API may answer out of order; index says where each goes
            body = {"data": data, "usage": self.embed_usage}
        return reply.status, reply.headers, json.dumps(body).encode()


def _error(message: str) -> bytes:
    return json.dumps({"error": {"message": message}}).encode()


def _handler(api: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self._serve()

        def do_POST(self):
            self._serve()

        def _serve(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            req = Request(self.command, self.path, dict(self.headers.items()), body)
            scripted = api._receive(req)
            try:
                status, headers, out = api._answer(req, scripted)
            except Exception as e:  # a fault in the fake, not an answer the test asked for
                api.faults.append(e)
                status, headers, out = 500, {}, _error(f"fake server fault: {e!r}")
            finally:
                api._done()  # before replying: the client may send its next one at once
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(out)

    return Handler


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A FakeOpenAI with the defaults, closed (and checked for faults) after the test."""
    with FakeOpenAI() as api:
        yield api
