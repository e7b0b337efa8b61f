"""Bring your own run: score a ranking some other system wrote, as a TREC run or as JSON.

TREC: one line per retrieved chunk, `qid Q0 docid rank score tag` (trec_eval reads the score,
not the rank). JSON: `{"qid": {"docid": score, ...}, ...}`. Either may be gzipped. Query ids
the benchmark does not know are reported and left out (a file with none it knows is refused);
chunk ids the corpus lacks are reported and stay in the ranked list (code -1), where
`run.unknown_ids` decides how they are scored (harness.core.run.files.apply_unknown_ids);
queries the run lacks score 0. A large TREC file is read, checked and ordered by compiled code
(harness.core.run.store), with the same notes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import BenchmarkError, ConfigError
from harness.core.files import sha256_of
from harness.core.run import Run
from harness.core.run.files import (
    FORMATS,
    check_queries,
    check_run_file,
    extra_queries_note,
    read_run,
    read_run_rows,
    run_stem,
)
from harness.core.types import Chunk, Query

_EXAMPLES = 5
KEY = "retriever.path"  # the setting that names the file, for a missing one


def _examples(items: Iterable[str]) -> list[str]:
    return list(itertools.islice(items, _EXAMPLES))


def pinned(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """A run_file config with `sha256` set to its file's checksum: a cell is its file's
    content, not its path (an edited file is another cell; the same file by another path is
    the same cell). A checksum given in the config must match the file."""
    cfg = dict(cfg)
    if not cfg.get("path") or cfg["path"] == "???":
        return cfg  # RunFile says what is missing
    path = Path(str(cfg["path"])).expanduser()
    check_run_file(path, cfg.get("format", "auto"), KEY)
    cfg["sha256"] = _checked(path, cfg.get("sha256"))
    return cfg


_DIGESTS: dict[tuple[str, int, int], str] = {}  # (path, size, mtime) -> its "sha256:<hex>"


def _checked(path: Path, given: str | None) -> str:
    """The file's "sha256:<hex>", which must be `given` when one is. Hashed once per process
    while its size and modification time stay (the plan pins it, the read checks it)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    found = _DIGESTS.get(key)
    if found is None:
        found = _DIGESTS[key] = "sha256:" + sha256_of(path)
    if given not in (None, found):
        raise BenchmarkError(
            f"{path}: its checksum is {found}, but retriever.sha256 is {given} (pinned, or "
            "taken when the run started); is it the right file, or is it being written?"
        )
    return found


class RunFile:
    """A retriever that replays a stored run; `notes` reports what did not match the benchmark
    (over the whole file: chunk ids past retrieval.depth are counted too)."""

    def __init__(
        self,
        path: str | None = None,
        format: str = "auto",
        name: str | None = None,
        sha256: str | None = None,  # the file's checksum: checked when the file is read
    ):
        if not path:
            raise ConfigError(
                "retriever=run_file needs retriever.path=FILE (a TREC run or a JSON run)"
            )
        self.path = Path(str(path)).expanduser()
        if format not in FORMATS:
            raise ConfigError(f"retriever.format is '{format}'; valid: {', '.join(FORMATS)}")
        self.format = format
        self.name = name or re.sub(r"[^A-Za-z0-9._-]", "_", run_stem(self.path)) or "run"
        self.sha256 = sha256
        self.notes: dict[str, Any] = {}
        self._corpus: dict[str, int] = {}

    def index(self, corpus: Mapping[str, Chunk]) -> None:
        self._corpus = {cid: i for i, cid in enumerate(corpus)}  # the corpus codes

    def search(self, queries: Iterable[Query], *, depth: int | None) -> Run:
        """The file's rankings of `queries`, cut at `depth` (None: the longest list, so
        nothing is cut, as trec_eval reads a run)."""
        if self.sha256 is not None:  # the file the run was planned on (or pinned), still
            check_run_file(self.path, self.format, KEY)
            _checked(self.path, self.sha256)
        wanted = {q.query_id for q in queries}
        rows = read_run_rows(self.path, self.format, KEY)
        if rows is not None:
            if depth is None:
                depth = max(1, int(rows.lengths().max(initial=0)))
            return self._search_rows(rows, wanted, depth)
        scores = read_run(self.path, self.format, KEY)
        if depth is None:
            depth = max(1, max(map(len, scores.values()), default=0))
        unknown_q = [q for q in scores if q not in wanted]
        check_queries([q for q, docs in scores.items() if docs], wanted, f"{self.path}: ")
        kept: dict[str, dict[str, float]] = {}
        unknown_docs: dict[str, None] = {}
        unknown = total = truncated = 0
        for qid, docs in scores.items():
            if qid not in wanted:
                continue
            total += len(docs)
            kept[qid] = docs
            absent = [d for d in docs if d not in self._corpus]
            if absent:
                unknown += len(absent)
                unknown_docs.update(dict.fromkeys(absent))
            truncated += len(docs) > depth
        examples = _examples(unknown_docs)
        self._check_chunks(total, unknown, examples)
        self._notes(len(scores), unknown_q, unknown, len(unknown_docs), examples, truncated)
        return Run.from_scores(self.name, kept, depth, self._corpus)

    def _search_rows(self, rows, wanted: set[str], depth: int) -> Run:
        """search() over a large run's rows (harness.core.run.store.Rows): the same checks
        and notes, counted with arrays."""
        qids = rows.query_ids
        keep = np.fromiter((q in wanted for q in qids), bool, len(qids))
        unknown_q = [q for q, k in zip(qids, keep.tolist()) if not k]
        check_queries(qids, wanted, f"{self.path}: ")
        codes = rows.codes(self._corpus)
        kept_rows = keep[rows.qcode]
        absent = np.flatnonzero(kept_rows & (codes < 0))
        if rows.scattered():  # examples in query order, then file order
            absent = absent[np.argsort(rows.qcode[absent], kind="stable")]
        distinct, examples = rows.distinct(absent, _EXAMPLES)
        self._check_chunks(int(kept_rows.sum()), len(absent), examples)
        truncated = int((rows.lengths()[keep] > depth).sum())
        self._notes(len(qids), unknown_q, len(absent), distinct, examples, truncated)
        return Run.from_store(self.name, rows.store(depth, keep, codes), depth)

    def _check_chunks(self, total: int, unknown: int, examples: list[str]) -> None:
        if total and unknown == total:
            raise BenchmarkError(
                f"{self.path}: none of its chunk ids is in the corpus (e.g. "
                f"{', '.join(map(repr, examples))}); is it a run for another benchmark?"
            )

    def _notes(self, n_queries, unknown_q, unknown, distinct, examples, truncated) -> None:
        self.notes = {
            "path": str(self.path),
            "queries_in_run": n_queries,
            "unknown_query_ids": {"count": len(unknown_q), "examples": _examples(unknown_q)},
            "unknown_chunk_ids": {"entries": unknown, "distinct": distinct, "examples": examples},
            "queries_cut_at_depth": truncated,
        }

    def messages(self) -> list[str]:
        """Human-readable notes for the terminal about query ids left out and lists cut (the
        note on chunk ids the corpus lacks comes from where the run is scored)."""
        n = self.notes
        out = []
        if n["unknown_query_ids"]["count"]:
            u = n["unknown_query_ids"]
            out.append(extra_queries_note(u["count"], u["examples"]))
        if n["queries_cut_at_depth"]:
            out.append(
                f"{n['queries_cut_at_depth']} query list(s) are longer than retrieval.depth and "
                f"were cut to it; raise retrieval.depth to score them whole"
            )
        return out
