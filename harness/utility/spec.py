"""The settings of the retrieval-utility (ΔSePer) estimator: the generator, the NLI model, the
sampling, the prompt templates and the cache. `UtilitySpec.from_config` checks a config section
once; below it every function takes the typed spec (docs/utility.md#choices)."""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.core.errors import ConfigError, check_flag, check_int, did_you_mean

BACKENDS = ("hf", "openai", "custom")
DTYPES = ("auto", "fp32", "fp16", "bf16")
DEFAULT_GENERATOR = "Qwen/Qwen2.5-7B-Instruct"
DEFAULT_NLI = "microsoft/deberta-v2-xlarge-mnli"  # the paper's (and Kuhn et al.'s) NLI model

# The paper's prompts (its appendix D.5, from FlashRAG), passages numbered as FlashRAG does.
PROMPT = (
    "Answer the question based on the given document. Only give me the answer and do not "
    "output any other words.\n\nThe following are given documents.\n\n{passages}\n\n"
    "Question: {question}"
)
PROMPT_CLOSED = (
    "Answer the question based on your own knowledge. Only give me the answer and do not "
    "output any other words.\n\nQuestion: {question}"
)
PASSAGE = "Doc {rank}(Title: {title}) {text}"
PASSAGE_UNTITLED = "Doc {rank}: {text}"

# Options each backend reads (anything else is a typo). `custom` passes its options to the class.
HF_OPTIONS = {
    "generator": ("chat_template", "system_prompt", "trust_remote_code", "attn_implementation"),
    "nli": ("trust_remote_code", "attn_implementation", "max_length"),
}
OPENAI_OPTIONS = ("base_url", "api", "api_key_env", "max_retries", "backoff_s", "timeout_s")
OPENAI_OPTIONS += ("max_wait_s", "max_total_s", "concurrency")
# openai options that change how a request travels, never what it returns: not in identities
TRANSPORT = frozenset(OPENAI_OPTIONS) - {"base_url", "api"}
_COMMIT = re.compile(r"[0-9a-f]{40}")
_TARGET = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+")


