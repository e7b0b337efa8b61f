"""Sentence-transformers encoders: model resolution, device and dtype choice, prompts, the
encode API (`encode`, or `encode_query` / `encode_document`) and a task, and batch halving on
GPU out-of-memory. torch and sentence-transformers are imported only when a
model is actually loaded, so a run whose embeddings are all cached never imports them."""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import POSITIVE, ConfigError, HarnessError, check_flag, check_int
from retrievers.model_source import (
    check_holds,
    first_line,
    folder_stamp,
    load_from_hub,
    quiet_third_party,
    require_pinned_revision,
    resolve_package,
)

log = logging.getLogger("harness.retrievers")

DTYPES = ("auto", "fp32", "fp16", "bf16")
# encode: model.encode with each side's prompt; query_document: model.encode_query and
# model.encode_document (sentence-transformers >= 5), which pick the model's own query and
# document prompts when none is given and pass task="query" / "document" to the model
ENCODE_APIS = ("encode", "query_document")

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
    devices = ["cuda:0" if d == "cuda" else d for d in devices]
    cuda = [d for d in devices if d.startswith("cuda")]
    if cuda:
        _check_cuda(cuda)
    return devices


def _check_cuda(devices: Sequence[str]) -> None:
    """device=cuda[:N] asked for: say plainly when this torch cannot give it."""
    import torch

    if torch.version.cuda is None:
        raise ConfigError(
            f"device={devices[0]} but this torch {torch.__version__} is a CPU-only build; use "
            f"device=cpu (or auto), or install a CUDA build of torch: pip install torch "
            f"--index-url https://download.pytorch.org/whl/cu128"
        )
    if not torch.cuda.is_available():
        raise ConfigError(
            f"device={devices[0]} but no CUDA GPU is usable here (torch {torch.__version__}, "
            f"CUDA {torch.version.cuda}); check nvidia-smi and CUDA_VISIBLE_DEVICES, or use "
            f"device=cpu"
        )
    count = torch.cuda.device_count()
    missing = [d for d in devices if ":" in d and int(d.split(":")[1]) >= count]
    if missing:
        raise ConfigError(
            f"device={missing[0]} but this machine has {count} CUDA GPU(s) (cuda:0.."
            f"cuda:{count - 1}); pick one of those"
        )


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
    weights (its get_model_path()), else the Hugging Face id itself (cache or hub). A folder
    or package whose files name another model than `model` is refused."""
    if local_path:
        p = Path(local_path).expanduser()
        if not p.is_dir():
            raise ConfigError(
                f"retriever.local_path '{local_path}' is not a folder; point it at a "
                f"downloaded copy of {model} (the folder holding config.json)"
            )
        check_holds(model, p)
        return str(p.resolve())
    if package:
        return str(resolve_package(model, package))
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
        encode_api: str = "encode",
        task: str | None = None,
        device: Any = "auto",
    ):
        check_flag(trust_remote_code, "retriever.trust_remote_code")
        batch_size = check_int(batch_size, "retriever.batch_size", what=POSITIVE)
        if max_seq_length is not None:
            max_seq_length = check_int(max_seq_length, "retriever.max_seq_length", what=POSITIVE)
        self.prompts = {
            "query": (query_prompt, query_prompt_name),
            "document": (document_prompt, document_prompt_name),
        }
        for role, (text, name) in self.prompts.items():
            if text is not None and name is not None:
                raise ConfigError(
                    f"set retriever.{role}_prompt or retriever.{role}_prompt_name, not both"
                )
        if dtype not in DTYPES:
            raise ConfigError(f"unknown retriever.dtype '{dtype}'; valid: {', '.join(DTYPES)}")
        _check_api(encode_api, task)
        for key in ("dtype", "torch_dtype"):
            if key in (model_kwargs or {}):
                raise ConfigError(
                    f"retriever.model_kwargs.{key} sets the weights' dtype, which "
                    f"retriever.dtype owns (it is part of the embedding cache key); remove it and "
                    f"set retriever.dtype to one of {', '.join(DTYPES)}"
                )
        if revision is not None and not isinstance(revision, str):
            raise ConfigError(
                f"retriever.revision must be a branch, tag or commit, got {revision!r}; quote "
                f"a commit hash in YAML so that it stays a string"
            )
        self.model_id = model
        self.revision = revision
        self.path = resolve_model_path(model, local_path, package)
        self.package = package
        if trust_remote_code and self.path == model:  # a local folder's code is the user's own
            require_pinned_revision(model, revision)
        self.max_seq_length = max_seq_length
        self.normalize = check_flag(normalize, "retriever.normalize")
        self.batch_size = batch_size
        self.trust_remote_code = trust_remote_code
        self.model_kwargs = dict(model_kwargs or {})
        self.encode_api = encode_api
        self.task = task
        self.devices = resolve_devices(device)
        self.dtype = resolve_dtype(dtype, self.devices)
        self._model = None

    def identity(self, role: str) -> dict[str, Any]:
        """Everything that determines an embedding of `role` (query/document) besides the text."""
        prompt, prompt_name = self.prompts[role]
        revision, files = self.revision, None
        if self.package:
            revision = f"package {self.package}=={_package_version(self.package)}"
        elif self.path != self.model_id:
            revision = f"local {self.path}"
            files = folder_stamp(Path(self.path)) if Path(self.path).is_dir() else None
        out = {
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
        # named only when not the default, so that caches made before these settings existed
        # (plain encode, no task: the same vectors) keep their keys
        if self.encode_api != "encode":
            out["encode_api"] = self.encode_api
        if self.task is not None:
            out["task"] = self.task
        if files is not None:  # weights saved again in a local folder are another model
            out["files"] = files
        return out

    def provenance(self) -> dict[str, Any]:
        """The model as it was loaded, for a cell's record: its id and resolved revision (the
        hub commit the cache held, a package's version or a local folder; None before load)."""
        revision = self.identity("document")["revision"]
        if self.path == self.model_id and self._model is not None:
            config = getattr(getattr(self._model[0], "auto_model", None), "config", None)
            revision = getattr(config, "_commit_hash", None) or revision
        return {"model": self.model_id, "revision": revision}

    def _load(self):
        if self._model is not None:
            return self._model
        if not all(importlib.util.find_spec(m) for m in ("torch", "sentence_transformers")):
            raise HarnessError(
                f"dense retrievers need torch and sentence-transformers; run: {_INSTALL}"
            )
        if self.encode_api == "query_document":
            _require_query_document_api()  # before minutes of loading weights
        with quiet_third_party():
            model = self._open()
        if self.max_seq_length:
            model.max_seq_length = self.max_seq_length
        for role, (_, name) in self.prompts.items():
            if name is not None and name not in (model.prompts or {}):
                have = ", ".join(sorted(model.prompts or {})) or "none"
                raise ConfigError(
                    f"model {self.model_id} has no prompt named '{name}' (for "
                    f"{_PLURAL[role]}); "
                    f"its prompts: {have}; fix retriever.{role}_prompt_name"
                )
        takes = getattr(model, "get_model_kwargs", None)  # sentence-transformers >= 5
        if self.task is not None and takes is not None and "task" not in takes():
            have = ", ".join(sorted(takes())) or "none"
            raise ConfigError(
                f"model {self.model_id} takes no task (retriever.task={self.task}); the "
                f"keywords its encode takes: {have}; set retriever.task=null"
            )
        self._check_dtype(model)
        self._model = model
        return model

    def _check_dtype(self, model) -> None:
        """The weights are in the dtype asked for: it is part of the cache key, and a
        transformers that ignored the keyword would cache fp32 vectors as fp16 ones."""
        import torch

        want = getattr(torch, _TORCH_DTYPES[self.dtype])
        have = {p.dtype for p in model.parameters() if p.is_floating_point()}
        if have and want not in have:
            shown = ", ".join(sorted(str(d).replace("torch.", "") for d in have))
            raise HarnessError(
                f"model {self.model_id} loaded in {shown}, not {self.dtype} as retriever.dtype "
                f"asks (torch {torch.__version__}, transformers {_package_version('transformers')}"
                f"); upgrade: pip install -U transformers sentence-transformers"
            )

    def _open(self):
        """The SentenceTransformer: from the folder, or by hub id through the cache
        (model_source.load_from_hub)."""
        if self.path == self.model_id:
            return load_from_hub(self.model_id, self.revision, self._construct, self._hub_error)
        try:
            return self._construct(False)
        except OSError as exc:
            raise HarnessError(
                f"cannot load model {self.model_id} from {self.path}: {first_line(exc)}"
            ) from None

    def _construct(self, local_files_only: bool):
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Loading weights" bars: noise in logs and tables
        kwargs = dict(self.model_kwargs)
        kwargs[_dtype_keyword()] = getattr(torch, _TORCH_DTYPES[self.dtype])
        hub = self.path == self.model_id
        return SentenceTransformer(
            self.path,
            device=self.devices[0],
            revision=self.revision if hub else None,
            local_files_only=local_files_only,
            trust_remote_code=self.trust_remote_code,
            model_kwargs=kwargs,
        )

    def _hub_error(self, exc: BaseException) -> HarnessError:
        rev = f" (revision {self.revision})" if self.revision else ""
        return HarnessError(
            f"cannot load model {self.model_id}{rev} from the Hugging Face hub or cache: "
            f"{first_line(exc)}; fix the cause, or set retriever.local_path=/path/to/model"
        )

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        """float32 embeddings, one row per text; halves the batch and retries on GPU OOM."""
        model = self._load()
        prompt, prompt_name = self.prompts[role]
        encode = model.encode
        if self.encode_api == "query_document":
            encode = model.encode_query if role == "query" else model.encode_document
        extra = {} if self.task is None else {"task": self.task}
        while True:
            try:
                out = encode(
                    list(texts),
                    prompt=prompt,
                    prompt_name=prompt_name,
                    batch_size=self.batch_size,
                    show_progress_bar=False,
                    normalize_embeddings=self.normalize,
                    convert_to_numpy=True,
                    device=self.devices if len(self.devices) > 1 else None,
                    **extra,
                )
                return np.ascontiguousarray(out, dtype=np.float32)
            except Exception as exc:
                smaller = halved_on_oom(exc, self.batch_size)
                log.info(
                    f"{self.model_id}: out of GPU memory at batch size {self.batch_size}; "
                    f"retrying with {smaller}"
                )
                self.batch_size = smaller


