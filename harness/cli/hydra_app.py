"""Start a Hydra-configured command: compose conf/ once and call the command with the
resolved config as a plain dict; overrides that do not compose are checked for one error line
(with a did-you-mean) before Hydra would print its own."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.cli.common import frozen_heap, guarded


def launch(
    command: Callable[[dict[str, Any]], Any],
    argv: Sequence[str],
    flags: Mapping[str, str] | None = None,
    handled: Sequence[str] = (),
    keys: Sequence[str] = (),
) -> None:
    """Run `command(resolved config)` under Hydra with `argv` as the overrides (sweeps and
    launchers included); bad overrides and bad input end in one error line, exit 2. `flags`:
    the command's own switches and the override each stands for (`--force` is `force=true`
    for every command; `handled`: switches the command took out of argv itself, named in the
    did-you-mean); any other flag that is not Hydra's is one error line. `keys`: top-level
    keys the command adds to the config itself (`+shard=` for encode)."""
    import hydra

    from harness.cli.hydra_conf import check_added, check_flags, check_overrides, register
    from harness.core.paths import conf_dir

    own = {"--force": "force=true", **(flags or {})}
    guarded(check_flags, argv, [*own, *handled])
    argv = [own.get(a, a) for a in argv]
    guarded(check_added, argv, keys)

    from harness.cli import sweep

    def _app(cfg) -> None:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        if HydraConfig.get().mode == RunMode.MULTIRUN:  # one bad cell must not end the sweep
            sweep.run_job(lambda c: command(_resolved(c)), cfg)
            return
        guarded(command, guarded(_resolved, cfg))

    with frozen_heap():
        if _single_run(argv) and run_composed_once(_app, argv):
            return
        # A sweep, a Hydra flag, or overrides Hydra could not compose: check them first (one
        # error line with a did-you-mean), then hand the command line to hydra.main.
        register()
        guarded(check_overrides, argv)
        guarded(_check_slurm, argv)

        sys.argv = [sys.argv[0], *_multirun_first(argv)]
        hydra.main(version_base=None, config_path=str(conf_dir()), config_name="config")(_app)()
    if sweep.last_summary is not None and sweep.last_summary["failed"]:
        sys.exit(1)


def _single_run(argv: Sequence[str]) -> bool:
    """Only overrides: no -m, no Hydra flag (--cfg, --help, ...), no submitit launcher (the
    SLURM check is on the other road)."""
    return not any(a.startswith("-") or a.startswith("hydra/launcher=submitit") for a in argv)


def run_composed_once(task: Callable[[Any], None], overrides: Sequence[str]) -> bool:
    """Compose conf/ once and run `task` on it as hydra.main's run mode does; hydra.main
    composes twice (once only to read hydra.mode), and a check before it a third time.
    Returns False, having run nothing, when the overrides do not compose or the config asks
    for a sweep: the caller then checks them (naming the bad one) and goes through hydra.main.
    A bad override cannot pass here and fail that check: both compose the same overrides."""
    from hydra import version
    from hydra._internal.callbacks import Callbacks
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import (
        create_automatic_config_search_path,
        detect_calling_file_or_module_from_task_function,
        detect_task_name,
        run_and_report,
    )
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.utils import run_job
    from hydra.types import HydraContext, RunMode

    from harness.cli.hydra_conf import flags_fit, register
    from harness.core.paths import conf_dir

    # What hydra.main sets up before composing (same task name, search path, version base)
    version.setbase(None)
    task_name = detect_task_name(*detect_calling_file_or_module_from_task_function(task))
    search_path = create_automatic_config_search_path(None, None, str(conf_dir()))
    hydra = Hydra.create_main_hydra2(task_name=task_name, config_search_path=search_path)
    try:
        key = _composition_key(overrides, task_name)
        cfg = _cached_composition(key)  # kept only when it passed the checks below
        if cfg is None:
            register()
            try:
                cfg = hydra.compose_config(
                    config_name="config",
                    overrides=list(overrides),
                    run_mode=RunMode.RUN,
                    with_log_configuration=True,
                )
            except Exception:
                return False
            if cfg.hydra.mode not in (None, RunMode.RUN) or not flags_fit(cfg, overrides):
                return False
            _keep_composition(key, cfg)
        if cfg.hydra.mode is None:  # as hydra.main records it
            cfg.hydra.mode = RunMode.RUN
            cfg.hydra.overrides.hydra.append("hydra.mode=RUN")

        def job() -> None:  # the rest of Hydra's run mode (hydra._internal.hydra.Hydra.run)
            callbacks = Callbacks(cfg)
            callbacks.on_run_start(config=cfg, config_name="config")
            ret = run_job(
                hydra_context=HydraContext(config_loader=hydra.config_loader, callbacks=callbacks),
                task_function=task,
                config=cfg,
                job_dir_key="hydra.run.dir",
                job_subdir_key=None,
            )
            callbacks.on_run_end(config=cfg, config_name="config", job_return=ret)
            _ = ret.return_value  # raises the job's exception, reported as hydra.main does

        run_and_report(job)
        return True
    finally:
        GlobalHydra.instance().clear()


_KEPT = 256  # compositions kept in the cache (about 20 KB each); the oldest go first


def _composition_key(overrides: Sequence[str], task_name: str) -> str | None:
    """A digest of everything Hydra reads to compose conf/ with `overrides`: the config tree
    (where it is and its files), the schema's source, the Hydra plugins installed, the
    library versions, the task name and the overrides. None when an override points Hydra at
    config files elsewhere (not cached)."""
    import hashlib
    import os

    import hydra
    import hydra_plugins
    import omegaconf

    from harness.core import confs
    from harness.core.paths import conf_dir

    if any(o.lstrip("+~").startswith("hydra.searchpath") for o in overrides):
        return None
    conf = conf_dir()
    digest = hashlib.sha256()
    for part in (sys.version, hydra.__version__, omegaconf.__version__, conf, task_name):
        digest.update(f"{part}\0".encode())
    for part in overrides:
        digest.update(f"{part}\0".encode())
    digest.update(Path(confs.__file__).read_bytes())
    for path in sorted(conf.rglob("*.yaml")):
        digest.update(f"{path.relative_to(conf)}\0".encode() + path.read_bytes())
    plugins = []  # a plugin's configs and search paths: its files, by size and time
    for root in getattr(hydra_plugins, "__path__", []):
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            plugins += [os.path.join(folder, name) for name in names]
    for path in sorted(plugins):
        st = os.stat(path)
        digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _cache_file(key: str) -> Path:
    from harness.core.paths import cache_dir

    return cache_dir() / "compose" / f"{key}.pkl"


def _cached_composition(key: str | None):
    """The config composed before for the same key, as Hydra's compose_config returns it
    (logging configured, this working directory recorded); None when there is none. Composing
    costs about a tenth of a second at every start; reading it back, a few milliseconds."""
    import contextlib
    import os
    import pickle

    from hydra.core.utils import configure_log
    from omegaconf import DictConfig

    if key is None:
        return None
    path = _cache_file(key)
    try:
        cfg = pickle.loads(path.read_bytes())
    except Exception:  # absent, unreadable or written by another version: compose it
        return None
    if not isinstance(cfg, DictConfig):
        return None
    with contextlib.suppress(OSError):  # used now: the last to be pruned
        os.utime(path)
    cfg.hydra.runtime.cwd = os.getcwd()
    configure_log(cfg.hydra.hydra_logging, cfg.hydra.verbose)
    return cfg


def _keep_composition(key: str | None, cfg) -> None:
    """Keep `cfg` for the next start with the same key, written atomically; not kept when it
    copies environment variables or asks for Hydra's debug output (a read-back could not
    repeat them); beyond _KEPT entries the least recently used go. A cache that cannot be written is
    skipped: it only saves time."""
    import os
    import pickle
    import tempfile

    if key is None or cfg.hydra.job.env_copy or cfg.hydra.verbose or cfg.hydra.searchpath:
        return
    path = _cache_file(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".compose.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(pickle.dumps(cfg))
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        mine = [p for p in path.parent.glob("*.pkl") if len(p.stem) == len(key)]
        kept = sorted(mine, key=lambda p: p.stat().st_mtime_ns)
        for old in kept[:-_KEPT]:
            old.unlink(missing_ok=True)
    except Exception:  # noqa: BLE001 (a cache that cannot be kept costs the next start only)
        return


def _check_slurm(argv: Sequence[str]) -> None:
    """submitit's SLURM launcher needs the SLURM commands; say so in one line, not with
    submitit's traceback."""
    import shutil

    from harness.core.errors import HarnessError

    if "hydra/launcher=submitit_slurm" in argv and not shutil.which("srun"):
        raise HarnessError(
            "hydra/launcher=submitit_slurm needs SLURM, and srun is not on PATH here; run the "
            "sweep on the cluster's login node, or try it locally with "
            "hydra/launcher=submitit_local"
        )


def _resolved(cfg) -> dict[str, Any]:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)


def _multirun_first(argv: Sequence[str]) -> list[str]:
    """`-m`/`--multirun` moved before the overrides: Hydra's parser takes the overrides as
    one positional list, so `A -m B` would fail with 'unrecognized arguments: B'."""
    flags = [a for a in argv if a in ("-m", "--multirun")]
    return [*flags[:1], *(a for a in argv if a not in ("-m", "--multirun"))]
