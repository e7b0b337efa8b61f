"""Transformers models for the utility estimator: a causal LM that samples answers with their
token log-probabilities, and a sequence-classification NLI model (docs/utility.md#choices).

Sampling is done by our own logits processor inside `generate` (greedy decoding over a
distribution we collapse onto the token we drew): every sequence draws its uniforms from its
own random stream, seeded by (prompt seed, sample index), so a prompt's answer texts do not
depend on which other prompts share its batch (their log-probabilities can, in the last digits:
padding changes the shapes, hence the rounding, of the arithmetic), and the log-probability
recorded is exactly that of the distribution the token was drawn from (temperature, then
nucleus). A prompt that, with its answer, would not fit the model's context is refused before
anything is drawn. torch and transformers are imported only when a model is loaded."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError, HarnessError, check_flag, check_int
from harness.utility.protocols import Sample
from harness.utility.spec import ModelSpec
from retrievers.encoders import (
    _TORCH_DTYPES,
    _dtype_keyword,
    halved_on_oom,
    resolve_devices,
    resolve_dtype,
)
from retrievers.model_source import first_line, folder_stamp, load_from_hub, quiet_third_party

log = logging.getLogger("harness.utility")

_INSTALL = "pip install torch==2.13.0 transformers  (or: pip install -e '.[dense]')"
_NO_LIMIT = 10_000_000  # a tokenizer that knows no limit says int(1e30)


def _positive_int(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 < value < _NO_LIMIT
    return value if ok else None


def context_limit(config: Any, tokenizer: Any) -> int | None:
    """The most tokens (prompt and answer together) a causal LM reads: its config's
    max_position_embeddings, stretched by a rope scaling factor (factor x the original length,
    when larger), else the tokenizer's model_max_length when that is a real number; None when
    neither says."""
    get_text = getattr(config, "get_text_config", None)
    text = get_text() if callable(get_text) else config  # a multimodal model's language part
    limit = _positive_int(getattr(text, "max_position_embeddings", None))
    rope = getattr(text, "rope_parameters", None) or getattr(text, "rope_scaling", None)
    if limit is not None and isinstance(rope, dict):
        factor = rope.get("factor")
        base = _positive_int(rope.get("original_max_position_embeddings")) or limit
        if isinstance(factor, (int, float)) and not isinstance(factor, bool) and factor > 1:
            limit = max(limit, int(base * factor))
    if limit is None:
        limit = _positive_int(getattr(tokenizer, "model_max_length", None))
    return limit


def _folder(spec: ModelSpec) -> Path | None:
    path = Path(str(spec.model)).expanduser()
    return path.resolve() if path.is_dir() else None


def resolved(spec: ModelSpec) -> tuple[list[str], str]:
    """(devices, dtype) the spec asks for, with auto made concrete."""
    devices = resolve_devices(spec.device)
    return devices, resolve_dtype(spec.dtype, devices)


def hf_identity(spec: ModelSpec) -> dict[str, Any]:
    """The spec's identity with the dtype resolved and, for a folder, its absolute path and a
    stamp of its files (names, sizes, modification times): weights saved again in the same
    folder (a fine-tuning checkpoint) are another model, and nothing cached for the old ones
    is read for them. Hashing the weights would cost minutes for a 7B model; a copied folder
    only costs a recomputation."""
    out = spec.identity()
    out["dtype"] = resolved(spec)[1]
    folder = _folder(spec)
    if folder is not None:
        out["path"] = str(folder)
        out["files"] = folder_stamp(folder)
    return out


def _reword(exc: HarnessError, where: str) -> HarnessError:
    """model_source's messages name the retriever's keys; name ours."""
    text = str(exc)
    for old, new in (
        ("retriever.local_path=/path/to/model", f"{where}.model=/path/to/model-folder"),
        ("retriever.model", f"{where}.model"),
        ("retriever.revision", f"{where}.revision"),
    ):
        text = text.replace(old, new)
    return type(exc)(text)


class _HFModel:
    """Loading shared by the generator and the NLI model: folder or hub id (through the cache,
    one quick hub probe, one-line errors offline), device and dtype."""

    auto_class = ""
    data_parallel = False  # a model copy on each device of spec.device; else the first only

    def __init__(self, spec: ModelSpec, where: str):
        self.spec, self.where = spec, where
        self.devices, self.dtype = resolved(spec)
        self.device = self.devices[0]
        self.folder = _folder(spec)
        model = str(spec.model)
        if self.folder is None and (model.startswith(("/", "./", "../", "~")) or "\\" in model):
            raise ConfigError(
                f"{where}.model is {model!r}, which is no folder; give a model folder that "
                "exists, or a hub id such as org/name"
            )
        self.batch_size = spec.batch_size
        opts = dict(spec.options)
        trust = opts.get("trust_remote_code", False)
        self.trust_remote_code = check_flag(trust, f"{where}.options.trust_remote_code")
        self.attn = opts.get("attn_implementation")  # None: transformers' default (SDPA)
        self.options = opts
        self._model: Any = None
        self._tok: Any = None
        self.replicas: list[tuple[Any, str]] = []  # (model, device), once loaded

    def identity(self) -> dict[str, Any]:
        return hf_identity(self.spec)

    def _load(self) -> tuple[Any, Any]:
        if self._model is not None:
            return self._model, self._tok
        import importlib.util

        if not all(importlib.util.find_spec(m) for m in ("torch", "transformers")):
            raise HarnessError(
                f"{self.where} (backend hf) needs torch and transformers; run: {_INSTALL}"
            )
        with quiet_third_party():
            self._tok, self._model = self._open()
        if self.data_parallel:  # a copy per further device, made on the CPU, one at a time
            import copy

            for device in self.devices[1:]:
                self.replicas.append((copy.deepcopy(self._model).to(device).eval(), device))
        self._model.to(self.device).eval()
        self.replicas.insert(0, (self._model, self.device))
        self._prepare()
        return self._model, self._tok

    def _prepare(self) -> None:
        """Set up the loaded model (subclasses)."""

    def _open(self) -> tuple[Any, Any]:
        if self.folder is not None:
            try:
                return self._construct(str(self.folder), False)
            except (OSError, ValueError) as exc:
                raise HarnessError(
                    f"cannot load {self.where}.model from {self.folder}: {first_line(exc)}; "
                    f"point {self.where}.model at a folder holding config.json and the weights"
                ) from None
        model = str(self.spec.model)
        construct = partial(self._construct, model)
        try:
            return load_from_hub(model, self.spec.revision, construct, self._hub_error)
        except HarnessError as exc:
            raise _reword(exc, self.where) from None

    def _construct(self, source: str, local_only: bool) -> tuple[Any, Any]:
        import torch
        import transformers
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hub = self.folder is None
        common = {
            "revision": self.spec.revision if hub else None,
            "local_files_only": local_only,
            "trust_remote_code": self.trust_remote_code,
        }
        tok = transformers.AutoTokenizer.from_pretrained(source, **common)
        kwargs = dict(common)
        kwargs[_dtype_keyword()] = getattr(torch, _TORCH_DTYPES[self.dtype])
        if self.attn:
            kwargs["attn_implementation"] = self.attn
        model = getattr(transformers, self.auto_class).from_pretrained(source, **kwargs)
        return tok, model

    def _hub_error(self, exc: BaseException) -> HarnessError:
        rev = f" (revision {self.spec.revision})" if self.spec.revision else ""
        return HarnessError(
            f"cannot load {self.where}.model {self.spec.model}{rev} from the Hugging Face hub "
            f"or cache: {first_line(exc)}; fix the cause, or set {self.where}.model to a "
            f"folder holding the model"
        )

    def _in_batches(self, order: list[int], per_batch, work, what: str, out: list) -> list:
        """out[i] for i in `order`, from work(group) over consecutive groups of per_batch(the
        batch size) items, the batch halved on GPU out-of-memory."""
        start = 0
        while start < len(order):
            group = order[start : start + per_batch(self.batch_size)]
            try:
                results = work(group)
            except Exception as exc:
                self.batch_size = halved_on_oom(exc, self.batch_size)
                log.info(
                    f"{self.spec.model}: out of GPU memory {what}; retrying with batch size "
                    f"{self.batch_size}"
                )
                continue
            for i, r in zip(group, results):
                out[i] = r
            start += len(group)
        return out


class HFGenerator(_HFModel):
    """A causal LM. The prompt goes through the tokenizer's chat template as one user turn
    when it has one (`options.chat_template`: auto, true, false; `options.system_prompt` adds a
    system turn). `batch_size` = sequences per generate call (whole prompts of N each). With
    several devices (`device: [cuda:0, cuda:1]`) each holds a copy of the model and answers
    its share of the prompts, in a thread of its own (data parallel, as encoding is)."""

    auto_class = "AutoModelForCausalLM"
    data_parallel = True

    def __init__(self, spec: ModelSpec, where: str = "utility.generator"):
        super().__init__(spec, where)
        self.chat_template = self.options.get("chat_template", "auto")
        if self.chat_template not in ("auto", True, False):
            raise ConfigError(
                f"{where}.options.chat_template must be auto, true or false, got "
                f"{self.chat_template!r}"
            )
        self.system_prompt = self.options.get("system_prompt")
        if self.system_prompt is not None and not isinstance(self.system_prompt, str):
            raise ConfigError(
                f"{where}.options.system_prompt must be a text, got {self.system_prompt!r}"
            )
        self.eos: list[int] = []
        self.pad = 0
        self.context: int | None = None  # tokens the model reads (prompt + answer); None: unknown

    def _prepare(self) -> None:
        from transformers import GenerationConfig

        model, tok = self._model, self._tok
        gc = model.generation_config
        eos = gc.eos_token_id
        if eos is None:
            eos = model.config.eos_token_id if hasattr(model.config, "eos_token_id") else None
        if eos is None:
            eos = tok.eos_token_id
        self.eos = [] if eos is None else ([eos] if isinstance(eos, int) else list(eos))
        pad = tok.pad_token_id if tok.pad_token_id is not None else gc.pad_token_id
        self.pad = pad if pad is not None else (self.eos[0] if self.eos else 0)
        self.context = context_limit(model.config, tok)
        import inspect

        # read once: the prefill and generate() look up what the model's forward takes
        self.forward_params = frozenset(inspect.signature(model.forward).parameters)
        # transformers 5 names the key/value cache `cache`; earlier ones `past_key_values`
        self.cache_keyword = "cache" if "cache" in self.forward_params else "past_key_values"
        # A clean generation config: the model's own defaults (repetition penalty, top-k, ...)
        # would otherwise reshape the distribution our sampler draws from.
        model.generation_config = GenerationConfig(
            eos_token_id=self.eos or None, pad_token_id=self.pad, bos_token_id=gc.bos_token_id
        )
        if self.chat_template is True and not getattr(tok, "chat_template", None):
            raise ConfigError(
                f"{self.where}.options.chat_template is true but the tokenizer of "
                f"{self.spec.model} has no chat template; set it to auto or false"
            )

    def encode(self, prompt: str) -> list[int]:
        """The prompt's token ids: through the chat template when used, else plain."""
        tok = self._tok
        use = self.chat_template is True or (
            self.chat_template == "auto" and bool(getattr(tok, "chat_template", None))
        )
        if not use:
            return list(tok(prompt)["input_ids"])
        messages = [{"role": "user", "content": prompt}]
        if self.system_prompt:
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return list(tok(text, add_special_tokens=False)["input_ids"])

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
        self._load()
        encoded = [self.encode(p) for p in prompts]
        self.check_context([len(e) for e in encoded], max_new_tokens)
        # longest first: similar lengths share a batch (less padding); the order does not
        # change any answer, each sequence having its own random stream
        order = sorted(range(len(prompts)), key=lambda i: -len(encoded[i]))

        def work(replica: tuple[Any, str], group: list[int]) -> list[list[Sample]]:
            texts, group_seeds = [encoded[i] for i in group], [seeds[i] for i in group]
            got = self._draw(replica, texts, group_seeds, n, temperature, top_p, max_new_tokens)
            return [[(self.decode(t), lps) for t, lps in s] for s in got]

        out: list[list[Sample]] = [[] for _ in prompts]
        per_batch = lambda size: max(1, size // n)  # noqa: E731 -- whole prompts of n each
        what = "while generating"
        if len(self.replicas) == 1:
            return self._in_batches(order, per_batch, partial(work, self.replicas[0]), what, out)
        # every device takes every D-th prompt of the longest-first order: similar loads
        from concurrent.futures import ThreadPoolExecutor

        width = len(self.replicas)
        with ThreadPoolExecutor(width, thread_name_prefix="generate") as pool:
            jobs = [
                pool.submit(self._in_batches, order[d::width], per_batch,
                            partial(work, self.replicas[d]), what, out)
                for d in range(width)
            ]  # fmt: skip
            for job in jobs:
                job.result()  # a device's error is raised here
        return out

    def check_context(self, lengths: Sequence[int], max_new_tokens: int) -> None:
        """Refuse prompts that, with max_new_tokens answer tokens, exceed the model's context:
        past it, absolute position embeddings fail deep inside the model, and rotary ones
        quietly degrade."""
        longest = max(lengths, default=0)
        if self.context is None or longest + max_new_tokens <= self.context:
            return
        root = self.where.rpartition(".")[0] or "utility"
        needs = f"{longest + max_new_tokens}"
        if self.where.endswith("judge_model"):  # its prompt holds no passage, its budget fixed
            raise ConfigError(
                f"a verdict prompt for {self.where}.model {self.spec.model} (the question, the "
                f"references and an answer) is {longest} tokens and with its {max_new_tokens}-"
                f"token reply needs {needs}, but the model reads at most {self.context}; use a "
                f"judge model with a longer context (or a lower {root}.max_new_tokens: shorter "
                "answers)"
            )
        shorter = "" if longest >= self.context else f" or {root}.max_new_tokens"
        raise ConfigError(
            f"a prompt for {self.where}.model {self.spec.model} is {longest} tokens, and with "
            f"{root}.max_new_tokens={max_new_tokens} needs {needs}, but the model reads at most "
            f"{self.context}; lower the K in metrics.k (fewer passages, where the prompt holds "
            f"them){shorter}, or use a generator with a longer context"
        )

    def _draw(
        self,
        replica: tuple[Any, str],
        token_lists: list[list[int]],
        seeds: list[int],
        n: int,
        temperature: float,
        top_p: float,
        max_new_tokens: int,
    ) -> list[list[tuple[list[int], list[float]]]]:
        """`n` samples per prompt (token ids): each sample's tokens up to and including the
        end token, and their log-probabilities."""
        import torch
        from transformers import LogitsProcessorList

        model, device = replica
        streams = [(seed, j) for seed in seeds for j in range(n)]
        width = max(len(r) for r in token_lists)
        ids = torch.full((len(token_lists), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(token_lists), width), dtype=torch.long)
        for b, r in enumerate(token_lists):  # left padding: prompts end where answers start
            ids[b, width - len(r) :] = torch.tensor(r, dtype=torch.long)
            mask[b, width - len(r) :] = 1
        ids, mask = ids.to(device), mask.to(device)
        sampler = make_sampler(streams, temperature, top_p)
        with torch.inference_mode():
            cache = self._prefill(model, ids, mask, n)
            seqs = model.generate(
                input_ids=ids.repeat_interleave(n, 0),
                attention_mask=mask.repeat_interleave(n, 0),
                do_sample=False,  # our processor draws; greedy then takes the drawn token
                max_new_tokens=max_new_tokens,
                logits_processor=LogitsProcessorList([sampler]),
                **({} if cache is None else {self.cache_keyword: cache}),
            )
        drawn: list[tuple[list[int], list[float]]] = []
        for b, toks in enumerate(seqs[:, width:].tolist()):
            kept: list[int] = []
            lps: list[float] = []
            for step, t in enumerate(toks):
                if t != sampler.chosen[step][b]:
                    raise HarnessError(
                        f"{self.spec.model}: generate() emitted token {t} where the sampler "
                        f"drew {sampler.chosen[step][b]}; this transformers version changes "
                        f"tokens after logits processors; report it with its version"
                    )
                kept.append(t)
                lps.append(sampler.logprobs[step][b])
                if t in self.eos:  # the end token is part of the answer's probability
                    break
            drawn.append((kept, lps))
        return [drawn[i * n : (i + 1) * n] for i in range(len(token_lists))]

    def _prefill(self, model: Any, ids: Any, mask: Any, n: int) -> Any:
        """The key/value cache of each prompt but its last token, computed once and repeated
        for its n samples: a RAG prompt is long and its answers short, so this saves most of
        the work of n separate prefills. None where the model's cache cannot be repeated
        (generate then prefills each sequence itself)."""
        if ids.shape[1] < 2:
            return None
        kwargs: dict[str, Any] = {}
        params = self.forward_params  # every replica is the same model
        if "logits_to_keep" in params:  # the prefill's logits are not used: keep one
            kwargs["logits_to_keep"] = 1
        if "position_ids" in params:  # as generate() makes them from the mask
            kwargs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0)[:, :-1]
        out = model(input_ids=ids[:, :-1], attention_mask=mask[:, :-1], use_cache=True, **kwargs)
        cache = getattr(out, self.cache_keyword, None)
        if cache is None or not callable(getattr(cache, "batch_repeat_interleave", None)):
            return None
        if n > 1:
            cache.batch_repeat_interleave(n)
        return cache

    def decode(self, tokens: list[int]) -> str:
        """An answer's text: its tokens without the end token, special tokens dropped."""
        body = tokens[:-1] if tokens and tokens[-1] in self.eos else tokens
        return self._tok.decode(body, skip_special_tokens=True).strip()