def canonical_json(obj: Any) -> str:
    """Compact JSON with sorted keys: the text that content hashes are taken of."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class ModelSpec:
    """One model, the generator or the NLI model. `backend`: "hf" (transformers: a hub id with
    an optional `revision`, or a local folder), "openai" (generator only: an OpenAI-compatible
    endpoint that returns log-probabilities) or "custom" (`target` "pkg.module.Class", built
    with `options` as keyword arguments)."""

    backend: str
    model: str | None
    revision: str | None = None
    dtype: str = "auto"  # auto: bf16 on CUDA, fp32 on the CPU
    device: str | tuple[str, ...] = "auto"  # several: the generator keeps a copy on each
    batch_size: int = 16  # generator: sequences per generate call; NLI: pairs per forward pass
    target: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # frozen: a read-only copy, JSON-able (it goes into cache keys and results files)
        opts = dict(self.options or {})
        try:
            opts = json.loads(canonical_json(opts))
        except (TypeError, ValueError):
            raise ConfigError(
                f"model options must be JSON values (strings, numbers, booleans, lists, "
                f"mappings), got {self.options!r}"
            ) from None
        object.__setattr__(self, "options", MappingProxyType(opts))

    def __hash__(self) -> int:
        return hash(canonical_json(self.to_dict()))

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON values."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return out | {"options": dict(self.options)}

    def identity(self) -> dict[str, Any]:
        """What changes the model's outputs (not batch_size, device, transport settings)."""
        out: dict[str, Any] = {"backend": self.backend}
        if self.backend == "custom":
            out["target"] = self.target
        if self.model is not None:
            out["model"] = self.model
        if self.backend == "hf":
            out["revision"] = self.revision
            out["dtype"] = self.dtype
        opts = {k: v for k, v in self.options.items() if not _transport(self.backend, k)}
        if opts:
            out["options"] = opts
        return out

    @classmethod
    def from_config(cls, section: Any, where: str, role: str) -> ModelSpec:
        """A checked spec from a config mapping; `role` is "generator" or "nli"."""
        raw = _mapping(section, where)
        known(raw, where, ("backend", "model", "revision", "dtype", "device", "batch_size",
                            "target", "options"))  # fmt: skip
        backend = raw.get("backend", "hf")
        backends = BACKENDS if role == "generator" else ("hf", "custom")
        hint = "; openai serves the generator only" if backend == "openai" else ""
        choice(backend, backends, f"{where}.backend", hint)
        default = DEFAULT_GENERATOR if role == "generator" else DEFAULT_NLI
        model = raw.get("model", default if backend == "hf" else None)
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ConfigError(f"{where}.model must be a model id or folder, got {model!r}")
        if backend in ("hf", "openai") and model is None:
            raise ConfigError(
                f"{where}.model is required for backend {backend}; set {where}.model=<hub id, "
                f"folder or served model name>"
            )
        revision = raw.get("revision")
        if revision is not None and not isinstance(revision, str):
            raise ConfigError(
                f"{where}.revision must be a branch, tag or commit, got {revision!r}; quote a "
                f"commit hash in YAML so that it stays a string"
            )
        dtype = choice(raw.get("dtype", "auto"), DTYPES, f"{where}.dtype")
        device = raw.get("device", "auto")
        several = isinstance(device, (list, tuple)) and device and "auto" not in device
        if not (_one_device(device) or several and all(_one_device(d) for d in device)):
            raise ConfigError(
                f"{where}.device is {device!r}; use auto, cpu, cuda, cuda:N or a list such as "
                "[cuda:0,cuda:1] (the generator keeps a copy on each)"
            )
        if not isinstance(device, str):
            if backend != "hf" or role != "generator":
                what = f"backend {backend} builds its own" if backend != "hf" else "an NLI model"
                raise ConfigError(
                    f"{where}.device is a list, but {what} runs on one device; a list is for "
                    f"a transformers generator (backend hf): give one device"
                )
            device = tuple(device)
        batch_size = _int(raw, "batch_size", 16, 1, where)
        target = raw.get("target")
        if backend == "custom":
            if not isinstance(target, str) or not _TARGET.fullmatch(target):
                raise ConfigError(
                    f"{where}.target is {target!r}; backend custom needs the class to build as "
                    f"'package.module.Class', e.g. {where}.target=my_pkg.MyGenerator"
                )
        elif target is not None:
            raise ConfigError(
                f"{where}.target is set but {where}.backend is {backend}; set "
                f"{where}.backend=custom to build {target}, or remove {where}.target"
            )
        options = raw.get("options") or {}
        if not isinstance(options, Mapping):
            raise ConfigError(f"{where}.options must be a mapping, got {options!r}")
        options = _plain(options)
        allowed = {"hf": HF_OPTIONS[role], "openai": OPENAI_OPTIONS}.get(backend)
        if allowed is not None:
            known(options, f"{where}.options", allowed, "option", f" for backend {backend}")
        if backend == "hf" and options.get("trust_remote_code") and not _is_folder(model):
            if not (isinstance(revision, str) and _COMMIT.fullmatch(revision)):
                raise ConfigError(
                    f"{where}.options.trust_remote_code runs code from the hub repo of {model}, "
                    f"but {where}.revision is {revision!r}, not a commit; pin it: "
                    f"{where}.revision=<40-hex commit from https://huggingface.co/{model}/commits>"
                )
        try:
            return cls(backend, model, revision, dtype, device, batch_size, target, options)
        except ConfigError as exc:
            raise ConfigError(f"{where}.options: {exc}") from None


