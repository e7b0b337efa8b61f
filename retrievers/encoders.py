"""Sentence-transformers encoders: model resolution, device and dtype choice, prompts, and
batch halving on GPU out-of-memory. torch and sentence-transformers are imported only when a
model is actually loaded, so a run whose embeddings are all cached never imports them."""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import ConfigError, HarnessError

log = logging.getLogger("harness.retrievers")

DTYPES = ("auto", "fp32", "fp16", "bf16")

_INSTALL = "pip install torch==2.13.0 sentence-transformers  (or: pip install -e '.[dense]')"


def parse_devices(device: Any) -> list[str]:
    """`auto`, `cpu`, `cuda`, `cuda:N` or a list of them -> a non-empty list of device names."""
    items = list(device) if isinstance(device, (list, tuple)) else [device]
    if not items:
        raise ConfigError("device list is empty; use device=auto, cpu, cuda, cuda:N or [cuda:0,…]")
    out = []
    for d in items:
        d = str(d)
        ok = d in ("auto", "cpu", "cuda") or (d.startswith("cuda:") and d[5:].isdigit())
        if not ok:
            raise ConfigError(
                f"unknown device '{d}'; use device=auto, cpu, cuda, cuda:N or [cuda:0,cuda:1]"
            )
        out.append(d)
    if "auto" in out and len(out) > 1:
        raise ConfigError(f"device 'auto' cannot be part of a list, got {out}")
    return out


def _has_nvidia() -> bool:
    """Cheap check before importing torch: without an NVIDIA device node there is no CUDA."""
    return any(Path("/dev").glob("nvidia[0-9]*"))


def resolve_devices(device: Any) -> list[str]:
    """Concrete devices: `auto` is cuda:0 when a CUDA GPU is usable, else cpu."""
    devices = parse_devices(device)
    if devices == ["auto"]:
        if not _has_nvidia():
            return ["cpu"]
        import torch

        return ["cuda:0"] if torch.cuda.is_available() else ["cpu"]
    return ["cuda:0" if d == "cuda" else d for d in devices]


def resolve_dtype(dtype: str, devices: Sequence[str]) -> str:
    """`auto` = bf16 on a GPU that supports it, fp16 on another GPU, fp32 on the CPU."""
    if dtype not in DTYPES:
        raise ConfigError(f"unknown retriever.dtype '{dtype}'; valid: {', '.join(DTYPES)}")
    if dtype != "auto":
        return dtype
    if devices[0] == "cpu":
        return "fp32"
    import torch

    return "bf16" if torch.cuda.is_bf16_supported() else "fp16"


def resolve_model_path(model: str, local_path: str | None, package: str | None) -> str:
    """Where to load weights from: an explicit local path, a Python package that ships the
    weights (its get_model_path()), else the Hugging Face id itself (cache or hub)."""
    if local_path:
        p = Path(local_path).expanduser()
        if not p.is_dir():
            raise ConfigError(
                f"retriever.local_path '{local_path}' is not a folder; point it at a "
                f"downloaded copy of {model} (the folder holding config.json)"
            )
        return str(p.resolve())
    if package:
        try:
            mod = importlib.import_module(package.replace("-", "_"))
        except ImportError:
            raise HarnessError(
                f"model {model} is resolved from the Python package '{package}', which is not "
                f"installed; run: pip install {package.replace('_', '-')}"
            ) from None
        return str(mod.get_model_path())
    return model


