"""The one way the end-to-end and reference tests start the command-line tools:
`python -m MODULE ARGS` in a subprocess, in a directory of the test's choosing, with the
checkout importable, as a user runs it.

Each run gets a process group of its own (start_new_session=True). If anything goes wrong
while the test waits on it (an exception, Ctrl-C, a pytest timeout plugin raising), the whole
group is killed, so no worker the tool started (joblib, torch, a tokenizer pool) outlives the
test. There is deliberately no wall-clock timeout: a slow but correct run must not fail.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from tests.conftest import ROOT

__all__ = [
    "assert_one_line_error",
    "compare",
    "harness",
    "leaderboard",
    "run_module",
    "spawn",
    "stratify",
]

Env = Mapping[str, "str | None"]


def _env(env: Env | None) -> dict[str, str]:
    """os.environ, the checkout on PYTHONPATH, then the test's own variables (which win; a
    value of None removes the variable)."""
    merged = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return {k: v for k, v in merged.items() if v is not None}


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group `proc` leads (its own session), then reap `proc`."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextlib.contextmanager
def spawn(
    module: str,
    *args: object,
    cwd: Path | str,
    env: Env | None = None,
    python_flags: Sequence[str] = (),
    **popen: object,
) -> Iterator[subprocess.Popen]:
    """Start `python [FLAGS] -m MODULE ARGS` in `cwd` and yield the Popen while it runs.

    The process leads a new session. Leaving the block kills its whole process group if it
    is still running (or if the block raised), so a test that interrupts a run, or fails while
    one is going, leaves nothing behind. Extra keyword arguments go to subprocess.Popen
    (stdout=, stderr=, text=, ...).
    """
    proc = subprocess.Popen(
        [sys.executable, *python_flags, "-m", module, *map(str, args)],
        cwd=cwd,
        env=_env(env),
        start_new_session=True,
        **popen,
    )
    try:
        yield proc
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        if proc.poll() is None:
            _kill_group(proc)


def run_module(
    module: str,
    *args: object,
    cwd: Path | str,
    env: Env | None = None,
    check: bool = True,
    python_flags: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run `python [FLAGS] -m MODULE ARGS` in `cwd` to the end; return its text output.

    `env` adds to (and overrides) os.environ plus PYTHONPATH=<checkout>; None unsets a name.
    With check=True a non-zero exit raises subprocess.CalledProcessError carrying stdout and
    stderr.
    """
    with spawn(
        module,
        *args,
        cwd=cwd,
        env=env,
        python_flags=python_flags,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        stdout, stderr = proc.communicate()
    res = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    if check:
        res.check_returncode()
    return res


def harness(*args: object, cwd: Path | str, **kw) -> subprocess.CompletedProcess[str]:
    """`python -m harness ARGS` (a cell, or a sweep with -m); see run_module for **kw."""
    return run_module("harness", *args, cwd=cwd, **kw)


def compare(*args: object, cwd: Path | str, **kw) -> subprocess.CompletedProcess[str]:
    """`python -m harness.compare ARGS`; see run_module for **kw."""
    return run_module("harness.compare", *args, cwd=cwd, **kw)


def stratify(*args: object, cwd: Path | str, **kw) -> subprocess.CompletedProcess[str]:
    """`python -m harness.stratify ARGS`; see run_module for **kw."""
    return run_module("harness.stratify", *args, cwd=cwd, **kw)


def leaderboard(*args: object, cwd: Path | str, **kw) -> subprocess.CompletedProcess[str]:
    """`python -m harness.leaderboard ARGS`; see run_module for **kw."""
    return run_module("harness.leaderboard", *args, cwd=cwd, **kw)


def assert_one_line_error(res: subprocess.CompletedProcess[str], cwd: Path, message: str) -> None:
    """The run failed the way a user error should: exit 2, one `error: ` line naming
    `message` on stderr, and no result file written under cwd/results."""
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert message in res.stderr
    results = Path(cwd) / "results"
    assert not results.exists() or not any(results.rglob("*.json"))