@dataclass(frozen=True)
class UtilitySpec:
    """Everything the ΔSePer estimator needs: the two models, N samples at `temperature` /
    `top_p` of at most `max_new_tokens` tokens, the clustering threshold τ, whether NLI reads
    "question answer" (Kuhn et al.), the prompt templates and the cache folder."""

    generator: ModelSpec
    nli: ModelSpec
    samples: int = 10  # N
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 32
    threshold: float = 0.5  # τ, for the hard (clustering) variant
    with_question: bool = True
    length_normalize: bool = True
    prompt: str = PROMPT  # {question} and {passages}
    prompt_closed: str = PROMPT_CLOSED  # {question}: the no-retrieval baseline
    passage: str = PASSAGE  # one passage: {rank}, {title}, {text}
    passage_untitled: str = PASSAGE_UNTITLED  # a passage whose chunk has no title
    seed: int = 0
    cache: Path | None = None  # None: harness.core.paths.cache_dir() / "utility"

    @classmethod
    def from_config(cls, section: Mapping | None, where: str = "utility") -> UtilitySpec:
        """A checked spec from the `utility` config section (None: every default); every bad
        value is one ConfigError naming the key, the value and the fix."""
        raw = _mapping(section, where)
        known(raw, where, tuple(f.name for f in fields(cls)))
        gen = ModelSpec.from_config(raw.get("generator"), f"{where}.generator", "generator")
        nli = ModelSpec.from_config(raw.get("nli"), f"{where}.nli", "nli")
        samples = _int(raw, "samples", 10, 1, where)
        temperature = number(raw, "temperature", 1.0, where, "> 0 (SePer samples answers)")
        top_p = number(raw, "top_p", 1.0, where, "in (0, 1]")
        max_new = _int(raw, "max_new_tokens", 32, 1, where)
        threshold = number(raw, "threshold", 0.5, where, PROBABILITY)
        flags = {
            key: check_flag(raw.get(key, True), f"{where}.{key}")
            for key in ("with_question", "length_normalize")
        }
        seed = _int(raw, "seed", 0, 0, where)
        settings = (samples, temperature, top_p, max_new, threshold, *flags.values())
        texts = prompt_templates(raw, where)
        return cls(gen, nli, *settings, **texts, seed=seed, cache=cache_folder(raw, where))

    def check(self, metrics: Sequence) -> None:
        """Nothing beyond from_config: every utility metric reads the same settings."""

    def identity(self) -> dict[str, Any]:
        """JSON-able, with sorted keys: everything that changes the numbers (not batch sizes,
        devices, the cache folder or how requests travel)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "cache"}
        out.update(generator=self.generator.identity(), nli=self.nli.identity())
        return json.loads(canonical_json(out))


def prompt_templates(raw: Mapping[str, Any], where: str) -> dict[str, str]:
    """The checked prompt templates of a section (prompt, prompt_closed, passage,
    passage_untitled), the paper's where absent."""
    templates = {
        "prompt": (PROMPT, {"question", "passages"}, {"question", "passages"}),
        "prompt_closed": (PROMPT_CLOSED, {"question"}, {"question"}),
        "passage": (PASSAGE, {"rank", "title", "text"}, {"text"}),
        "passage_untitled": (PASSAGE_UNTITLED, {"rank", "text"}, {"text"}),
    }
    return {
        key: _template(raw.get(key, default), f"{where}.{key}", allowed, needed)
        for key, (default, allowed, needed) in templates.items()
    }


def cache_folder(raw: Mapping[str, Any], where: str) -> Path | None:
    """A section's `cache` folder (None: the default under harness.core.paths.cache_dir())."""
    cache = raw.get("cache")
    if cache is not None:
        if not isinstance(cache, (str, Path)) or not str(cache).strip():
            raise ConfigError(f"{where}.cache must be a folder path or null, got {cache!r}")
        cache = Path(cache).expanduser()
    return cache


def _transport(backend: str, key: str) -> bool:
    return backend == "openai" and key in TRANSPORT


def _is_folder(model: str | None) -> bool:
    return model is not None and Path(model).expanduser().is_dir()


