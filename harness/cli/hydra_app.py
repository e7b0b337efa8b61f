"""Start a Hydra-configured command: compose conf/ once and call the command with the
resolved config as a plain dict; overrides that do not compose are checked for one error line
(with a did-you-mean) before Hydra would print its own."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
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

    from harness.cli import compose_cache
    from harness.cli.hydra_conf import flags_fit, register
    from harness.core.paths import conf_dir

    # What hydra.main sets up before composing (same task name, search path, version base)
    version.setbase(None)
    task_name = detect_task_name(*detect_calling_file_or_module_from_task_function(task))
    search_path = create_automatic_config_search_path(None, None, str(conf_dir()))
    hydra = Hydra.create_main_hydra2(task_name=task_name, config_search_path=search_path)
    try:
        sources = hydra.config_loader.get_sources()
        key = compose_cache.key(overrides, task_name, sources)
        cfg = compose_cache.load(key)  # kept only when it passed the checks below
        if cfg is None:
            register()
            with warnings.catch_warnings(record=True) as warned:
                try:
                    cfg = hydra.compose_config(
                        config_name="config",
                        overrides=list(overrides),
                        run_mode=RunMode.RUN,
                        with_log_configuration=True,
                    )
                except Exception:
                    return False
            for w in warned:  # shown as they would have been; such a composition is not kept
                warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)
            if not flags_fit(cfg, overrides) or cfg.hydra.mode not in (None, RunMode.RUN):
                return False
            if not warned and key == compose_cache.key(overrides, task_name, sources):
                compose_cache.keep(key, cfg)  # (the key again: conf/ did not change meanwhile)
        elif cfg.hydra.mode not in (None, RunMode.RUN):  # an interpolated mode, resolved now
            return False
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
