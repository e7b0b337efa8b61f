"""Deterministic JSON and atomic file writes: every result file goes through here."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import HarnessError


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


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to a temp file beside `path`, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file normal rights
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
