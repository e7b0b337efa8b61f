"""`harness VERB ...`: the one command line. `harness KEY=VALUE ...` (no verb) is `run`, the
main job exactly as `python -m harness KEY=VALUE ...`; each verb keeps its own `--help`."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

# verb -> the module whose main(argv) runs it
VERBS = {
    "run": "harness.cli.run",
    "stratify": "harness.cli.stratify",
    "encode": "harness.cli.encode",
    "diagnose": "harness.cli.diagnose",
    "compare": "harness.cli.compare",
    "leaderboard": "harness.cli.leaderboard",
    "trec_eval": "harness.cli.trec_eval",
}


def main(argv: Sequence[str] | None = None) -> None:
    """Dispatch on the first argument when it names a verb; anything else is `run`'s."""
    args = list(sys.argv[1:] if argv is None else argv)
    first = args[0] if args else ""
    if first and first not in VERBS and not first.startswith(("-", "~", "+")) and "=" not in first:
        from harness.cli.common import fail
        from harness.core.errors import did_you_mean

        fail(
            f"unknown command '{first}'{did_you_mean(first, list(VERBS))}; commands: "
            f"{', '.join(VERBS)}, or settings as key=value for run (harness --help)"
        )
    late = next((a for a in args[1:] if a in VERBS), None)
    if first not in VERBS and late is not None:  # `harness --full run`: a verb after a flag
        from harness.cli.common import fail

        rest = [a for a in args if a != late]
        fail(f"the command goes first: harness {late} {' '.join(rest)}".rstrip())
    verb = first if first in VERBS else "run"
    if args and args[0] == verb:
        args = args[1:]
    try:
        try:
            status = importlib.import_module(VERBS[verb]).main(args)
        finally:  # here, not at exit (argparse's --help exits): a reader that stopped early
            sys.stdout.flush()  # is one quiet exit
    except BrokenPipeError:
        from harness.cli.common import stdout_closed

        stdout_closed()
    sys.exit(status or 0)
