"""Read a result cell back from disk (metrics.json + per_query.csv) for compare and leaderboards."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.results import SCHEMA


@dataclass(frozen=True)
class Cell:
    """One (retriever, corpus) result: its metadata and per-query values in file order."""

    path: Path
    retriever: str
    corpus: str
    checksum: str
    depth: int
    relevance_level: int
    query_ids: tuple[str, ...]
    strata: dict[str, tuple[str, ...]]  # stratification -> label per query
    values: dict[str, np.ndarray]  # metric -> value per query (NaN when undefined)
    doc: dict[str, Any]


def load_cell(path: Path) -> Cell:
    """Read a results/<corpus>/<retriever>/ folder; any problem is one HarnessError line."""
    path = Path(path)
    metrics_file, per_query_file = path / "metrics.json", path / "per_query.csv"
    if not path.is_dir():
        raise HarnessError(f"result folder not found: {path}; give results/<corpus>/<retriever>")
    for f in (metrics_file, per_query_file):
        if not f.is_file():
            raise HarnessError(
                f"{path} is not a result folder (no {f.name}); give results/<corpus>/<retriever>"
            )
    try:
        doc = json.loads(metrics_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HarnessError(f"{metrics_file}: not valid JSON ({exc}); rerun that cell") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else None
        raise HarnessError(
            f"{metrics_file}: schema is {found!r}, expected '{SCHEMA}'; rerun that cell with "
            f"this version of the harness"
        )
    try:
        level = (doc.get("config") or {}).get("metrics", {}).get("relevance_level", 1)
        meta = dict(
            retriever=str(doc["retriever"]),
            corpus=str(doc["corpus"]),
            checksum=str(doc["benchmark"]["checksum"]),
            depth=int(doc["depth"]),
            relevance_level=int(level),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise HarnessError(f"{metrics_file}: missing or bad field {exc}; rerun that cell") from None
    query_ids, strata, values = _read_per_query(per_query_file)
    if len(query_ids) != doc["benchmark"].get("n_queries"):
        raise HarnessError(
            f"{per_query_file}: {len(query_ids)} rows but metrics.json says "
            f"{doc['benchmark'].get('n_queries')} queries; the folder is damaged, rerun that cell"
        )
    return Cell(path, **meta, query_ids=query_ids, strata=strata, values=values, doc=doc)


def _read_per_query(path: Path):
    text = path.read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or rows[0][:1] != ["query_id"] or "n_groups" not in rows[0]:
        raise HarnessError(f"{path}: header must start with query_id and hold n_groups")
    header = rows[0]
    split = header.index("n_groups")
    strata_names, metric_names = header[1:split], header[split + 1 :]
    query_ids: list[str] = []
    labels: dict[str, list[str]] = {s: [] for s in strata_names}
    columns: list[list[float]] = [[] for _ in metric_names]
    for no, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise HarnessError(f"{path}:{no}: {len(row)} fields, header has {len(header)}")
        query_ids.append(row[0])
        for s, v in zip(strata_names, row[1:split]):
            labels[s].append(v)
        for col, v in zip(columns, row[split + 1 :]):
            try:
                col.append(float(v))
            except ValueError:
                raise HarnessError(f"{path}:{no}: value '{v}' is not a number") from None
    values = {m: np.asarray(c, dtype=np.float64) for m, c in zip(metric_names, columns)}
    return tuple(query_ids), {s: tuple(v) for s, v in labels.items()}, values
