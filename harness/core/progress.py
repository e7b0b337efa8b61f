"""Progress of long work (encoding, strata building): a tqdm bar on a terminal, and where
nobody watches a bar (CI, SLURM logs, a pipe) one `note:` line at a steady interval with
done/total, rate and ETA, so a log shows that the work moves and when it will end. When one
part of the work (a cache shard of 1,024 texts) takes longer than the interval, a line still
comes every interval, saying how long the current part has been running."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Any

log = logging.getLogger("harness.progress")

INTERVAL_ENV = "HARNESS_PROGRESS_S"  # seconds between log lines (default 30; 0 = every step)
DEFAULT_INTERVAL_S = 30.0


class Progress:
    """`with Progress(total, "encoding corpus", "text") as p: ... p.update(n)`."""

    def __init__(self, total: int, label: str, unit: str = "item", *, enabled: bool = True):
        self.total, self.label, self.unit = total, label, unit
        self.done = 0
        self.enabled = enabled and total > 0
        self._bar: Any = None
        self._started = self._last = self._updated = time.monotonic()
        self._logged = False
        self.interval = _interval()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        if self.enabled and on_terminal():
            try:
                from tqdm import tqdm

                self._bar = tqdm(desc=label, unit=unit, total=total, file=sys.stderr)
            except ImportError:  # tqdm comes with the dependencies; the log lines stand in
                self._bar = None
        if self.enabled and self._bar is None and self.interval > 0:
            self._beat = threading.Thread(target=self._heartbeat, daemon=True)
            self._beat.start()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(failed=exc[0] is not None)

    def update(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
            return
        now = time.monotonic()
        with self._lock:
            self._updated = now
            if now - self._last < self.interval or self.done >= self.total:
                return
            self._last = now
            self._logged = True
        log.info(self.line(now))

    def _heartbeat(self) -> None:
        """A line every interval while no update came: the log shows the work is alive."""
        while not self._stop.wait(self.interval / 4):
            now = time.monotonic()
            with self._lock:
                if now - self._last < self.interval or self.done >= self.total:
                    continue
                self._last = now
                self._logged = True
                running = now - self._updated
            log.info(f"{self.line(now)}; the current part running for {_duration(running)}")

    def line(self, now: float | None = None) -> str:
        """'encoding x: 2,048/9,000 texts (23%), 85.1 texts/s, ETA 1 min 22 s'."""
        elapsed = max((now or time.monotonic()) - self._started, 1e-9)
        rate = self.done / elapsed
        pct = 100.0 * self.done / self.total
        text = f"{self.label}: {self.done:,}/{self.total:,} {self.unit}s ({pct:.0f}%)"
        text += f", {rate:,.1f} {self.unit}s/s"
        if self.done < self.total and rate > 0:
            text += f", ETA {_duration((self.total - self.done) / rate)}"
        elif self.done >= self.total:
            text += f", took {_duration(elapsed)}"
        return text

    def close(self, failed: bool = False) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
            self._beat = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self.enabled and self._logged and not failed:
            log.info(self.line())  # the last word in a log that showed the work under way
        self.enabled = False


def on_terminal() -> bool:
    """Whether stderr is a terminal a person watches (not CI, not a file)."""
    return not os.environ.get("CI") and sys.stderr.isatty()


def _interval() -> float:
    text = os.environ.get(INTERVAL_ENV)
    try:
        return max(0.0, float(text)) if text else DEFAULT_INTERVAL_S
    except ValueError:
        log.info(f"{INTERVAL_ENV}={text!r} is not a number of seconds; a line every 30 s")
        return DEFAULT_INTERVAL_S


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
