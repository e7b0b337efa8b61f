"""A cell on disk: its files written atomically, and read back (the one reader of cells:
harness.cell.result.Evaluation.from_disk goes through `read_metrics`, which migrates a cell
written by an earlier version, and `read_per_query`)."""

from __future__ import annotations

import contextlib
import csv
import ctypes
import functools
import glob
import io
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import DISK_ERRNOS, HarnessError
from harness.core.faults import checkpoint
from harness.core.files import hold_lock, make_dirs, new_dirs, remove_empty
from harness.core.run import Run
from harness.core.run.files import has_space, trec_lines
from harness.core.types import Benchmark
from metrics.registry import aggregate_of
from metrics.stats import aggregate

SCHEMA = "retrieval-harness/metrics/3"  # bump when the layout of metrics.json changes
EARLIER = ("retrieval-harness/metrics/1", "retrieval-harness/metrics/2")  # what migrate reads
# what a cell folder holds (a rewrite may drop one; anything else is not the harness's)
CELL_FILES = (
    "metrics.json",
    "per_query.csv",
    "run.trec",
    "qrels.trec",
    "config.yaml",
    "timings.json",
)
log = logging.getLogger("harness.cell")


def per_query_csv(
    benchmark: Benchmark, strata: Mapping[str, Sequence[str]], values: Mapping[str, np.ndarray]
) -> str:
    """One row per query: id, its strata, number of gold groups, then every metric."""
    header = ["query_id", *strata, "n_groups", *values]
    lines = [",".join(map(_csv_field, header))]
    for i, q in enumerate(benchmark.queries):
        row = [q.query_id, *(strata[s][i] for s in strata), str(len(q.groups))]
        row += [repr(float(v[i])) for v in values.values()]
        lines.append(",".join(map(_csv_field, row)))
    return "\n".join(lines) + "\n"


def _csv_field(text: str) -> str:
    # by hand: the csv module, ending lines with \n, leaves a lone \r unquoted, which readers
    # (csv.reader too) take for a line break
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def run_trec(benchmark: Benchmark, run: Run) -> str:
    """The run in TREC format (qid Q0 docid rank score tag), benchmark query order, canonical
    ranking order, full precision."""
    ids = [run.name, *(q.query_id for q in benchmark.queries)]
    bad = [x for x in ids if not x or has_space(x)] + [c for c in benchmark.corpus if has_space(c)]
    if bad:
        raise HarnessError(
            f"cannot write run.trec: id '{bad[0]}' contains white space, which TREC format "
            f"cannot hold; rename it in the benchmark (or retriever.name)"
        )
    return trec_lines(run, ids[1:], run.name)


def qrels_trec(benchmark: Benchmark) -> str:
    """The benchmark's judgments in TREC qrels format (qid 0 docid grade), as the standard
    metrics read them: the qrels when it has them, else grade 1 for every group member."""
    lines = []
    for q in benchmark.queries:
        for cid, grade in sorted(q.judgments.items()):
            lines.append(f"{q.query_id} 0 {cid} {grade}")
    return "\n".join(lines) + ("\n" if lines else "")


def write_cell(cell_dir: Path, files: Mapping[str, str]) -> None:
    """Replace `cell_dir` with exactly `files`: written and fsynced in a sibling temp dir, then
    swapped in. A reader sees the old cell or the new one, never a mix and never neither (on
    Linux the swap is one rename-exchange; elsewhere a kill between two renames is repaired
    by `tidy` on the next run). A failure leaves the old cell as it was. Writers of one cell
    take turns (`lock`)."""
    _check_ours(cell_dir, files)
    try:
        with lock(cell_dir):
            _swap_in(cell_dir, files)
    except OSError as exc:
        if exc.errno not in DISK_ERRNOS:
            raise
        raise HarnessError(
            f"cannot write the cell {cell_dir}: {exc.strerror}; the previous result (if any) is "
            f"kept; free space there or set results.dir to another folder"
        ) from None


def _check_ours(cell_dir: Path, files: Mapping[str, str]) -> None:
    """Refuse to replace what the harness did not write: a file where the cell folder goes,
    or a folder holding files a cell does not have (replacing it would delete them)."""
    if cell_dir.is_symlink() or (cell_dir.exists() and not cell_dir.is_dir()):
        raise HarnessError(
            f"{cell_dir} is a file, not a result folder; move it away (the harness never moves "
            "a file it did not write) or set results.dir to another folder"
        )
    if cell_dir.is_dir():
        ours = {*CELL_FILES, *files}
        foreign = sorted(p.name for p in cell_dir.iterdir() if p.name not in ours)
        if foreign:
            raise HarnessError(
                f"{cell_dir} holds {foreign[0]!r}"
                f"{f' and {len(foreign) - 1} more' if len(foreign) > 1 else ''}, which is not a "
                "cell file; move it away (replacing the folder would delete it) or set "
                "results.dir to another folder"
            )


