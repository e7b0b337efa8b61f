"""Composed configs kept for the next start with the same inputs: Hydra's composition costs a
tenth of a second or more at every start, reading one back a few milliseconds.

A composition is kept under a digest of what it is made from: conf/ (its place, folders and
files, symlinked folders followed), the schema's source and the code that asks for the
composition, the Python, Hydra and OmegaConf versions, the Hydra plugins installed, the task
name and the overrides. Nothing is kept (the start composes, as always) where the result could
depend on something else: a config source other than Hydra's own, conf/ and the ConfigStore
(a plugin's search path, `hydra.searchpath`); an interpolated config group choice or Hydra
setting, which Hydra resolves while composing (`corpus=${oc.env:X}`, `hydra.mode=${...}`, one
in a defaults list); copied environment variables (`hydra.job.env_copy`); Hydra's debug
output; a composition that warned (the warning would not be repeated). Entries are pickles, so
they are read only from a folder of this user's that no one else may write to.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

FORMAT = b"compose-cache/1"  # what an entry holds; changing it retires every entry
KEPT = 256  # entries kept (about 20 KB each); beyond it the least recently used go
_STALE_TEMP_S = 3600  # a temp file this old was left by a killed start


def key(overrides: Sequence[str], task_name: str, sources: Iterable[Any]) -> str | None:
    """The digest a composition of conf/ with `overrides` is kept under, or None when it must
    not be kept. `sources`: the config loader's sources (hydra's config loader
    get_sources())."""
    try:
        return _key(overrides, task_name, list(sources))
    except Exception:  # noqa: BLE001 (an unreadable file, no home folder: compose, as always)
        return None


def _key(overrides: Sequence[str], task_name: str, sources: list[Any]) -> str | None:
    import hydra
    import omegaconf

    from harness.core import confs
    from harness.core.paths import conf_dir

    conf = conf_dir()
    for source in sources:
        main = source.provider == "main" and Path(source.path) == conf
        if not (main or source.provider == "hydra" or source.scheme() == "structured"):
            return None
    for o in overrides:
        name, _, value = o.partition("=")
        name = name.lstrip("+~").split("@")[0]
        if "${" in value and ("." not in name or name.startswith("hydra.")):
            return None  # a group's choice or a Hydra setting, resolved while composing
    digest = hashlib.sha256()

    def add(data: bytes) -> None:
        digest.update(len(data).to_bytes(8, "little") + data)

    for text in (FORMAT.decode(), sys.version, hydra.__version__, omegaconf.__version__,
                 str(conf), task_name, *overrides):  # fmt: skip
        add(text.encode())
    for code in (confs.__file__, Path(__file__).with_name("hydra_app.py"), __file__):
        add(Path(code).read_bytes())
    for path in _tree(conf):
        add(str(path.relative_to(conf)).encode())
        if path.suffix == ".yaml":
            data = path.read_bytes()
            if (b"defaults" in data or b"\\" in data) and _interpolated_defaults(data):
                return None  # (a backslash: YAML escapes can spell `defaults` or `${`)
            add(data)
    import hydra_plugins  # a plugin's configs and search paths: its files, by size and time

    for path in sorted(p for root in hydra_plugins.__path__ for p in _tree(Path(root))):
        st = path.stat()
        add(f"{path}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return digest.hexdigest()


def _tree(root: Path) -> list[Path]:
    """Every folder and file under `root`, symlinked folders followed (as Hydra reads them),
    each real folder once, caches left out; sorted."""
    out, seen = [], set()
    for folder, dirs, names in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out += [Path(folder, n) for n in (*dirs, *names)]
    return sorted(out)


def _interpolated_defaults(data: bytes) -> bool:
    """Whether a config file's defaults list holds an interpolation."""
    import yaml

    doc = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml: 4x
    defaults = doc.get("defaults") if isinstance(doc, dict) else None
    return "${" in str(defaults)


def _folder() -> Path:
    """This user's entries: <cache dir>/compose/<uid>."""
    from harness.core.paths import cache_dir

    return cache_dir() / "compose" / str(os.getuid())


def _private(path: Path) -> bool:
    """Owned by this user, writable by no one else."""
    st = path.stat()
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def load(key: str | None):
    """The composition kept under `key` (its resolver cache cleared: `${now:...}` is the time
    of this start), with this start's working directory recorded and logging configured, as
    Hydra's compose_config does; None when there is none or it cannot be used."""
    from hydra.core.utils import configure_log
    from omegaconf import DictConfig, OmegaConf

    if key is None:
        return None
    try:
        folder = _folder()
        path = folder / f"{key}.pkl"
        if not (_private(folder) and _private(path)):
            return None
        cfg = pickle.loads(path.read_bytes())
        if not isinstance(cfg, DictConfig):
            return None
        OmegaConf.clear_cache(cfg)
        cfg.hydra.runtime.cwd = os.getcwd()
        configure_log(cfg.hydra.hydra_logging, cfg.hydra.verbose)
    except Exception:  # noqa: BLE001 (absent, damaged, of another version: compose it)
        return None
    with contextlib.suppress(OSError):  # used now: the last to be pruned
        os.utime(path)
    return cfg


def keep(key: str | None, cfg) -> None:
    """Keep `cfg`, as composed, under `key`, written atomically; then prune. A cache that
    cannot be written is skipped: it only saves time."""
    if key is None or cfg.hydra.job.env_copy or cfg.hydra.verbose or cfg.hydra.searchpath:
        return
    try:
        folder = _folder()
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(folder):
            return
        fd, tmp = tempfile.mkstemp(prefix=".compose.", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(pickle.dumps(cfg))
            os.replace(tmp, folder / f"{key}.pkl")
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        _prune(folder, len(key))
    except Exception:  # noqa: BLE001 (a full or read-only disk: the next start composes)
        return


def _prune(folder: Path, width: int) -> None:
    """Entries beyond KEPT, least recently used first, and temp files of killed starts; other
    files are not ours and stay."""
    mine = [p for p in folder.glob("*.pkl") if len(p.stem) == width]
    for old in sorted(mine, key=lambda p: p.stat().st_mtime_ns)[:-KEPT]:
        old.unlink(missing_ok=True)
    for tmp in folder.glob(".compose.*"):
        if tmp.stat().st_mtime < time.time() - _STALE_TEMP_S:
            tmp.unlink(missing_ok=True)