class SentenceTransformerEncoder:
    """Encode texts with one sentence-transformers model on one or more devices."""

    kind = "sentence-transformers"

    def __init__(
        self,
        *,
        model: str,
        revision: str | None = None,
        local_path: str | None = None,
        package: str | None = None,
        query_prompt: str | None = None,
        query_prompt_name: str | None = None,
        document_prompt: str | None = None,
        document_prompt_name: str | None = None,
        max_seq_length: int | None = None,
        normalize: bool = True,
        dtype: str = "auto",
        batch_size: int = 32,
        trust_remote_code: bool = False,
        model_kwargs: dict[str, Any] | None = None,
        device: Any = "auto",
    ):
        if not isinstance(trust_remote_code, bool):
            raise ConfigError(
                f"retriever.trust_remote_code must be true or false, got {trust_remote_code!r}"
            )
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(
                f"retriever.batch_size must be a positive integer, got {batch_size!r}"
            )
        if max_seq_length is not None and (
            not isinstance(max_seq_length, int) or max_seq_length < 1
        ):
            raise ConfigError(
                f"retriever.max_seq_length must be a positive integer, got {max_seq_length!r}"
            )
        if query_prompt is not None and query_prompt_name is not None:
            raise ConfigError("set retriever.query_prompt or retriever.query_prompt_name, not both")
        if document_prompt is not None and document_prompt_name is not None:
            raise ConfigError(
                "set retriever.document_prompt or retriever.document_prompt_name, not both"
            )
        if dtype not in DTYPES:
            raise ConfigError(f"unknown retriever.dtype '{dtype}'; valid: {', '.join(DTYPES)}")
        self.model_id = model
        self.revision = revision
        self.path = resolve_model_path(model, local_path, package)
        self.package = package
        self.prompts = {
            "query": (query_prompt, query_prompt_name),
            "document": (document_prompt, document_prompt_name),
        }
        self.max_seq_length = max_seq_length
        self.normalize = bool(normalize)
        self.batch_size = batch_size
        self.trust_remote_code = trust_remote_code
        self.model_kwargs = dict(model_kwargs or {})
        self.devices = resolve_devices(device)
        self.dtype = resolve_dtype(dtype, self.devices)
        self._model = None

    def identity(self, role: str) -> dict[str, Any]:
        """Everything that determines an embedding of `role` (query/document) besides the text."""
        prompt, prompt_name = self.prompts[role]
        revision = self.revision
        if self.package:
            revision = f"package {self.package}=={_package_version(self.package)}"
        elif self.path != self.model_id:
            revision = f"local {self.path}"
        return {
            "encoder": self.kind,
            "model": self.model_id,
            "revision": revision,
            "prompt": prompt,
            "prompt_name": prompt_name,
            "max_seq_length": self.max_seq_length,
            "dtype": self.dtype,
            "normalize": self.normalize,
            "model_kwargs": self.model_kwargs,
        }

    def _load(self):
        if self._model is not None:
            return self._model
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise HarnessError(
                f"dense retrievers need torch and sentence-transformers; run: {_INSTALL}"
            ) from None
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Loading weights" bars: noise in logs and tables
        kwargs = dict(self.model_kwargs)
        kwargs["dtype"] = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[
            self.dtype
        ]
        try:
            model = SentenceTransformer(
                self.path,
                device=self.devices[0],
                revision=self.revision if self.path == self.model_id else None,
                trust_remote_code=self.trust_remote_code,
                model_kwargs=kwargs,
            )
        except OSError as exc:
            if self.path != self.model_id:
                raise HarnessError(
                    f"cannot load model {self.model_id} from {self.path}: {_first_line(exc)}"
                ) from None
            offline = os.environ.get("HF_HUB_OFFLINE") == "1"
            raise HarnessError(
                f"model {self.model_id}{f' (revision {self.revision})' if self.revision else ''} "
                f"is not available {'offline' if offline else 'here'}: it is not in the Hugging "
                f"Face cache and the hub could not be reached; download it where there is internet "
                f"(hf download {self.model_id}) and copy the cache, or set "
                f"retriever.local_path=/path/to/model"
            ) from None
        if self.max_seq_length:
            model.max_seq_length = self.max_seq_length
        for role, (_, name) in self.prompts.items():
            if name is not None and name not in (model.prompts or {}):
                have = ", ".join(sorted(model.prompts or {})) or "none"
                raise ConfigError(
                    f"model {self.model_id} has no prompt named '{name}' (for {role}s); "
                    f"its prompts: {have}; fix retriever.{role}_prompt_name"
                )
        self._model = model
        return model

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        """float32 embeddings, one row per text; halves the batch and retries on GPU OOM."""
        model = self._load()
        prompt, prompt_name = self.prompts[role]
        while True:
            try:
                out = model.encode(
                    list(texts),
                    prompt=prompt,
                    prompt_name=prompt_name,
                    batch_size=self.batch_size,
                    show_progress_bar=False,
                    normalize_embeddings=self.normalize,
                    convert_to_numpy=True,
                    device=self.devices if len(self.devices) > 1 else None,
                )
                return np.ascontiguousarray(out, dtype=np.float32)
            except Exception as exc:
                if not _is_oom(exc) or self.batch_size == 1:
                    raise
                import torch

                torch.cuda.empty_cache()
                smaller = self.batch_size // 2
                log.info(
                    f"{self.model_id}: out of GPU memory at batch size {self.batch_size}; "
                    f"retrying with {smaller}"
                )
                self.batch_size = smaller


def _is_oom(exc: BaseException) -> bool:
    name = type(exc).__name__
    return name == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def _package_version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package.replace("_", "-"))
    except PackageNotFoundError:
        return "unknown"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
