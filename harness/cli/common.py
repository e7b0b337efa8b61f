"""What every command shares: the one error guard (one `error:` line, exit 2, no traceback),
the argument parser that reports through it, the notes logger on stderr, and the start-up
heap kept out of garbage collection."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn, TypeVar

from harness.core.errors import DISK_ERRNOS, HarnessError

T = TypeVar("T")


def fail(message: str) -> NoReturn:
    """Print one error line and exit with status 2 (bad input)."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def guarded(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """fn(*args, **kwargs), with bad input (a HarnessError, or OmegaConf's errors such as a
    missing mandatory value) turned into one `error:` line and exit status 2. SIGTERM (what
    `timeout` and SLURM send) and SIGHUP stop it as Ctrl-C does: the half-written cell is
    removed on the way out, one line, exit status 128 + the signal's number."""
    previous = _on_signals()
    try:
        return fn(*args, **kwargs)
    except BrokenPipeError:
        stdout_closed()
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        name = signal.Signals(signum).name
        print(INTERRUPTED.replace("interrupted", f"interrupted ({name})", 1), file=sys.stderr)
        sys.exit(128 + signum)
    except Exception as exc:
        message = error_message(exc)
        if message is None:
            raise
        fail(message)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def stdout_closed() -> NoReturn:
    """The reader of stdout stopped early (`... | head -3`): end quietly, as a program killed
    by SIGPIPE does (status 128 + 13), with stdout pointed at /dev/null so that flushing it on
    the way out does not fail again. Python's documented recipe for SIGPIPE."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(128 + signal.SIGPIPE)


def command(fn: Callable[..., T], argv: Sequence[str] | None) -> T:
    """An argparse command's main: notes on stderr, the start-up heap frozen, the guard."""
    notes_to_stderr()
    with frozen_heap():
        return guarded(fn, argv)


class Stopped(KeyboardInterrupt):
    """A stop signal other than SIGINT, raised where the program is, so cleanups run."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, _frame: Any) -> NoReturn:
    raise Stopped(signum)


def _on_signals() -> dict[int, Any]:
    """Raise Stopped on SIGTERM and SIGHUP; the handlers they had (none off the main thread)."""
    previous = {}
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is None:
            continue
        try:
            previous[signum] = signal.signal(signum, _raise_stopped)
        except ValueError:  # not the main thread: leave the signals as they are
            break
    return previous


INTERRUPTED = (
    "error: interrupted; stored results are whole (a cell is swapped in at once; with the "
    "embedding cache on, finished shards are kept): rerun the same command to go on"
)


def error_message(exc: BaseException) -> str | None:
    """The one-line message of bad input (a HarnessError, or OmegaConf's errors such as
    MissingMandatoryValue); None for anything else (a bug: keep its traceback)."""
    if isinstance(exc, HarnessError):  # one line, whatever a message quoted
        return " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    if isinstance(exc, Exception) and type(exc).__module__.startswith("omegaconf"):
        return _omegaconf_message(exc)
    if isinstance(exc, SystemExit):
        return f"exited with status {exc.code}"
    if isinstance(exc, MemoryError):
        return (
            "out of memory; use a smaller setting (stats.bootstrap, batch_size, shard_size) or "
            "a machine with more memory"
        )
    if isinstance(exc, (NotADirectoryError, FileExistsError)):
        return (
            f"{exc.filename or 'a path'}: a file is where a folder belongs (or the other way "
            f"round); move it away or choose another folder (results.dir, cache_dir, strata.dir)"
        )
    if isinstance(exc, OSError) and exc.errno in DISK_ERRNOS:
        where = f"{exc.filename}: " if exc.filename else ""
        return (
            f"{where}{exc.strerror}; free space on that disk, fix its permissions, or point "
            f"the run at another folder (results.dir=..., cache_dir=..., --out ...)"
        )
    return None


def _omegaconf_message(exc: Exception) -> str:
    first = str(exc).splitlines()[0]
    key = getattr(exc, "full_key", None)
    if "Missing mandatory value" in first and key:
        return f"{key} is required; set it on the command line: {key}=..."
    return first


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors take the same road as every other bad input."""

    def error(self, message: str) -> NoReturn:
        from harness.core.errors import did_you_mean

        hint = ""
        if message.startswith("unrecognized arguments: "):
            first = message.split(": ", 1)[1].split()[0].split("=")[0]
            hint = did_you_mean(first, list(self._option_string_actions))
        raise HarnessError(f"{message}{hint} (see {self.prog} --help)")


@contextmanager
def frozen_heap() -> Iterator[None]:
    """What exists when a command starts (imported modules, mostly) outlives it: frozen, it is
    left out of the garbage collections made while the command runs, which walked it again
    each time (a fifth of the default job's CPU time)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def notes_to_stderr() -> None:
    """The `harness` logger's INFO records go to stderr as `note: ...` lines (commands that
    Hydra does not start; Hydra's job logging config does the same for the others)."""
    log = logging.getLogger("harness")
    if not any(getattr(h, "_harness", False) for h in log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("note: %(message)s"))
        handler._harness = True  # type: ignore[attr-defined]
        log.addHandler(handler)
    log.setLevel(logging.INFO)


def split_flags(
    argv: Sequence[str], flags: Sequence[str], values: Sequence[str] = ()
) -> tuple[list[str], dict[str, Any]]:
    """Take a command's own switches out of Hydra's argv. A flag is accepted as `--name` or
    `name=true|false`, a value as `name=VALUE`; returns the rest and what was found."""
    found: dict[str, Any] = {}
    rest: list[str] = []
    for arg in argv:
        key, eq, value = arg.partition("=")
        if arg.startswith("--") and arg[2:] in flags:
            found[arg[2:]] = True
        elif eq and key in flags:
            if value.lower() not in ("true", "false"):
                raise HarnessError(f"{key} must be true or false, got '{value}'")
            found[key] = value.lower() == "true"
        elif eq and key in values:
            found[key] = value
        else:
            rest.append(arg)
    return rest, found


def verb_args(
    argv: Sequence[str] | None, help_text: str, flags: Sequence[str] = (), values=()
) -> tuple[list[str], dict[str, Any]] | None:
    """A Hydra verb's arguments (`split_flags`), or None once `--help` printed its text."""
    args = sys.argv[1:] if argv is None else list(argv)
    if any(a in ("--help", "-h") for a in args):
        print(help_text, end="")
        return None
    return guarded(split_flags, args, flags, values)
