"""Sweeps that finish: every cell of a Hydra multirun runs even when others fail, each job
leaves a record, the launching process prints a line per finished cell and a summary, writes
it to <sweep dir>/summary.{md,json}, and the command exits 1 when a cell failed.

Works alike for every launcher (basic, joblib, submitit_local, submitit_slurm): jobs write
their record as a file under <sweep dir>/cells/ (a shared filesystem on a cluster), and the
launching process watches that folder. The sweep dir reaches the jobs through an environment
variable, which local workers and SLURM jobs inherit."""

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback

from harness.core.files import to_json, write_text_atomic
from harness.core.tables import markdown

SWEEP_DIR_ENV = "HARNESS_SWEEP_DIR"
_LAUNCHER_PID_ENV = "HARNESS_SWEEP_PID"
POLL_S = 0.5

# What the last sweep of this process ended with (read by hydra_app.launch for the exit status).
last_summary: dict[str, Any] | None = None


def run_job(command: Callable[[dict[str, Any]], Any], resolved: dict[str, Any]) -> None:
    """One sweep job: run `command` and record how it ended, never raising on a bad cell
    (a raise, or exit, would end the sweep and its other cells with it)."""
    from hydra.core.hydra_config import HydraConfig

    from harness.cli.common import error_message

    hc = HydraConfig.get()
    started = time.perf_counter()
    record: dict[str, Any] = {
        "job": int(hc.job.num),
        "overrides": list(hc.overrides.task),
        "cell": None,
        "status": "failed",
        "error": None,
        "pid": os.getpid(),
    }
    try:
        result = command(resolved)
        record["status"] = "up to date" if getattr(result, "skipped", False) else "done"
        cell = getattr(result, "path", None)  # a cell run: its folder
        record["cell"] = None if cell is None else str(cell)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - a sweep must outlive any one cell
        message = error_message(exc)
        if message is None:  # a bug, not bad input: keep its traceback for the report
            traceback.print_exc()
            message = f"{type(exc).__name__}: {exc}".splitlines()[0]
        record["error"] = message
        print(f"error: {message}", file=sys.stderr)
    record["wall_s"] = round(time.perf_counter() - started, 3)
    folder = Path(os.environ.get(SWEEP_DIR_ENV) or hc.sweep.dir) / "cells"
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / f"{record['job']:05d}.json", to_json(record))
    if os.environ.get(_LAUNCHER_PID_ENV) == str(os.getpid()):  # basic launcher: say it now
        print(progress_line(record, _total(), error=False), file=sys.stderr, flush=True)
    if record["status"] == "failed" and os.environ.get("SLURM_JOB_ID"):
        atexit.register(_exit_failed)


def _exit_failed() -> None:
    """A SLURM job whose cell failed ends with status 1, so sacct and squeue show FAILED. It
    runs at exit, after submitit has stored the job's result: the launching process still
    reads the record and summarises the sweep, where a raise would end it."""
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(1)


def progress_line(record: Mapping[str, Any], total: int | None, error: bool = True) -> str:
    """'sweep [2/6] demo/bm25: done (1.2 s)'; with `error`, a failed job's error line (a job
    in another process printed it to its own log)."""
    of = f"/{total}" if total else ""
    what = _cell_label(record)
    line = f"sweep [{record['job'] + 1}{of}] {what}: {record['status']} ({record['wall_s']:.1f} s)"
    if error and record.get("error"):
        line += f" - {record['error']}"
    return line


def _cell_label(record: Mapping[str, Any]) -> str:
    if record.get("cell"):
        parts = Path(record["cell"]).parts
        return "/".join(parts[-2:])
    return " ".join(record.get("overrides") or []) or f"job {record['job']}"


def _total() -> int | None:
    text = os.environ.get("HARNESS_SWEEP_TOTAL")
    return int(text) if text else None


