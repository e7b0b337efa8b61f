"""Where benchmark files live, how they are downloaded, and how they are verified."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

from harness.core.errors import BenchmarkError, ChecksumError

log = logging.getLogger("harness.data")

_CHUNK = 1 << 20


def _blob_hash(size: int):
    return hashlib.sha1(b"blob %d\0" % size)  # git's blob header, then the content


def git_blob_sha1(path: Path) -> str:
    """Git's blob id of a file: sha1 of b'blob <size>\\0' + content."""
    h = _blob_hash(path.stat().st_size)
    with open(path, "rb") as f:
        while block := f.read(_CHUNK):
            h.update(block)
    return h.hexdigest()


def blob_sha1_of(data: bytes) -> str:
    """git_blob_sha1 of bytes already read."""
    h = _blob_hash(len(data))
    h.update(data)
    return h.hexdigest()


def verify(path: Path, expected_blob_sha1: str, how_to_fix: str, got: str | None = None) -> None:
    """Raise ChecksumError unless the file's git blob SHA-1 (`got`, when the caller has it
    from bytes it read) is the pinned one."""
    got = got or git_blob_sha1(path)
    if got != expected_blob_sha1:
        raise ChecksumError(
            f"checksum mismatch for {path}: git blob SHA-1 is {got}, "
            f"expected {expected_blob_sha1}; {how_to_fix}"
        )


def fetch(url: str, dest: Path, expected_blob_sha1: str, timeout: float = 60.0) -> Path:
    """Download url to dest, verifying the git blob SHA-1 before the file appears at dest.

    The bytes go to a temporary file beside dest and are renamed into place only
    once verified, so an interrupted or corrupt download never leaves a file behind.
    """
    from harness.core.files import new_dirs, remove_empty
    from harness.core.http import masked_url  # imports httpx: only when downloading

    made = new_dirs(dest.parent)  # removed again if the download fails
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BenchmarkError(
            f"cannot create the data directory {dest.parent} ({exc.strerror}); "
            f"set HARNESS_DATA_DIR to a writable folder"
        ) from None
    log.info(f"downloading {masked_url(url)} -> {dest}")
    import urllib.error  # here: a run whose data is on disk does not pay for http's imports
    import urllib.request

    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp:
                    while block := resp.read(_CHUNK):
                        out.write(block)
            except (urllib.error.URLError, OSError, ValueError) as exc:
                reason = getattr(exc, "reason", None) or exc
                raise BenchmarkError(
                    f"could not download {masked_url(url)}: {reason}; without network, place "
                    f"the file at {dest} (or set HARNESS_DATA_DIR to a folder that holds it)"
                ) from None
        verify(
            tmp,
            expected_blob_sha1,
            f"the download from {masked_url(url)} is not the pinned file; check corpus.url",
        )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
        if not dest.exists():
            remove_empty(made)
    return dest
