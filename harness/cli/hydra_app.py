"""Start a Hydra-configured command: check the overrides first (one error line on a typo),
then compose conf/ and call the command with the resolved config as a plain dict."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from harness.cli.common import fail, guarded


def launch(command: Callable[[dict[str, Any]], Any], argv: Sequence[str]) -> None:
    """Run `command(resolved config)` under Hydra with `argv` as the overrides (sweeps and
    launchers included); bad overrides and bad input end in one error line, exit 2."""
    import hydra

    from harness.cli.hydra_conf import check_overrides, register
    from harness.core.errors import HarnessError
    from harness.core.paths import conf_dir

    # --force, the spelling the other commands share, is the config key force=true here
    argv = [("force=true" if a == "--force" else a) for a in argv]
    try:
        check_overrides(argv)
        _check_slurm(argv)
    except HarnessError as exc:
        fail(str(exc))
    register()

    from harness.cli import sweep

    @hydra.main(version_base=None, config_path=str(conf_dir()), config_name="config")
    def _app(cfg) -> None:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        if HydraConfig.get().mode == RunMode.MULTIRUN:  # one bad cell must not end the sweep
            sweep.run_job(lambda c: command(_resolved(c)), cfg)
            return
        guarded(command, guarded(_resolved, cfg))

    sys.argv = [sys.argv[0], *_multirun_first(argv)]
    _app()
    if sweep.last_summary is not None and sweep.last_summary["failed"]:
        sys.exit(1)


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