def job_list(config) -> list[list[str]] | None:
    """The overrides of every job the basic sweeper will launch, in job order (None for
    another sweeper): to count them and to name the ones that never reported."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    if "BasicSweeper" not in str(config.hydra.sweeper.get("_target_", "")):
        return None
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    params = [f"{k}={v}" for k, v in (config.hydra.sweeper.get("params") or {}).items()]
    args = [*params, *config.hydra.overrides.task]
    try:
        parsed = OverridesParser.create().parse_overrides(args)
        batches = BasicSweeper.split_arguments(parsed, None)
    except Exception:  # the sweeper reports bad overrides itself
        return None
    return [job for batch in batches for job in batch]


class Watcher:
    """Prints a line for each job record that appears (jobs in other processes), until
    stopped; then the records are read once more so none is missed."""

    def __init__(self, folder: Path, total: int | None):
        self.folder, self.total = folder, total
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._scan()

    def _loop(self) -> None:
        while not self._stop.wait(POLL_S):
            self._scan()

    def _scan(self) -> None:
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            if path.name in self.seen:
                continue
            self.seen.add(path.name)
            record = _read(path)
            if record is not None and record.get("pid") != os.getpid():
                print(progress_line(record, self.total), file=sys.stderr, flush=True)


def _claim(config) -> Path:
    """Make the sweep folder, atomically: a sweep started in the same second as another
    (the folder is named by the time) gets `<time>-2`, `-3`, ... instead of sharing its
    records, summary and multirun.yaml. The sweeper is handed the folder claimed here."""
    from omegaconf import open_dict, read_write

    wanted = Path(str(config.hydra.sweep.dir))
    wanted.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        path = wanted if n == 1 else wanted.with_name(f"{wanted.name}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        if path != wanted:
            with read_write(config.hydra), open_dict(config.hydra):
                config.hydra.sweep.dir = str(path)
        return path
    raise RuntimeError(f"cannot claim a sweep folder next to {wanted}")  # 999 in one second


def _shown(path: Path) -> Path:
    """`path` relative to the working directory when it lies under it (as printed), else
    absolute; jobs get the absolute path."""
    path = path.resolve()
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def summarize(
    sweep_dir: Path, jobs: Sequence[Sequence[str]] | None, wall_s: float
) -> dict[str, Any]:
    """Every job's record (a job that left none is 'no record': killed, or timed out)."""
    records = {}
    for path in sorted((sweep_dir / "cells").glob("*.json")):
        record = _read(path)
        if record is not None:
            record.pop("pid", None)
            records[int(record["job"])] = record
    count = max(len(jobs or []), max(records, default=-1) + 1)
    rows = []
    for num in range(count):
        rows.append(
            records.get(num)
            or {
                "job": num,
                "overrides": list(jobs[num]) if jobs and num < len(jobs) else [],
                "cell": None,
                "status": "no record",
                "error": "the job ended without a record (killed, or out of time?); see its log",
                "wall_s": None,
            }
        )
    counts = {s: sum(r["status"] == s for r in rows) for s in _STATUSES}
    return {
        "sweep_dir": str(sweep_dir),
        "cells": len(rows),
        "counts": counts,
        "wall_s": round(wall_s, 3),
        "failed": counts["failed"] + counts["no record"],
        "jobs": rows,
    }


_STATUSES = ("done", "up to date", "failed", "no record")


def summary_markdown(summary: Mapping[str, Any]) -> str:
    counts = summary["counts"]
    head = ", ".join(f"{counts[s]} {s}" for s in _STATUSES if counts[s] or s != "no record")
    lines = [
        f"Sweep {summary['sweep_dir']}: {summary['cells']} cell{'s' * (summary['cells'] != 1)} "
        f"({head}) "
        f"in {summary['wall_s']:.1f} s",
        "",
    ]
    body = [
        [str(r["job"]), _cell_label(r), r["status"]]
        + ["" if r.get("wall_s") is None else f"{r['wall_s']:.1f}", r.get("error") or ""]
        for r in summary["jobs"]
    ]
    align = ["right", "left", "left", "right", "left"]
    lines += markdown(["job", "cell", "status", "wall (s)", "error"], body, align=align)
    return "\n".join(lines) + "\n"


class SweepLog(Callback):
    """Hydra callback (conf/config.yaml hydra.callbacks): starts the watcher before the first
    job and writes the summary after the last; single runs are left alone. Launchers pickle
    the callbacks to their workers, so the live state is kept in this module, not on self."""

    def on_multirun_start(self, config, **kwargs: Any) -> None:
        global last_summary
        last_summary = None
        sweep_dir = _shown(_claim(config))
        (sweep_dir / "cells").mkdir(parents=True, exist_ok=True)
        jobs = job_list(config)
        os.environ[SWEEP_DIR_ENV] = str(sweep_dir.resolve())
        os.environ[_LAUNCHER_PID_ENV] = str(os.getpid())
        if jobs is not None:
            os.environ["HARNESS_SWEEP_TOTAL"] = str(len(jobs))
        watcher = Watcher(sweep_dir / "cells", len(jobs) if jobs else None)
        _live.update(sweep_dir=sweep_dir, jobs=jobs, started=time.perf_counter(), watcher=watcher)
        watcher.start()

    def on_multirun_end(self, config, **kwargs: Any) -> None:
        global last_summary
        if not _live:
            return
        _live["watcher"].stop()
        sweep_dir = _live["sweep_dir"]
        summary = summarize(sweep_dir, _live["jobs"], time.perf_counter() - _live["started"])
        text = summary_markdown(summary)
        write_text_atomic(sweep_dir / "summary.json", to_json(summary))
        write_text_atomic(sweep_dir / "summary.md", text)
        print("\n" + text + f"(also in {sweep_dir / 'summary.md'})", flush=True)
        last_summary = summary
        _live.clear()
        for key in (SWEEP_DIR_ENV, _LAUNCHER_PID_ENV, "HARNESS_SWEEP_TOTAL"):
            os.environ.pop(key, None)


_live: dict[str, Any] = {}  # the sweep under way in this (launching) process
