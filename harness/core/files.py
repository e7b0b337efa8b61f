"""Deterministic JSON and atomic file writes: every result file goes through here."""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import math
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import HarnessError
from harness.core.faults import checkpoint

log = logging.getLogger("harness.files")
TMP_SUFFIX = ".tmp"  # temp files of write_text_atomic: `.<name>.<random>.tmp`


def check_writable(directory: Path) -> None:
    """Fail before any work is done if results cannot be written under `directory`; creates
    nothing (a run that fails later must not leave an empty folder behind)."""
    probe = Path(directory)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise HarnessError(
            f"{probe} is a file where the results folder {directory} belongs; move it away or "
            f"set results.dir to a folder"
        )
    try:
        with tempfile.NamedTemporaryFile(dir=probe, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise HarnessError(
            f"results directory {directory} is not writable ({exc.strerror}); "
            f"set results.dir to a writable folder"
        ) from None


def to_json(obj: Any) -> str:
    """Deterministic JSON: NaN becomes null, floats at full precision, trailing newline."""
    return json.dumps(_clean(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _clean(obj: Any) -> Any:
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, np.floating):
        return _clean(float(obj))
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, Mapping):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def write_text_atomic(path: Path, text: str, *, fault: str | None = None) -> None:
    """Write `text` to a temp file beside `path`, then rename it over `path`. `fault` names
    the fault-injection point between the two (harness.core.faults)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        if fault:
            checkpoint(fault)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file normal rights
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def hold_lock(
    lock_path: Path, product: Path, what: str, setting: str = "results.dir"
) -> Iterator[None]:
    """Hold an inter-process lock on `lock_path` while `product` (a file or folder) is made;
    a second holder waits, with a note naming `what`. If `product` still does not exist on
    the way out (the work failed), the lock file and the folders made for it are removed, so a
    failed run leaves nothing behind. The lock file stays otherwise: deleting a lock file that
    another process may be waiting on would let a third one in."""
    from filelock import FileLock, Timeout  # here: only a run that writes takes a lock

    made = new_dirs(lock_path.parent)
    make_dirs(lock_path.parent, setting)
    lock = FileLock(str(lock_path))
    try:
        try:
            lock.acquire(timeout=0)
        except Timeout:
            log.info(f"waiting for another run that is writing {what} ({lock_path})")
            lock.acquire()
        yield
    finally:
        if lock.is_locked:
            lock.release()
        if not product.exists():
            lock_path.unlink(missing_ok=True)
            remove_empty(made)


def remove_temp_files(path: Path) -> None:
    """Delete what interrupted `write_text_atomic(path, ...)` calls left beside `path`; call it
    holding the lock that serialises writers of `path`."""
    if path.parent.is_dir():
        for tmp in path.parent.glob(f".{glob.escape(path.name)}.*{TMP_SUFFIX}"):
            tmp.unlink(missing_ok=True)


def new_dirs(path: Path) -> list[Path]:
    """The folders `make_dirs(path)` would create, deepest first."""
    return [p for p in (path, *path.parents) if not p.exists()]


def remove_empty(dirs: list[Path]) -> None:
    """Remove those of `dirs` (deepest first) that are still empty: what a failed run made."""
    for d in dirs:
        with contextlib.suppress(OSError):
            d.rmdir()


def sha256_of(path: Path) -> str:
    """The hex SHA-256 of a file's bytes, read in blocks (a run file may be gigabytes)."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def missing(path: Path, what: str, want: str = "file") -> str:
    """Why `path` cannot be read as a `want` ("file" or "folder") named `what`: it is absent,
    or it is the other kind (a folder given for a file says so, not "not found")."""
    if want == "file" and path.is_dir():
        return f"{what} {path} is a folder; give the file itself"
    if want == "folder" and path.exists():
        return f"{what} {path} is a file; give the folder that holds it"
    return f"{what} not found: {path}"


def make_dirs(path: Path, setting: str = "results.dir") -> None:
    """mkdir -p, with a file in the way or a full or read-only disk as one HarnessError naming
    the `setting` that chooses another folder."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise HarnessError(
            f"{_first_file(path)} is a file where a folder belongs; move it away or give "
            f"another {setting}"
        ) from None
    except OSError as exc:
        raise HarnessError(
            f"cannot create {path} ({exc.strerror}); free space or give another {setting}"
        ) from None


def _first_file(path: Path) -> Path:
    """The first component of `path` that exists and is not a folder."""
    for p in [*reversed(path.parents), path]:
        if p.exists() and not p.is_dir():
            return p
    return path
