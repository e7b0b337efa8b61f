"""Where things live: the config tree, the data directory and the cache directory."""

from __future__ import annotations

import os
from pathlib import Path


def _user_dir(variable: str) -> Path:
    """$VARIABLE when set, else the per-user cache folder ($XDG_CACHE_HOME/retrieval-harness)."""
    env = os.environ.get(variable)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "retrieval-harness"


def cache_dir() -> Path:
    """$HARNESS_CACHE_DIR, else the per-user cache folder (embeddings and LLM answers go below)."""
    return _user_dir("HARNESS_CACHE_DIR")


def data_dir() -> Path:
    """The data directory: $HARNESS_DATA_DIR, else the per-user cache folder."""
    return _user_dir("HARNESS_DATA_DIR")


def conf_dir() -> Path:
    """The config tree: shipped inside the package when installed, else the repository's conf/."""
    installed = Path(__file__).resolve().parents[1] / "conf"  # harness/conf when installed
    if (installed / "config.yaml").is_file():
        return installed
    return Path(__file__).resolve().parents[2] / "conf"


def group_options(group: str) -> list[str]:
    """Names of the configs available in a config group (yaml stems)."""
    return sorted(p.stem for p in (conf_dir() / group).glob("*.yaml"))
