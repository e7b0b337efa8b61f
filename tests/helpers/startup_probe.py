"""Run a command-line tool in this process and report what its start-up did:

    python -m tests.helpers.startup_probe run ARGS...       # python -m harness ARGS
    python -m tests.helpers.startup_probe compare ARGS...   # python -m harness.compare ARGS
    python -m tests.helpers.startup_probe config ARGS...    # print the config a command gets

The last stderr line is `probe: {"compositions": N, "modules": [...]}`: how many times Hydra
composed a config (every composition goes through ConfigLoaderImpl.load_configuration, the
compose API's included), and which of the heavy modules we watch were imported.
"""

from __future__ import annotations

import json
import sys

WATCHED = ("scipy.stats", "scipy.special", "pandas", "torch")


def main(argv: list[str]) -> int:
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    calls = 0
    load = ConfigLoaderImpl.load_configuration

    def counted(self, *args, **kwargs):
        nonlocal calls
        calls += 1
        return load(self, *args, **kwargs)

    ConfigLoaderImpl.load_configuration = counted
    tool, args = argv[0], argv[1:]
    status = 0
    try:
        if tool == "run":
            from harness.cli.run import main as run_main

            run_main(args)
        elif tool == "config":
            from harness.cli.hydra_app import launch

            launch(lambda cfg: print(json.dumps(cfg, sort_keys=True)), args)
        else:
            from harness.cli.compare import main as compare_main

            status = compare_main(args)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    finally:
        seen = [m for m in WATCHED if m in sys.modules]
        print("probe: " + json.dumps({"compositions": calls, "modules": seen}), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
