"""A generator behind an OpenAI-compatible endpoint that returns log-probabilities (vLLM, SGLang,
llama.cpp's server, OpenAI's completions): one request per prompt asks for its N samples
(`n`) with their token log-probabilities, through harness.core.http.ApiClient.

`options.api`: "completions" (POST /completions with the prompt as text; the default, since the
prompt templates are the model's whole input) or "chat" (POST /chat/completions, the prompt as
one user message). The servers report log-probabilities of their own sampling distribution,
which for some (vLLM's default) is the model's at temperature 1 before top-p: docs/utility.md
says which numbers that changes. A server's seed makes its samples repeatable only if the
server honours it; the cache makes a rerun identical either way."""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness.core.errors import ConfigError, HarnessError, check_int
from harness.core.http import ApiClient, Retry, masked_url
from harness.utility.protocols import Sample
from harness.utility.spec import ModelSpec

APIS = ("completions", "chat")


class OpenAIGenerator:
    def __init__(self, spec: ModelSpec, where: str = "utility.generator"):
        opts = dict(spec.options)
        self.spec, self.where = spec, where
        # ΔSePer reads the answers' log-probabilities; end-to-end RAG and its judge read the
        # text alone, so any chat or completions server will do
        self.logprobs = where.split(".", 1)[0] == "utility"
        self.model = str(spec.model)
        self.api_kind = opts.get("api", "completions")
        if self.api_kind not in APIS:
            raise ConfigError(f"{where}.options.api is {self.api_kind!r}; valid: completions, chat")
        self.concurrency = check_int(opts.get("concurrency", 4), f"{where}.options.concurrency")
        transport = {
            k: opts[k]
            for k in ("max_retries", "backoff_s", "timeout_s", "max_wait_s", "max_total_s")
            if k in opts
        }
        self.api = ApiClient(
            base_url=opts.get("base_url", "https://api.openai.com/v1"),
            api_key_env=opts.get("api_key_env", "OPENAI_API_KEY"),
            section=f"{where}.options",
            **transport,
        )

    def identity(self) -> dict[str, Any]:
        return self.spec.identity()

    def sample(
        self,
        prompts: Sequence[str],
        *,
        n: int,
        temperature: float,
        top_p: float,
        max_new_tokens: int,
        seeds: Sequence[int],
    ) -> list[list[Sample]]:
        key = self.api.key(f"{self.where} {self.model}")

        def one(i: int) -> list[Sample]:
            body: dict[str, Any] = {
                "model": self.model,
                "n": n,
                "temperature": temperature,
                "top_p": top_p,
                "max_tokens": max_new_tokens,
                "seed": seeds[i] % 2**31,
            }
            if self.api_kind == "chat":
                body["messages"] = [{"role": "user", "content": prompts[i]}]
                body.update({"logprobs": True} if self.logprobs else {})
                path = "chat/completions"
            else:
                body["prompt"] = prompts[i]
                body.update({"logprobs": 1} if self.logprobs else {})
                path = "completions"
            return self.api.post(
                path,
                body,
                key=key,
                parse=lambda payload: self._parse(payload, n),
                what=f"for {self.where} {self.model}",
            )

        if self.concurrency == 1 or len(prompts) == 1:
            return [one(i) for i in range(len(prompts))]
        with ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(one, range(len(prompts))))

    def _parse(self, payload: Any, n: int) -> list[Sample]:
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if not isinstance(choices, list) or len(choices) != n:
            got = len(choices) if isinstance(choices, list) else "no"
            raise Retry(f"the answer holds {got} choices, not n={n}")
        choices = sorted(choices, key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0)
        out = []
        for c in choices:
            try:
                if self.api_kind == "chat":
                    text = c["message"]["content"] or ""
                    lps = [t["logprob"] for t in (c["logprobs"] or {}).get("content") or []
                           ] if self.logprobs else []  # fmt: skip
                else:
                    text = c["text"] or ""
                    lps = list((c["logprobs"] or {}).get("token_logprobs") or []
                               ) if self.logprobs else []  # fmt: skip
            except (KeyError, TypeError, AttributeError):
                raise HarnessError(
                    f"{masked_url(self.api.base_url)} answered without token log-probabilities for "
                    f"{self.where} {self.model}; ΔSePer needs an endpoint that returns them "
                    f"(logprobs), e.g. vLLM"
                ) from None
            if self.logprobs and text.strip() and not lps:
                raise HarnessError(
                    f"{masked_url(self.api.base_url)} returned no token log-probabilities for "
                    f"{self.where} {self.model}; ΔSePer needs them; use an endpoint that "
                    f"supports logprobs (e.g. vLLM) or options.api=chat"
                )
            clean = [float(x) if x is not None else 0.0 for x in lps]
            if any(math.isnan(x) for x in clean):
                raise Retry("a token log-probability is NaN")
            out.append((text.strip(), clean))
        return out
