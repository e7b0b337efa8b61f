"""Benchmark loaders and the data shipped with the package (the offline ``demo`` benchmark).

Notes about the data (a repeated gold group, judged ids the corpus lacks) name the file they
come from, so the same note means the same data: it is logged once per process, not once per
cell of a sweep or per system of an Experiment that loads the same benchmark again."""

from __future__ import annotations

import logging


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


logging.getLogger("harness.data").addFilter(_OncePerProcess())