def _swap_in(cell_dir: Path, files: Mapping[str, str]) -> None:
    parent = cell_dir.parent
    tmp = Path(tempfile.mkdtemp(prefix=f".{cell_dir.name}.new-", dir=parent))
    try:
        for name, text in files.items():
            with open(tmp / name, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, 0o755)
        checkpoint("cell.write")
        if not cell_dir.exists():
            os.replace(tmp, cell_dir)
        elif _exchange(tmp, cell_dir):  # tmp now holds the old cell
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            old = parent / f".{cell_dir.name}.old-{uuid.uuid4().hex[:8]}"
            os.replace(cell_dir, old)
            os.replace(tmp, cell_dir)
            shutil.rmtree(old, ignore_errors=True)
        _fsync_dir(parent)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def lock(cell_dir: Path) -> Iterator[None]:
    """Hold the cell's lock, `results/.locks/<corpus>/<cell>.lock`: one writer per cell, across
    processes and machines sharing the folder (a second writer waits, with a note). Leftovers
    of an interrupted write are tidied on entry; a write that fails before any cell existed
    leaves no folder behind. Not reentrant: write_cell takes it."""
    parent = cell_dir.parent
    made = new_dirs(parent)
    make_dirs(parent)
    path = parent.parent / ".locks" / parent.name / f"{cell_dir.name}.lock"
    try:
        with hold_lock(path, cell_dir, f"the cell {cell_dir}"):
            tidy(cell_dir)
            yield
    finally:
        if not cell_dir.exists():
            remove_empty(made)


