"""Benchmark loaders and the data shipped with the package (the offline ``demo`` benchmark).

Notes about the data (a repeated gold group, judged ids the corpus lacks) name the file they
come from, so the same note means the same data: it is logged once per process, not once per
cell of a sweep or per system of an Experiment that loads the same benchmark again."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from contextvars import ContextVar

_NOTED: ContextVar[list[str] | None] = ContextVar("noted", default=None)
_OPEN = threading.Lock()
# while noted() blocks run: [the logger's effective level before, how many, its own level]
_opened: list[int] = []


class _Noted(logging.Filter):
    """Keep every data note (repeats too) for `noted()`; let a record on only where the
    logger's own level, before noted() opened it, would have let it through."""

    def filter(self, record: logging.LogRecord) -> bool:
        kept = _NOTED.get()
        if kept is not None and record.levelno >= logging.INFO:
            kept.append(record.getMessage())
        with _OPEN:
            return not _opened or record.levelno >= _opened[0]


@contextlib.contextmanager
def noted() -> Iterator[list[str]]:
    """The data notes logged inside the block, in order (for the API: a notebook shows no log).
    The logger is opened to notes meanwhile (below its level they would not be made at all),
    and shut again when the last block (of any thread) ends."""
    log = logging.getLogger("harness.data")
    with _OPEN:
        if not _opened:
            _opened[:] = [log.getEffectiveLevel(), 0, log.level]
            log.setLevel(min(logging.INFO, log.getEffectiveLevel()))
        _opened[1] += 1
    kept: list[str] = []
    token = _NOTED.set(kept)
    try:
        yield kept
    finally:
        _NOTED.reset(token)
        with _OPEN:
            _opened[1] -= 1
            if not _opened[1]:
                log.setLevel(_opened[2])
                _opened.clear()


class _OncePerProcess(logging.Filter):
    """Let a record through the first time its message is seen."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.seen:
            return False
        self.seen.add(message)
        return True


logging.getLogger("harness.data").addFilter(_Noted())  # before the once-per-process filter
logging.getLogger("harness.data").addFilter(_OncePerProcess())
