"""Entities from an OpenAI-compatible chat endpoint (docs/stratification.md#entities, LLM
extractor).

Each text is one chat request asking for JSON `{"entities": [{"name", "description"}]}`. An
answer that is not such JSON is asked for again (with backoff), then fails naming the text.
Validated answers are cached on disk, keyed by the model, endpoint-independent request
(messages, temperature) and format version, so a re-run sends nothing. Requests run
`concurrency` at a time; tokens are counted from each answer's `usage`, and priced when the
config gives prices per million tokens. The API key is read from the environment only.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError, check_int
from harness.core.files import write_text_atomic
from harness.core.http import ApiClient, Retry
from harness.core.paths import cache_dir as default_cache_dir
from harness.strata.entities import Mention, normalise

FORMAT = 1
SYSTEM = (
    "You extract the salient entities of a text for a knowledge graph: people, organisations, "
    "places, works, events, concepts, technical terms and methods. For each entity give its "
    "name as written in the text and a description of 10 to 20 words that explains what it "
    "is without relying on the text. Answer with JSON only, in the form "
    '{"entities": [{"name": "...", "description": "..."}]}, with at most MAX entities, the '
    "most important first."
)


@dataclass
class Usage:
    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class LLMExtractor:
    kind = "llm"

    def __init__(
        self,
        *,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.0,
        max_entities: int = 15,
        json_mode: bool = True,
        concurrency: int = 8,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        timeout_s: float = 120.0,
        max_wait_s: float = 60.0,
        max_total_s: float = 600.0,
        price_input_per_1m: float | None = None,
        price_output_per_1m: float | None = None,
        cache: bool = True,
        cache_dir: str | None = None,
        name: str = "llm",
        method: str = "llm",
    ):
        check_int(max_entities, "extractor.max_entities")
        check_int(concurrency, "extractor.concurrency")
        if not model:
            raise ConfigError("extractor.model is required, e.g. extractor.model=gpt-4o-mini")
        self.api = ApiClient(
            base_url=base_url,
            api_key_env=api_key_env,
            section="extractor",
            max_retries=max_retries,
            backoff_s=backoff_s,
            timeout_s=timeout_s,
            max_wait_s=max_wait_s,
            max_total_s=max_total_s,
        )
        self.model = str(model)
        self.temperature = float(temperature)
        self.max_entities = max_entities
        self.json_mode = bool(json_mode)
        self.concurrency = concurrency
        self.prices = (price_input_per_1m, price_output_per_1m)
        root = Path(cache_dir).expanduser() if cache_dir else default_cache_dir() / "llm"
        self.root = root if cache else None
        self.usage = Usage()
        self._lock = threading.Lock()

    def identity(self) -> dict:
        return {
            "extractor": self.kind,
            "version": FORMAT,
            "model": self.model,
            "temperature": self.temperature,
            "max_entities": self.max_entities,
            "json_mode": self.json_mode,
        }

    def fit(self, texts: Sequence[str]) -> LLMExtractor:
        return self  # nothing to learn from the corpus

    def _body(self, text: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM.replace("MAX", str(self.max_entities))},
                {"role": "user", "content": text},
            ],
            "temperature": self.temperature,
        }
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def _cache_path(self, body: dict[str, Any]) -> Path | None:
        if self.root is None:
            return None
        blob = json.dumps({"format": FORMAT, **body}, sort_keys=True, ensure_ascii=False)
        key = hashlib.sha256(blob.encode()).hexdigest()
        return self.root / key[:2] / f"{key}.json"

    def extract(self, text: str, *, label: str, key: str | None = None) -> list[Mention]:
        """The entities of one text; `label` names it in errors ("chunk 'x'")."""
        body = self._body(text)
        path = self._cache_path(body)
        if path is not None and path.is_file():
            try:
                entities = _validate(json.loads(path.read_text(encoding="utf-8"))["entities"])
                with self._lock:
                    self.usage.cached += 1
                return _mentions(entities, self.max_entities)
            except (ValueError, KeyError, TypeError, RecursionError):
                pass  # a damaged cache entry is asked for again and overwritten
        entities = self.api.post(
            "chat/completions",
            body,
            key=key or self._key(),
            parse=self._parse,
            what=f"for {label} (model {self.model})",
        )
        if path is not None:
            write_text_atomic(path, json.dumps({"entities": entities}, ensure_ascii=False))
        return _mentions(entities, self.max_entities)

    def _parse(self, payload: Any) -> list[dict[str, str]]:
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise Retry("the answer has no choices[0].message.content") from None
        with self._lock:  # tokens are paid for whether or not the content is usable
            usage = payload.get("usage") or {}
            self.usage.requests += 1
            self.usage.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            self.usage.completion_tokens += int(usage.get("completion_tokens") or 0)
        try:
            doc = json.loads(_strip_fence(content or ""))
            return _validate(doc["entities"] if isinstance(doc, dict) else doc)
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise Retry(f"the model's answer is not the entity JSON asked for ({exc})") from None

    def _key(self) -> str:
        return self.api.key("the LLM extractor")

    def extract_many(
        self, items: Sequence[tuple[str, str]], on_done: Callable[[], None] | None = None
    ) -> list[list[Mention]]:
        """Entities of each (label, text), in order, `concurrency` requests at a time; the first
        failure cancels what has not started and is raised. `on_done` is called per item."""
        key = None if all(self._cached(t) for _, t in items) else self._key()
        out: list[list[Mention] | None] = [None] * len(items)
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures = {
                pool.submit(self.extract, text, label=label, key=key): i
                for i, (label, text) in enumerate(items)
            }
            try:
                for fut in as_completed(futures):
                    out[futures[fut]] = fut.result()
                    if on_done is not None:
                        on_done()
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
        return [m or [] for m in out]

    def _cached(self, text: str) -> bool:
        path = self._cache_path(self._body(text))
        return path is not None and path.is_file()

    def cost(self) -> float | None:
        """Dollars for the tokens sent and received, when prices are configured."""
        p_in, p_out = self.prices
        if p_in is None or p_out is None:
            return None
        return (self.usage.prompt_tokens * p_in + self.usage.completion_tokens * p_out) / 1e6

    def summary(self) -> str:
        u = self.usage
        cost = self.cost()
        priced = (
            f", cost ${cost:.4f}"
            if cost is not None
            else " (set extractor.price_input_per_1m / price_output_per_1m for the cost)"
        )
        return (
            f"LLM extractor {self.model}: {u.requests} requests, {u.cached} answers from the "
            f"cache, {u.prompt_tokens:,} prompt + {u.completion_tokens:,} completion tokens{priced}"
        )


def _strip_fence(text: str) -> str:
    """Models often wrap JSON in a ```json fence despite the instruction."""
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        t = t.rsplit("```", 1)[0]
    return t


def _validate(items: Any) -> list[dict[str, str]]:
    if not isinstance(items, list):
        raise ValueError("'entities' is not a list")
    out = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ValueError(f"entity {item!r} has no string 'name'")
        desc = item.get("description", "")
        if not isinstance(desc, str):
            raise ValueError(f"entity {item['name']!r} has a description that is not a string")
        out.append({"name": item["name"].strip(), "description": desc.strip()})
    return out


def _mentions(entities: list[dict[str, str]], limit: int) -> list[Mention]:
    """De-duplicated by normalised name (first wins), names that normalise to nothing dropped."""
    seen: dict[str, Mention] = {}
    for e in entities:
        key = normalise(e["name"])
        if key and key not in seen:
            seen[key] = Mention(e["name"], key, e["description"])
    return list(seen.values())[:limit]
