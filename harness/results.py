"""Write one cell's result files (metrics.json, per_query.csv, run.trec, config.yaml) atomically."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.types import Benchmark, Run

SCHEMA = "retrieval-harness/metrics/1"  # bump when the layout of metrics.json changes


def check_writable(directory: Path) -> None:
    """Fail before any work is done if results cannot be written under `directory`."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise HarnessError(
            f"results directory {directory} is not writable ({exc.strerror}); "
            f"set results.dir to a writable folder"
        ) from None


def to_json(obj: Any) -> str:
    """Deterministic JSON: NaN becomes null, floats at full precision, trailing newline."""
    return json.dumps(_clean(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _clean(obj: Any) -> Any:
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, np.floating):
        return _clean(float(obj))
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, Mapping):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def per_query_csv(
    benchmark: Benchmark, strata: Mapping[str, Sequence[str]], values: Mapping[str, np.ndarray]
) -> str:
    """One row per query: id, its strata, number of gold groups, then every metric."""
    header = ["query_id", *strata, "n_groups", *values]
    lines = [",".join(header)]
    for i, q in enumerate(benchmark.queries):
        row = [_csv_field(q.query_id), *(strata[s][i] for s in strata), str(len(q.groups))]
        row += [repr(float(v[i])) for v in values.values()]
        lines.append(",".join(row))
    return "\n".join(lines) + "\n"


def _csv_field(text: str) -> str:
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def run_trec(benchmark: Benchmark, run: Run) -> str:
    """The run in TREC format (qid Q0 docid rank score tag), canonical order, full precision."""
    tag = run.name
    lines = []
    for q in benchmark.queries:
        ranking = run[q.query_id]
        for rank, (cid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1):
            lines.append(f"{q.query_id} Q0 {cid} {rank} {score!r} {tag}")
    bad = [x for x in (tag, *(q.query_id for q in benchmark.queries)) if not x or _has_space(x)]
    bad += [c for c in benchmark.corpus if _has_space(c)][:3]
    if bad:
        raise HarnessError(
            f"cannot write run.trec: id '{bad[0]}' contains white space, which TREC format "
            f"cannot hold; rename it in the benchmark (or retriever.name)"
        )
    return "\n".join(lines) + ("\n" if lines else "")


def qrels_trec(benchmark: Benchmark) -> str:
    """The benchmark's judgments in TREC qrels format (qid 0 docid grade), as the standard
    metrics read them: the qrels when it has them, else grade 1 for every group member."""
    lines = []
    for q in benchmark.queries:
        for cid, grade in sorted(q.judgments.items()):
            lines.append(f"{q.query_id} 0 {cid} {grade}")
    return "\n".join(lines) + ("\n" if lines else "")


def _has_space(text: str) -> bool:
    return any(c.isspace() for c in text)


def write_cell(cell_dir: Path, files: Mapping[str, str]) -> None:
    """Replace `cell_dir` with exactly `files`: written to a sibling temp dir, then swapped in.

    A reader sees the old cell or the new one, never a mix; a failure leaves the old cell.
    """
    parent = cell_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{cell_dir.name}.new-", dir=parent))
    try:
        for name, text in files.items():
            with open(tmp / name, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, 0o755)
        old = parent / f".{cell_dir.name}.old-{uuid.uuid4().hex[:8]}"
        if cell_dir.exists():
            os.replace(cell_dir, old)
        os.replace(tmp, cell_dir)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to a temp file beside `path`, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file normal rights
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
