"""Exceptions for bad user input; the CLI turns each into one error line and exit code 2."""

from __future__ import annotations

import difflib
import errno
import numbers
from collections.abc import Iterable
from typing import Any

# OSError numbers that are faults of the machine, not of the code: a full, read-only or
# failing disk, or missing rights. They become one error line, not a traceback.
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EACCES})


class HarnessError(Exception):
    """Bad input or configuration that the user can fix; the message says what and how."""


class BenchmarkError(HarnessError):
    """A benchmark file or folder is missing, malformed or inconsistent."""


class ChecksumError(BenchmarkError):
    """A downloaded or cached file does not match its pinned checksum."""


class ConfigError(HarnessError):
    """A configuration value is invalid."""


def did_you_mean(value: str, valid: Iterable[str]) -> str:
    """Return ' (did you mean 'x'?)' for the closest valid name, or '' when none is close;
    case is ignored in the comparison ('ndgc' finds 'nDCG'), the name shown as spelled."""
    folded: dict[str, str] = {}
    for name in valid:
        folded.setdefault(str(name).lower(), str(name))
    given = str(value).lower()
    close = difflib.get_close_matches(given, list(folded), n=1, cutoff=0.6)
    if close and _negation(given, close[0]):
        return ""  # 'relevant' is not a typo of 'irrelevant'
    return f" (did you mean '{folded[close[0]]}'?)" if close else ""


def _negation(a: str, b: str) -> bool:
    """Whether one name is the other with a negating prefix (ir-, un-, in-, non-, not-)."""
    short, long = sorted((a, b), key=len)
    head = long[: len(long) - len(short)]
    return long.endswith(short) and head.rstrip("-_ ") in ("ir", "un", "in", "non", "not", "no")


def unknown_name(kind: str, value: str, valid: Iterable[str], fix: str = "") -> ConfigError:
    """Build the standard error for an unknown name: what, the value, a suggestion, the choices."""
    names = sorted(valid)
    msg = f"unknown {kind} '{value}'{did_you_mean(value, names)}; valid: {', '.join(names)}"
    if fix:
        msg += f"; {fix}"
    return ConfigError(msg)


def guarded_call(who: str, method, *args, **kwargs):
    """method(*args, **kwargs) of code the harness calls but did not write (a plug-in
    retriever, encoder or model; a server that failed): an exception it raises is one error
    line naming it, not a traceback from inside the harness (the original stays chained)."""
    try:
        return method(*args, **kwargs)
    except HarnessError:
        raise
    except Exception as exc:
        raise HarnessError(f"{who} ({_called(method)}) failed: {said(exc)}") from exc


def _called(method) -> str:
    """`Class.method` of a bound method (a classmethod: its class), else the callable's own
    name (a function, a partial: its type)."""
    owner, name = getattr(method, "__self__", None), getattr(method, "__name__", None)
    if owner is not None and name:
        return f"{owner.__name__ if isinstance(owner, type) else type(owner).__name__}.{name}"
    return getattr(method, "__qualname__", None) or type(method).__name__


def said(exc: BaseException) -> str:
    """An exception as one line: its type and message (lines joined), the type alone when it
    has no message."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


POSITIVE = "a positive integer"


def check_int(value: Any, key: str, low: int = 1, what: str = "") -> int:
    """`value` (a NumPy integer too) as an int when it is an integer >= `low`; else a
    ConfigError naming `key` and `what` it must be (by default 'an integer >= low'); a bool
    is no integer here, though Python counts it as one."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ConfigError(f"{key} must be {what or f'an integer >= {low}'}, got {value!r}")
    return int(value)


def check_flag(value: Any, key: str) -> bool:
    """`value` when it is true or false; else a ConfigError naming `key` (Python's truthiness
    would take "sometimes" or 5 for true)."""
    if not isinstance(value, bool):
        raise ConfigError(f"{key} must be true or false, got {value!r}")
    return value