def _plain(value: Any) -> Any:
    """A config value (OmegaConf containers included) as plain dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [_plain(v) for v in value]
    return value


def _mapping(section: Any, where: str) -> dict[str, Any]:
    if section is None:
        return {}
    if not isinstance(section, Mapping):
        raise ConfigError(f"{where} must be a mapping of settings, got {section!r}")
    return _plain(section)


def known(
    raw: Mapping[str, Any], where: str, valid: Sequence[str], what: str = "setting", after=""
) -> None:
    for key in raw:
        if key not in valid:
            raise ConfigError(
                f"unknown {what} {where}.{key}{after}{did_you_mean(key, valid)}; valid: "
                f"{', '.join(valid)}"
            )


def choice(value: Any, valid: Sequence[str], key: str, hint: str = "") -> Any:
    """`value` when it is one of `valid`; else a ConfigError with a did-you-mean."""
    if value not in valid:
        raise ConfigError(
            f"{key} is {value!r}{did_you_mean(str(value), valid)}; valid: {', '.join(valid)}{hint}"
        )
    return value


def _int(raw: Mapping[str, Any], key: str, default: int, low: int, where: str) -> int:
    return check_int(raw.get(key, default), f"{where}.{key}", low)


# the ranges number() checks, as its messages name them
_RANGES = {
    "> 0": lambda x: x > 0,
    ">= 0": lambda x: x >= 0,
    "in (0, 1]": lambda x: 0 < x <= 1,
    "in [0, 1]": lambda x: 0 <= x <= 1,
}
PROBABILITY = "in [0, 1] (an entailment probability)"


def number(raw: Mapping[str, Any], key: str, default: float, where: str, need: str) -> float:
    """A number setting in the range `need` names (it starts with a key of _RANGES)."""
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ConfigError(f"{where}.{key} must be a number, got {value!r}")
    value = float(value)
    if not next(ok for r, ok in _RANGES.items() if need.startswith(r))(value):
        raise ConfigError(f"{where}.{key} must be {need}, got {value!r}")
    return value


def _template(text: Any, where: str, allowed: set[str], needed: set[str]) -> str:
    """A str.format template whose fields are among `allowed` and include `needed`."""
    if not isinstance(text, str):
        raise ConfigError(f"{where} must be a text template, got {text!r}")
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
    except ValueError as exc:
        raise ConfigError(
            f"{where} is not a valid template ({exc}); write literal braces as {{{{ and }}}}"
        ) from None
    bad = sorted(fields - allowed)
    if bad:
        raise ConfigError(
            f"{where} uses {{{bad[0]}}}, which it cannot fill; its fields: "
            f"{', '.join('{' + f + '}' for f in sorted(allowed))} (literal braces: {{{{ }}}})"
        )
    missing = sorted(needed - fields)
    if missing:
        raise ConfigError(f"{where} lacks {{{missing[0]}}}; add it to the template")
    return text


def _one_device(d: Any) -> bool:
    return isinstance(d, str) and bool(d in ("auto", "cpu", "cuda") or re.fullmatch(r"cuda:\d+", d))


def section_difference(a: Mapping | None, b: Mapping | None, read, where: str) -> str:
    """'' when two sections give the same identity (read(section).identity()), else the first
    setting that differs, as 'where.key: A vs B' (a section `read` refuses, e.g. holding a
    model object of the Python API, compares as it is written)."""

    def ident(section: Mapping | None) -> Any:
        if section is None:
            return None
        try:
            return read(section).identity()
        except ConfigError:  # the cache folder never changes the numbers
            plain = {k: v for k, v in _plain(section).items() if k != "cache"}
            return json.loads(canonical_json(plain))

    left, right = ident(a), ident(b)
    return "" if left == right else _first_difference(left, right, where)


def _first_difference(a: Any, b: Any, where: str) -> str:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{where}.{key}")
    return f"{where}: {_short(a)} vs {_short(b)}"


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False) if value is not None else "none"
    return text if len(text) <= 40 else text[:37] + "..."
