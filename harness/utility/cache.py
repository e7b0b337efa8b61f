"""A content-addressed store of generations and entailment results (docs/utility.md#cache).

An entry is one JSON file, `<root>/<kind>/<key[:2]>/<key>.json`, where `key` is the SHA-256 of
the canonical JSON of everything its content depends on. Files are written atomically and never
change once written, so concurrent runs, an interrupted run and another retriever's cell with
the same top-K all read what the first writer wrote. Floats are stored with repr, which reads
back to the same float: a rerun from the cache gives byte-identical results."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.core.errors import DISK_ERRNOS, HarnessError
from harness.core.files import write_text_atomic
from harness.utility.spec import canonical_json

log = logging.getLogger("harness.utility")

FORMAT = 1  # bump when an entry's layout or the sampling algorithm changes


def content_key(kind: str, payload: Any) -> str:
    """The SHA-256 hex digest naming the entry of `kind` for `payload` (any JSON value)."""
    blob = canonical_json({"format": FORMAT, "kind": kind, "payload": payload})
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Store:
    """Entries under `root`; `get` answers None for a missing entry, and for one that is not
    JSON, belongs to another key or has the wrong shape (it is computed again and rewritten)."""

    def __init__(self, root: Path):
        self.root = Path(root).expanduser()

    def path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.json"

    def get(
        self, kind: str, key: str, check: Callable[[dict], str | None] | None = None
    ) -> dict | None:
        """The entry of `kind` and `key`, or None. `check(entry)` says what is wrong with an
        entry's shape (None: nothing); a damaged entry is a miss, with a note."""
        path = self.path(kind, key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise HarnessError(
                f"cannot read the utility cache entry {path} ({exc.strerror}); fix its rights "
                f"or set utility.cache to another folder"
            ) from None
        try:
            entry = json.loads(text)
        except ValueError:
            log.info(f"utility cache entry {path} is not JSON; computing it again")
            return None
        if not isinstance(entry, dict) or entry.get("key") != key:
            problem = "is not an entry of this key"
        else:
            problem = check(entry) if check is not None else None
        if problem is not None:
            log.info(f"utility cache entry {path} {problem}; computing it again")
            return None
        return entry

    def put(self, kind: str, key: str, entry: dict) -> None:
        path = self.path(kind, key)
        text = json.dumps({**entry, "key": key}, sort_keys=True, ensure_ascii=False) + "\n"
        try:
            write_text_atomic(path, text)
        except OSError as exc:
            if exc.errno not in DISK_ERRNOS and not isinstance(exc, NotADirectoryError):
                raise
            raise HarnessError(
                f"cannot write the utility cache under {self.root} ({exc.strerror}); free "
                f"space, fix its rights, or set utility.cache to a writable folder"
            ) from None
