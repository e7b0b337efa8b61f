"""The one client for OpenAI-compatible JSON APIs (embeddings, chat): httpx underneath, with the
safety rules written down in docs/reliability.md#http:

- redirects are never followed, so the API key cannot reach another origin; a 3xx answer is an
  error naming where it pointed (set base_url to that address);
- 429, 5xx, timeouts and connection errors are retried with exponential backoff; Retry-After is
  honoured but capped at `max_wait_s`, and the whole retry loop stops after `max_total_s`;
- a connection refused by a server this client never reached is given up after
  `FIRST_CONTACT_RETRIES` retries: nothing listens at that address (a wrong port, a server
  not started), which minutes of retries would not mend;
- the key is read from the environment at request time and is replaced by `***` in every
  message and log line, including a server's echo of the request.
"""

from __future__ import annotations

import email.utils
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from harness.core.errors import ConfigError, HarnessError

log = logging.getLogger("harness.http")

T = TypeVar("T")
REDACTED = "***"
# The clock and the waits between attempts, by name so that tests can stand in for them.
_sleep = time.sleep
_clock = time.monotonic
FIRST_CONTACT_RETRIES = 2


class Retry(Exception):
    """Raised by a `parse` callback: the answer arrived but is unusable; ask again."""


class ApiClient:
    """POST JSON to `base_url + path` with the key from `$api_key_env`.

    `section` names the config section in messages ("retriever", "extractor"). Thread-safe: one
    httpx.Client (a connection pool) serves every thread.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key_env: str,
        section: str,
        max_retries: int = 6,
        backoff_s: float = 1.0,
        timeout_s: float = 120.0,
        max_wait_s: float = 60.0,
        max_total_s: float = 600.0,
    ):
        self.base_url = check_url(base_url, f"{section}.base_url")
        self.api_key_env = str(api_key_env)
        self.section = section
        for key, value, low in (
            ("max_retries", max_retries, 0),
            ("backoff_s", backoff_s, 0),
            ("timeout_s", timeout_s, 0.001),
            ("max_wait_s", max_wait_s, 0),
            ("max_total_s", max_total_s, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low:
                raise ConfigError(f"{section}.{key} must be a number >= {low}, got {value!r}")
            setattr(self, key, value if key == "max_retries" else float(value))
        if not isinstance(max_retries, int):
            raise ConfigError(f"{section}.max_retries must be an integer, got {max_retries!r}")
        self._client: httpx.Client | None = None
        self._reached = False  # some request got an answer: a later refusal may be a restart

    def key(self, who: str) -> str:
        """The API key, read now from the environment; `who` names the model in the error."""
        key = os.environ.get(self.api_key_env)
        if not key:
            raise HarnessError(
                f"{who} needs an API key in the environment variable {self.api_key_env}; "
                f"export {self.api_key_env}=... (any value for a local server; it is never "
                f"written anywhere)"
            )
        return key

    def post(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        key: str,
        parse: Callable[[Any], T],
        what: str,
    ) -> T:
        """`parse(payload)` of the first good answer to POST `body` at `path`. `what` names
        the request in messages ("for model m")."""
        url = f"{self.base_url}/{path.lstrip('/')}"
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        start = _clock()
        reason = ""
        for attempt in range(self.max_retries + 1):
            wait: float | None = None
            try:
                resp = self._http().post(url, json=dict(body), headers=headers)
            except httpx.ConnectTimeout:
                reason = f"no connection within {self.timeout_s:g} s"
            except httpx.TimeoutException:
                reason = f"no answer within {self.timeout_s:g} s"
            except httpx.TransportError as exc:
                reason = f"{type(exc).__name__}: {exc}"
                # refused: nothing listens there (a DNS or TLS failure may pass: retried)
                refused = isinstance(exc, httpx.ConnectError) and "refused" in str(exc).lower()
                if (
                    refused
                    and not self._reached
                    and attempt >= min(FIRST_CONTACT_RETRIES, self.max_retries)
                ):
                    raise self._error(
                        f"cannot connect to {url} {what} ({reason}; {_times(attempt + 1)}); "
                        f"start the server, or set {self.section}.base_url to where it listens",
                        key,
                    ) from None
            else:
                self._reached = True
                if resp.is_redirect:
                    target = resp.headers.get("Location", "?")
                    raise self._error(
                        f"{url} redirected (HTTP {resp.status_code}) to {target} {what}; "
                        f"redirects are not followed so the API key stays with this "
                        f"origin: set {self.section}.base_url to the final address",
                        key,
                    )
                if resp.status_code == 429 or resp.status_code >= 500:
                    reason = f"HTTP {resp.status_code}"
                    wait = _retry_after(resp.headers.get("Retry-After"))
                elif resp.status_code >= 400:
                    detail = resp.text[:300].replace("\n", " ").replace("\r", " ")
                    raise self._error(
                        f"{url} answered HTTP {resp.status_code} {what}: {detail}", key
                    )
                else:
                    try:
                        return parse(_json(resp))
                    except Retry as exc:
                        reason = str(exc)
            if wait is None:
                wait = self.backoff_s * 2**attempt
            wait = min(wait, self.max_wait_s)
            spent = _clock() - start
            out_of_time = spent + wait > self.max_total_s
            if attempt == self.max_retries or out_of_time:
                why = (
                    f"{_times(attempt + 1)}"
                    if not out_of_time
                    else f"{_times(attempt + 1)} in {spent:.0f} s ({self.section}.max_total_s)"
                )
                fix = f"raise {self.section}.max_retries / {self.section}.max_total_s"
                if reason.startswith("no answer within"):  # slow, or not answering at all
                    fix = f"raise {self.section}.timeout_s for a slow server"
                raise self._error(
                    f"{url} failed {why} {what} (last: {reason}); check the endpoint, or {fix}", key
                )
            log.info(self._redact(f"{url}: {reason}; retrying in {wait:.1f} s", key))
            _sleep(wait)
        raise AssertionError("unreachable")

    def _error(self, text: str, key: str) -> HarnessError:
        return HarnessError(self._redact(text, key))

    def _redact(self, text: str, key: str) -> str:
        """`text` without the API key and the credentials of base_url. A key shorter than 8
        characters is no secret (a local server's placeholder, "x"): masking it would mangle
        every word that holds it."""
        text = text.replace(key, REDACTED) if len(key or "") >= 8 else text
        secret = urlsplit(self.base_url).netloc.rpartition("@")[0]
        return text.replace(f"{secret}@", f"{REDACTED}@") if secret else text

    def _http(self) -> httpx.Client:
        if self._client is None:
            # follow_redirects=False is httpx's default; said here because it is the rule.
            self._client = httpx.Client(timeout=self.timeout_s, follow_redirects=False)
        return self._client

    def __getstate__(self) -> dict[str, Any]:  # picklable for process pools
        return {**self.__dict__, "_client": None}


def check_url(url: Any, key: str) -> str:
    """`url` without its trailing slash, if it is an http(s) URL with a host."""
    text = str(url).rstrip("/") if url is not None else ""
    try:
        parts = urlsplit(text)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 -- raises ValueError on a bad port
    except ValueError:
        ok = False
    if not ok:
        raise ConfigError(
            f"{key} is {masked_url(str(url))!r}, not an http(s) URL; give the API's address, e.g. "
            f"{key}=https://api.openai.com/v1"
        )
    return text


def _json(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except (ValueError, RecursionError):
        raise Retry(f"the answer is not JSON: {resp.content[:80]!r}") from None


def _retry_after(value: str | None) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date (RFC 9110); None when absent/unusable."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def masked_url(url: str) -> str:
    """`url` with the user and password it may carry (http://user:pw@host) masked, for
    messages."""
    netloc = urlsplit(url).netloc
    secret = netloc.rpartition("@")[0]
    return url.replace(f"{secret}@", f"{REDACTED}@", 1) if secret else url


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"