def make_sampler(streams: Sequence[tuple[int, int]], temperature: float, top_p: float) -> Any:
    """A logits processor that draws one token per row from softmax(logits / temperature)
    restricted to the nucleus (the smallest set of most probable tokens whose mass reaches
    top_p), by inverse CDF with a uniform from the row's own stream (numpy PCG64 seeded by
    (seed, sample index)); temperature 0 takes the most probable token (greedy decoding). It
    records each drawn token and its log-probability under that distribution (the model's,
    when greedy), and returns scores that make greedy decoding pick the drawn token."""
    import numpy as np
    import torch
    from transformers import LogitsProcessor

    class Sampler(LogitsProcessor):
        def __init__(self) -> None:
            self.rngs = [np.random.Generator(np.random.PCG64([s, j])) for s, j in streams]
            self.chosen: list[list[int]] = []
            self.logprobs: list[list[float]] = []

        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
            if temperature == 0:  # greedy: the most probable token, with the model's log-prob
                logp = torch.log_softmax(scores.float(), dim=-1).double()
                token = logp.argmax(-1, keepdim=True)
                return self._chose(scores, token, logp.gather(1, token))
            logp = torch.log_softmax(scores.float() / temperature, dim=-1).double()
            u = torch.tensor([g.random() for g in self.rngs], dtype=torch.float64)
            u = u.to(scores.device).unsqueeze(1)
            if top_p < 1.0:
                logp, order = torch.sort(logp, dim=-1, descending=True, stable=True)
            else:
                order = None
            probs = logp.exp()
            if order is not None:
                before = probs.cumsum(-1) - probs
                keep = before < top_p
                keep[:, 0] = True
                probs = probs * keep
            cum = probs.cumsum(-1)
            mass = cum[:, -1:]
            pos = torch.searchsorted(cum, u * mass, right=True)
            # never past the last token of positive probability (float rounding at u -> 1)
            positive = probs > 0
            last = probs.shape[1] - 1 - torch.flip(positive, dims=[1]).int().argmax(-1, True)
            pos = torch.minimum(pos, last)
            lp = logp.gather(1, pos) - mass.log()
            token = pos if order is None else order.gather(1, pos)
            return self._chose(scores, token, lp)

        def _chose(self, scores: torch.Tensor, token: torch.Tensor, lp: torch.Tensor):
            self.chosen.append(token.squeeze(1).tolist())
            self.logprobs.append(lp.squeeze(1).tolist())
            out = torch.full_like(scores, -math.inf)
            return out.scatter_(1, token, 0.0)

    return Sampler()


