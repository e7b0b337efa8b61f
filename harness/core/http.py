"""POST JSON to an HTTP API with retries: 429, 5xx and connection errors are retried with
exponential backoff (honouring Retry-After); other HTTP errors fail at once."""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from harness.core.errors import HarnessError

log = logging.getLogger("harness.http")

T = TypeVar("T")


class Retry(Exception):
    """Raised by a `parse` callback: the answer arrived but is unusable; ask again."""


def post_json(
    url: str,
    body: Mapping[str, Any],
    *,
    headers: Mapping[str, str],
    parse: Callable[[Any], T],
    what: str,
    fix: str,
    max_retries: int,
    backoff_s: float,
    timeout_s: float,
) -> T:
    """`parse(payload)` of the first good answer. `what` names the request in messages
    ("for model m"); `fix` ends the give-up message ("raise retriever.max_retries")."""
    data = json.dumps(body).encode()
    reason = ""
    for attempt in range(max_retries + 1):
        req = urllib.request.Request(
            url, data=data, headers={"Content-Type": "application/json", **headers}
        )
        retry_after = None
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as resp:
                raw = resp.read()
            try:
                payload = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise Retry(f"the answer is not JSON: {raw[:80]!r}") from None
            return parse(payload)
        except urllib.error.HTTPError as exc:
            if exc.code != 429 and exc.code < 500:
                detail = exc.read()[:300].decode("utf-8", "replace").replace("\n", " ")
                raise HarnessError(f"{url} answered HTTP {exc.code} {what}: {detail}") from None
            reason = f"HTTP {exc.code}"
            retry_after = _seconds(exc.headers.get("Retry-After"))
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
        except Retry as exc:
            reason = str(exc)
        if attempt == max_retries:
            raise HarnessError(
                f"{url} failed {_times(max_retries + 1)} {what} (last: {reason}); check the "
                f"endpoint, or {fix}"
            )
        wait = retry_after if retry_after is not None else backoff_s * 2**attempt
        log.info(f"{url}: {reason}; retrying in {wait:.1f} s")
        time.sleep(wait)
    raise AssertionError("unreachable")


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"
