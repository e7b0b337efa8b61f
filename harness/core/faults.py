"""Fault injection for the reliability tests (docs/reliability.md): with HARNESS_FAULT=<point>
in the environment, the process kills itself with SIGKILL when it reaches that point, as a
power cut or an OOM kill would (HARNESS_FAULT_SIGNAL=SIGTERM, SIGHUP, ...: that signal
instead, as `timeout` or SLURM sends it). Unset (always, outside those tests), a checkpoint
is one dictionary lookup."""

from __future__ import annotations

import os
import signal

POINTS = ("encode", "stratify", "cell.write")


def checkpoint(point: str) -> None:
    """Die here, abruptly, when HARNESS_FAULT names this point."""
    if os.environ.get("HARNESS_FAULT") == point:
        name = os.environ.get("HARNESS_FAULT_SIGNAL", "SIGKILL")
        os.kill(os.getpid(), getattr(signal, name))