class HFNLI(_HFModel):
    """A sequence-classification NLI model (premise, hypothesis) -> P(entailment); the
    entailment label is found in config.id2label (the one starting with "entail", any case).
    `batch_size` = pairs per forward pass; `options.max_length` truncates long pairs."""

    auto_class = "AutoModelForSequenceClassification"

    def __init__(self, spec: ModelSpec, where: str = "utility.nli"):
        super().__init__(spec, where)
        self.max_length = self.options.get("max_length")
        if self.max_length is not None:
            check_int(self.max_length, f"{where}.options.max_length", 8)
        self.label = -1

    def _prepare(self) -> None:
        labels = {int(k): str(v) for k, v in (self._model.config.id2label or {}).items()}
        hits = [i for i, name in sorted(labels.items()) if name.lower().startswith("entail")]
        if len(hits) != 1:
            raise ConfigError(
                f"{self.where}.model {self.spec.model} has no single entailment label (its "
                f"labels: {', '.join(labels.values()) or 'none'}); use an NLI model whose "
                f"config.id2label names one label 'entailment'"
            )
        self.label = hits[0]
        if self.max_length is None:
            limits = [
                getattr(self._tok, "model_max_length", None),
                getattr(self._model.config, "max_position_embeddings", None),
            ]
            usable = [x for x in limits if isinstance(x, int) and 0 < x < 100_000]
            self.max_length = min(usable) if usable else 512

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        self._load()
        order = sorted(range(len(pairs)), key=lambda i: -len(pairs[i][0]) - len(pairs[i][1]))
        work = lambda group: self._forward([pairs[i] for i in group])  # noqa: E731
        return self._in_batches(order, lambda size: size, work, "in NLI", [0.0] * len(pairs))

    def _forward(self, pairs: list[tuple[str, str]]) -> list[float]:
        import torch

        batch = self._tok(
            [p for p, _ in pairs],
            [h for _, h in pairs],
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        ).to(self.device)
        with torch.inference_mode():
            logits = self._model(**batch).logits.float()
        return torch.softmax(logits, dim=-1)[:, self.label].double().tolist()