def tidy(cell_dir: Path) -> None:
    """Remove what an interrupted write left beside `cell_dir`: temp folders of a new cell,
    and the old cell moved aside (put back first if the new one never arrived)."""
    parent = cell_dir.parent
    name = glob.escape(cell_dir.name)  # cell names hold brackets: bm25[k1=0.5]
    olds = sorted(parent.glob(f".{name}.old-*"), key=os.path.getmtime)
    if olds and not cell_dir.exists():
        os.replace(olds.pop(), cell_dir)
        log.info(f"{cell_dir}: restored the previous result an interrupted write had moved aside")
    for leftover in [*olds, *parent.glob(f".{name}.new-*")]:
        shutil.rmtree(leftover, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where the system
    cannot, so the caller falls back to two renames. Python's os module has no binding."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    return renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0


@functools.cache
def _renameat2():
    """libc's renameat2, looked up once per process; None off Linux or on an old libc."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2  # the process's own libc
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn


def read_metrics(path: Path, *, with_earlier: bool = False):
    """A cell folder's metrics.json, migrated to the current schema and checked; any problem
    is one HarnessError naming the file. With `with_earlier`, (doc, what a cell written by
    an earlier version lacks or None, its per_query.csv column names -> the current ones)."""
    path = Path(path)
    metrics_file = path / "metrics.json"
    if not path.is_dir():
        raise HarnessError(f"result folder not found: {path}; give results/<corpus>/<retriever>")
    if not metrics_file.is_file():
        raise HarnessError(
            f"{path} is not a result folder (no metrics.json); give results/<corpus>/<retriever>"
        )
    try:
        doc = json.loads(metrics_file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise HarnessError(f"{metrics_file}: not valid JSON ({exc}); rerun that cell") from None
    found = doc.get("schema") if isinstance(doc, dict) else None
    if found != SCHEMA and found not in EARLIER:
        raise UnknownSchema(
            f"{metrics_file}: schema is {found!r}, which this version of the harness does not "
            f"read (it writes '{SCHEMA}'); use the version that wrote it, or rerun that cell "
            "with this one"
        )
    shape = _bad_shape(doc)
    if shape:
        raise HarnessError(f"{metrics_file}: {shape}; the file is damaged, rerun that cell")
    # _bad_shape has typed these blocks; the first non-number found is the error
    semantic = doc["semantic"] if isinstance(doc.get("semantic"), dict) else {}
    diagnostics = [(n, d) for n, d in (doc.get("diagnostics") or {}).items() if isinstance(d, dict)]
    checks = [("results", doc.get("results")), ("variance", doc.get("variance"))]
    checks += [(f"semantic.{part}", semantic.get(part)) for part in _SEMANTIC_PARTS]
    checks += [(f"diagnostics.{n}.value", d.get("value")) for n, d in diagnostics]
    bad = next((b for where, obj in checks if (b := _not_numeric(obj, where))), None)
    if bad:
        raise HarnessError(
            f"{metrics_file}: {bad} is not a number; the file is damaged, rerun that cell"
        )
    before = list(doc["metrics"])
    doc, earlier = migrate(doc)
    renames = {old: new for old, new in zip(before, doc["metrics"]) if old != new}
    return (doc, earlier, renames) if with_earlier else doc


class UnknownSchema(HarnessError):
    """metrics.json of a schema this version neither writes nor migrates (a newer one's?)."""


def migrate(doc: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """metrics.json of an earlier schema in the current layout, and what that cell lacks of
    what this version records (None: nothing). The one place that knows earlier layouts:
    readers see metrics/3 only; a run recomputes a cell that lacks something (one note).

    metrics/1 -> metrics/2: `timings_file` goes. metrics/2 guarantees the overall tie
    ranges, the corpus diagnostics, the relevance and run.unknown_ids settings, and, in a
    semantic block, the every-cluster coverage; a metrics/1 cell without one of them keeps
    what it has (tie ranges absent, diagnostics empty, no semantic block).
    metrics/2 -> metrics/3: metric names as ir_measures prints them ('ndcg_cut@10' is
    'nDCG@10', 'map' is 'AP') and the group metrics as group_ndcg / group_mrr (they were
    'ndcg@K' / 'mrr@K'); the values are the same (docs/metrics.md#names).
    Any schema: a run_file cell written before run files were identified by their checksum
    lacks `retriever.sha256`."""
    written = doc["schema"].split("/", 1)[1]  # "metrics/1"
    retriever = (doc.get("config") or {}).get("retriever") or {}
    unpinned = retriever.get("type") == "run_file" and not retriever.get("sha256")
    lacks = ["run file checksum"] if unpinned else []
    if doc["schema"] == SCHEMA:
        return doc, (f"{written}: no {lacks[0]}" if lacks else None)
    if doc["schema"] == EARLIER[0]:
        doc = dict(doc)
        doc.pop("timings_file", None)
        if "ties" not in doc["results"]["overall"]:
            lacks.append("tie ranges")
        if "diagnostics" not in doc:
            lacks.append("corpus diagnostics")
            doc["diagnostics"] = {}
        config = doc["config"]
        if "relevance" not in config:
            lacks.append("relevance settings")
        if not isinstance(config.get("run"), dict) or "unknown_ids" not in config["run"]:
            lacks.append("run.unknown_ids")
        semantic = doc.get("semantic")
        if isinstance(semantic, dict) and "all" not in (semantic.get("coverage") or {}):
            lacks.append("the every-cluster coverage")
            doc["semantic"] = None
    doc = dict(_renamed(doc, _earlier_names(doc)), schema=SCHEMA)
    return doc, (f"{written}: no {', no '.join(lacks)}" if lacks else None)


# the semantic block's numeric parts, in the order read_metrics checks them
_SEMANTIC_PARTS = "aggregates grid hop_grid coverage tertiles clusters population".split()

# metrics/2's metric families (lower case, as it parsed them) -> the current printed prefix
_V2_FAMILIES = {
    "coverage": "coverage",
    "perfrecall": "perfrecall",
    "ndcg": "group_ndcg",
    "mrr": "group_mrr",
    "ndcg_cut": "nDCG",
    "recall": "R",
    "p": "P",
    "map_cut": "AP",
    "map": "AP",
    "recip_rank": "RR",
    "success": "Success",
    "rprec": "Rprec",
    "answer_recall": "answer_recall",
    "answer_rank": "answer_rank",
    "outdated": "outdated",
    "dseper": "dseper",
    "dseper_hard": "dseper_hard",
    "seper": "seper",
}
_V2_ALIASES = {
    "ap": "map_cut",
    "rr": "recip_rank",
    "hit": "success",
    "hits": "success",
    "precision": "p",
    "r-precision": "rprec",
    "r_precision": "rprec",
    "rprecision": "rprec",
}
_V2_NAME = re.compile(r"^([a-z_\-]+)(?:\(rel=(\d+)\))?(?:@(\d+))?$")


def _v2_name(name: str) -> str | None:
    """A metric name as metrics/2 wrote or read it, in the current spelling (None: not one)."""
    m = _V2_NAME.match(str(name).strip().lower())
    if not m:
        return None
    family = _V2_ALIASES.get(m.group(1), m.group(1))
    if family not in _V2_FAMILIES:
        return None
    level = f"(rel={m.group(2)})" if m.group(2) and m.group(2) != "1" else ""
    return f"{_V2_FAMILIES[family]}{level}{'' if m.group(3) is None else '@' + m.group(3)}"


def _earlier_names(doc: Mapping[str, Any]) -> dict[str, str]:
    """An earlier cell's metric names -> the current ones (those that changed)."""
    return {n: new for n in doc["metrics"] if (new := _v2_name(n)) is not None and new != n}


def _renamed(doc: dict[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """`doc` with metric names renamed wherever metrics.json keys by them: the metric list,
    every summary, the variance block, the semantic block's metric tables, and the config's
    metrics.names."""

    def keys(d):
        return {names.get(k, k): v for k, v in d.items()} if isinstance(d, dict) else d

    def summary(s):
        return {stat: keys(v) for stat, v in s.items()} if isinstance(s, dict) else s

    results = {
        strat: summary(b) if strat == "overall" else {lab: summary(s) for lab, s in b.items()}
        for strat, b in doc["results"].items()
    }
    out = dict(doc, metrics=[names.get(m, m) for m in doc["metrics"]], results=results)
    if isinstance(doc.get("variance"), dict):
        out["variance"] = keys(doc["variance"])
    semantic = doc.get("semantic")
    if isinstance(semantic, dict):
        semantic = dict(semantic)
        for part in ("grid", "hop_grid", "aggregates", "population"):
            semantic[part] = _deep_keys(semantic.get(part), names)
        out["semantic"] = semantic
    config = doc["config"]
    asked = (config.get("metrics") or {}).get("names")
    if isinstance(asked, list):
        spelled = _v2_config_names(asked, config["metrics"].get("k") or [])
        out["config"] = dict(config, metrics=dict(config["metrics"], names=spelled))
    return out


def _v2_config_names(asked: Sequence[str], ks: Sequence[int]) -> list[str]:
    """metrics/2's metrics.names in spellings that read the same now. A bare cut family
    expanded over metrics.k and still does, except recip_rank (now trec_eval's, the whole
    list), written out at each K; bare nDCG and AP now mean the whole list, so those two
    keep their trec_eval family names."""
    out: list[str] = []
    for name in asked:
        m = _V2_NAME.match(str(name).strip().lower())
        family = _V2_ALIASES.get(m.group(1), m.group(1)) if m else None
        if family not in _V2_FAMILIES:
            out.append(name)
        elif m.group(3) is not None or family in ("map", "rprec", "answer_rank"):
            out.append(_v2_name(name))
        else:
            level = f"(rel={m.group(2)})" if m.group(2) and m.group(2) != "1" else ""
            if family == "recip_rank":
                out += [f"RR{level}@{k}" for k in ks]
            elif family in ("ndcg_cut", "map_cut"):  # bare nDCG and AP: the whole list
                out.append(family + level)
            else:
                out.append(_V2_FAMILIES[family] + level)
    return out


def _deep_keys(obj: Any, names: Mapping[str, str]) -> Any:
    """`obj` with every dict key in `names` renamed, at any depth (the semantic tables key by
    metric at several levels; their other keys are tertiles and cluster ids)."""
    if isinstance(obj, dict):
        return {names.get(k, k): _deep_keys(v, names) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_deep_keys(v, names) for v in obj]
    return obj


# metrics.json's fields and the JSON types readers rely on (None: may be null or absent).
_SHAPE = {
    "corpus": (str, False),
    "retriever": (str, False),
    "benchmark": (dict, False),
    "depth": (int, False),
    "metrics": (list, False),
    "results": (dict, False),
    "config": (dict, False),
    "provenance": (dict, True),
    "variance": (dict, True),
    "semantic": (dict, True),
    "diagnostics": (dict, True),
    "run": (dict, True),
    "variant": (dict, True),
    "display_name": (str, True),
}


def _bad_shape(doc: Mapping[str, Any]) -> str | None:
    """What is missing or of the wrong type among the fields every reader uses."""
    for key, (kind, optional) in _SHAPE.items():
        value = doc.get(key)
        if value is None and optional:
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"'{key}' should be a {kind.__name__}, found {_short_repr(value)}"
    if not all(isinstance(m, str) for m in doc["metrics"]):
        return "'metrics' should list metric names"
    for key in ("retriever", "retrieval"):
        if not isinstance(doc["config"].get(key), dict):
            return f"'config.{key}' should be an object"
    overall = doc["results"].get("overall")
    if not isinstance(overall, dict) or not isinstance(overall.get("mean"), dict):
        return "'results.overall.mean' should be an object"
    ties = overall.get("ties")  # absent in some earlier cells (migrate)
    if ties is not None and not (
        isinstance(ties, dict)
        and all(b is None or (isinstance(b, list) and len(b) == 2) for b in ties.values())
    ):
        return "'results.overall.ties' should map metrics to [low, high]"
    if not isinstance(doc["benchmark"].get("checksum"), str):
        return "'benchmark.checksum' should be a string"
    return None


_TEXT_FIELDS = frozenset({"worst_cluster", "label"})  # the only strings in numeric sections


def _not_numeric(obj: Any, where: str) -> str | None:
    """Where the first value that should be a number (or null) is not one; None when fine."""
    if obj is None or (isinstance(obj, (int, float)) and not isinstance(obj, bool)):
        return None
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in _TEXT_FIELDS and (value is None or isinstance(value, str)):
                continue
            bad = _not_numeric(value, f"{where}.{key}")
            if bad:
                return bad
        return None
    if isinstance(obj, list):
        return next((b for i, v in enumerate(obj) if (b := _not_numeric(v, f"{where}[{i}]"))), None)
    return f"{where} ({_short_repr(obj)})"


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_means(path: Path, values: Mapping[str, np.ndarray], doc: Mapping[str, Any]) -> None:
    """The per-query values must average to the means metrics.json reports: a cell whose
    per_query.csv was edited or damaged must not pass a regression gate."""
    means = ((doc.get("results") or {}).get("overall") or {}).get("mean") or {}
    for metric, column in values.items():
        if metric not in means:
            continue
        mine = aggregate(column[~np.isnan(column)], aggregate_of(metric))
        theirs = means[metric]
        same = mine == theirs if None in (mine, theirs) else abs(mine - theirs) <= 1e-9
        if not same:
            have = "hold no number" if mine is None else f"average to {mine}"
            raise HarnessError(
                f"{path}: the {metric} values {have} but metrics.json says "
                f"{'none' if theirs is None else theirs}; the folder is damaged, rerun that cell"
            )


def read_per_query(path: Path):
    """(query ids, stratification -> labels, gold groups per query, metric -> values) of a
    per_query.csv."""
    try:
        text = path.read_bytes().decode("utf-8")  # as written: a quoted \r stays \r
    except UnicodeDecodeError as exc:
        raise HarnessError(
            f"{path}: not UTF-8 text (byte {exc.start}); the folder is damaged, rerun that cell"
        ) from None
    except OSError as exc:
        raise HarnessError(f"{path}: cannot be read ({exc.strerror}); rerun that cell") from None
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:  # a bare \r in a field (an edited file, an older writer's label)
        raise HarnessError(f"{path}: {exc}; the folder is damaged, rerun that cell") from None
    if not rows or rows[0][:1] != ["query_id"] or "n_groups" not in rows[0]:
        raise HarnessError(f"{path}: header must start with query_id and hold n_groups")
    header = rows[0]
    split = header.index("n_groups")
    strata_names, metric_names = header[1:split], header[split + 1 :]
    query_ids: list[str] = []
    groups: list[int] = []
    labels: dict[str, list[str]] = {s: [] for s in strata_names}
    columns: list[list[float]] = [[] for _ in metric_names]
    for no, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise HarnessError(f"{path}:{no}: {len(row)} fields, header has {len(header)}")
        query_ids.append(row[0])
        if not row[split].isdigit():
            raise HarnessError(f"{path}:{no}: n_groups '{row[split][:40]}' is not a count")
        groups.append(int(row[split]))
        for s, v in zip(strata_names, row[1:split]):
            labels[s].append(v)
        for col, v in zip(columns, row[split + 1 :]):
            try:
                x = float(v)
            except ValueError:
                raise HarnessError(f"{path}:{no}: value '{v[:40]}' is not a number") from None
            if x in (float("inf"), float("-inf")):
                raise HarnessError(f"{path}:{no}: value '{v}' is not finite; rerun that cell")
            col.append(x)
    values = {m: np.asarray(c, dtype=np.float64) for m, c in zip(metric_names, columns)}
    strata = {s: tuple(v) for s, v in labels.items()}
    return tuple(query_ids), strata, groups, values