_TORCH_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
_PLURAL = {"query": "queries", "document": "documents"}


def _check_api(encode_api: Any, task: Any) -> None:
    if encode_api not in ENCODE_APIS:
        raise ConfigError(
            f"unknown retriever.encode_api '{encode_api}'; valid: encode (model.encode with each "
            f"side's prompt), query_document (model.encode_query / model.encode_document)"
        )
    if task is not None and (not isinstance(task, str) or not task):
        raise ConfigError(f"retriever.task must be a task name or null, got {task!r}")
    if task is not None and encode_api == "query_document":
        raise ConfigError(
            f"retriever.task={task} and retriever.encode_api=query_document both set the task "
            f"(encode_query / encode_document pass task=query / document); drop one of them"
        )


def _require_query_document_api() -> None:
    from sentence_transformers import SentenceTransformer

    if not hasattr(SentenceTransformer, "encode_query"):
        raise HarnessError(
            f"retriever.encode_api=query_document needs sentence-transformers >= 5 "
            f"(encode_query / encode_document), found "
            f"{_package_version('sentence-transformers')}; run: pip install -U "
            f"'sentence-transformers>=5', or set retriever.encode_api=encode"
        )


def _dtype_keyword() -> str:
    """transformers renamed from_pretrained's `torch_dtype` to `dtype` in 4.56; an older one
    would pass an unknown `dtype` on to the model config and load fp32 weights."""
    parts = _package_version("transformers").split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return "dtype"
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def halved_on_oom(exc: Exception, batch_size: int) -> int:
    """The batch size to retry with after `exc`: half of `batch_size` on GPU out-of-memory
    (the CUDA cache emptied first); any other error, or one at batch size 1, is raised."""
    oom = type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()
    if not oom or batch_size == 1:
        raise exc
    import torch

    torch.cuda.empty_cache()
    return batch_size // 2


def _package_version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package.replace("_", "-"))
    except PackageNotFoundError:
        return "unknown"
