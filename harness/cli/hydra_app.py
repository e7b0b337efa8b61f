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
    from omegaconf import OmegaConf

    from harness.cli.hydra_conf import check_overrides, register
    from harness.core.errors import HarnessError
    from harness.core.paths import conf_dir

    # --force, the spelling the other commands share, is the config key force=true here
    argv = [("force=true" if a == "--force" else a) for a in argv]
    try:
        check_overrides(argv)
    except HarnessError as exc:
        fail(str(exc))
    register()

    @hydra.main(version_base=None, config_path=str(conf_dir()), config_name="config")
    def _app(cfg) -> None:
        resolved = guarded(OmegaConf.to_container, cfg, resolve=True, throw_on_missing=True)
        guarded(command, resolved)

    sys.argv = [sys.argv[0], *argv]
    _app()
