"""What the leaderboard reads from results/: every cell's metrics.json, the published numbers
(shipped in harness/data/reference/, plus results/reference/*.csv), the corpus
diagnostics and the strata files. Nothing is computed
here; problems (a damaged cell, data that differ between cells of one corpus) are collected
as one line each so the rest still renders."""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cell.result import Evaluation
from harness.core.errors import HarnessError

# Folders under results/ that are not corpora.
RESERVED = {"strata", "reference"}
REFERENCE_COLUMNS = ("source", "corpus", "retriever", "label", "model_id", "metric", "value")
# A published row names the shipped config of its model (`qwen3-8b`); `<name>-rare`
# (conf/retriever/<name>-rare.yaml) runs that model as the RARE authors' evaluation code did
# (dtype, prompt names, encode API), and is what the reproduction compares when it was run.
AUTHORS_SUFFIX = "-rare"
AUTHORS, MODEL_CARD, SHIPPED = "authors' setup", "model card", "shipped"


@dataclass(frozen=True)
class Reference:
    source: str
    corpus: str
    retriever: str
    label: str
    model_id: str
    metric: str
    value: float  # percent, as published


@dataclass(frozen=True)
class Match:
    """The cell a published number is compared with, and which config that cell ran."""

    entry: Evaluation
    config: str  # AUTHORS (`<name>-rare`), SHIPPED (the one config, the authors' setup too),
    # or MODEL_CARD (an authors' config exists but was not run here)
    label: str  # how the reproduction report names the row

    @property
    def counts(self) -> bool:
        """A miss beyond the tolerance is a FAIL (and fails --check) unless the cell ran the
        model-card config, which is not how the authors ran it."""
        return self.config != MODEL_CARD


@dataclass
class Board:
    results_dir: Path
    cells: dict[str, dict[str, Evaluation]] = field(default_factory=dict)  # corpus -> retriever
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # worth saying, not a problem
    references: list[Reference] = field(default_factory=list)
    diagnostics: dict[str, dict[str, Any]] = field(default_factory=dict)  # corpus -> values
    strata: dict[str, dict[str, Any]] = field(default_factory=dict)  # corpus -> strata file

    @property
    def corpora(self) -> list[str]:
        return sorted(self.cells)

    def retrievers(self, corpora: list[str] | None = None) -> list[str]:
        """Names of the retrievers with a cell on any of `corpora` (default all), sorted."""
        names = {r for c in (corpora or self.corpora) for r in self.cells.get(c, {})}
        return sorted(names)

    def label(self, retriever: str) -> str:
        """How tables name a retriever: its cells' display_name (the retriever config's,
        with a variant's settings), else the published label, else the cell name."""
        for cells in self.cells.values():
            shown = cells[retriever].doc.get("display_name") if retriever in cells else None
            if shown:
                return str(shown)
        for ref in self.references:
            if ref.retriever == retriever and ref.label:
                return ref.label
        return retriever

    def reproducing(self, corpus: str, retriever: str) -> Match | None:
        """The cell a published number of `retriever` on `corpus` is compared with: the
        authors'-setup cell `<retriever>-rare` when it was run, else the cell of the config
        the row names (a model-card cell when an authors' config exists), else None."""
        cells = self.cells.get(corpus, {})
        authors = cells.get(retriever + AUTHORS_SUFFIX)
        if authors is not None:
            return Match(authors, AUTHORS, self.label(authors.retriever))
        entry = cells.get(retriever)
        if entry is None:
            return None
        if has_authors_config(retriever):
            return Match(entry, MODEL_CARD, f"{self.label(retriever)} (model card)")
        return Match(entry, SHIPPED, self.label(retriever))


def has_authors_config(retriever: str) -> bool:
    """Whether conf/retriever/ holds an authors'-setup config `<retriever>-rare`."""
    from harness.core.paths import group_options

    return retriever + AUTHORS_SUFFIX in group_options("retriever")


def collect(results_dir: Path) -> Board:
    """Read everything under results_dir; raise only when there is nothing to show at all."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise HarnessError(
            f"results folder not found: {results_dir}; run a sweep first, e.g. python -m harness "
            "-m retriever=bm25,minilm corpus=demo, or point --results at it"
        )
    board = Board(results_dir)
    board.references = _references(results_dir / "reference", board.problems)
    if not board.references:
        board.notes.append(
            "no published numbers found (harness/data/reference/ nor results/reference/); "
            "the reproduction report is empty"
        )
    for corpus_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        if corpus_dir.name in RESERVED or corpus_dir.name.startswith("."):
            continue
        for cell_dir in sorted(p for p in corpus_dir.iterdir() if p.is_dir()):
            if cell_dir.name.startswith("."):  # a cell being written (swapped in atomically)
                continue
            entry = _entry(cell_dir, board.problems)
            if entry is not None:
                board.cells.setdefault(entry.corpus, {})[entry.retriever] = entry
    for corpus, cells in board.cells.items():
        _flag_mixed(corpus, cells, board.problems)
        board.diagnostics[corpus] = _diagnostics(results_dir, corpus, cells, board.problems)
        strata = _strata(results_dir, corpus, cells, board.problems)
        if strata:
            board.strata[corpus] = strata
    if not board.cells:
        why = f" ({len(board.problems)} problem(s): {board.problems[0]})" if board.problems else ""
        raise HarnessError(
            f"no result cells under {results_dir}{why}; run some first, e.g. python -m harness "
            "-m retriever=bm25,minilm corpus=demo"
        )
    return board


def _entry(cell_dir: Path, problems: list[str]) -> Evaluation | None:
    f = cell_dir / "metrics.json"
    if not f.is_file():
        problems.append(f"{cell_dir}: no metrics.json (an interrupted run?); skipped")
        return None
    try:
        cell = Evaluation.from_disk(cell_dir)  # per_query.csv too: a damaged cell is skipped
    except HarnessError as exc:
        problems.append(
            f"{exc}; skipped".replace("; rerun that cell; skipped", "; skipped, rerun that cell")
        )
        return None
    if (cell.corpus, cell.retriever) != (cell_dir.parent.name, cell_dir.name):
        problems.append(
            f"{f}: says {cell.corpus}/{cell.retriever} but sits in "
            f"{cell_dir.parent.name}/{cell_dir.name}; shown under what the file says"
        )
    return cell


def _flag_mixed(corpus: str, cells: dict[str, Evaluation], problems: list[str]) -> None:
    """Cells of one corpus scored on different data cannot share a table row: flag the ones
    not on the most common checksum (all of them on a tie)."""
    counts = Counter(e.checksum for e in cells.values())
    if len(counts) < 2:
        return
    top = counts.most_common()
    majority = top[0][0] if top[0][1] > top[1][1] else None
    groups = []
    for checksum, _ in top:
        names = sorted(r for r, e in cells.items() if e.checksum == checksum)
        groups.append(f"{', '.join(names)} on {checksum[:19]}…")
        for r in names:
            cells[r].stale = checksum != majority
    problems.append(
        f"{corpus}: cells were scored on different benchmark data ({'; '.join(groups)}); the "
        "odd ones are marked †, rerun them with force=true"
    )


def _diagnostics(results_dir: Path, corpus: str, cells: dict[str, Evaluation], problems) -> dict:
    """Similarity and gold redundancy for a corpus: harness.diagnose's file first, else what
    the cells recorded (redundancy from any cell, Similarity from a dense one)."""
    from harness.strata.diagnostics import load, path_for

    checksums = Counter(e.checksum for e in cells.values())
    current = checksums.most_common(1)[0][0]
    out: dict[str, Any] = {}
    try:
        doc = load(path_for(results_dir, corpus))
    except HarnessError as exc:
        problems.append(f"{exc}; skipped")
        doc = None
    if doc is not None and doc.get("checksum") != current:
        problems.append(
            f"{path_for(results_dir, corpus)}: computed on other data than the cells; ignored, "
            f"rerun python -m harness.diagnose corpus={corpus}"
        )
        doc = None
    if doc is not None:
        out["redundancy"] = doc["gold_redundancy"]["value"]
        sims = doc.get("similarity") or {}
        pick = "minilm" if "minilm" in sims else (sorted(sims)[0] if sims else None)
        if pick:
            out["similarity"] = sims[pick]["value"]
            out["embedder"] = pick
    for name in sorted(cells):
        diag = cells[name].doc.get("diagnostics") or {}
        if cells[name].checksum != current:
            continue
        if "redundancy" not in out and diag.get("gold_redundancy"):
            out["redundancy"] = diag["gold_redundancy"]["value"]
        sim = diag.get("similarity")
        if "similarity" not in out and sim and sim.get("value") is not None:
            out["similarity"] = sim["value"]
            out["embedder"] = sim.get("embedder", name)
    return out


def _strata(results_dir: Path, corpus: str, cells: dict[str, Evaluation], problems) -> dict | None:
    """The strata file the corpus's cells were stratified with (cluster sizes, zero-query
    clusters), found by name under results/strata/<corpus>/."""
    for entry in cells.values():
        sem = entry.doc.get("semantic")
        if not sem or not sem.get("strata_file"):
            continue
        path = results_dir / "strata" / corpus / Path(sem["strata_file"]).name
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            clusters = [
                {k: int(c[k]) for k in ("id", "n_chunks", "n_queries")}
                | {"n_entities": int(c.get("n_entities", 0)) or None}
                | {"label": str(c.get("label") or "")}
                for c in doc["clusters"]
            ]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problems.append(f"{path}: cannot read the strata file ({_short(exc)}); no scatter")
            return None
        return {"path": path, "clusters": clusters, "summary": doc.get("summary", {})}
    return None


PACKAGED_REFERENCES = Path(__file__).resolve().parents[2] / "data" / "reference"


def _references(folder: Path, problems: list[str]) -> list[Reference]:
    """The published numbers shipped with the harness, then the user's own CSVs in
    results/reference/ (a file there with a shipped file's name replaces it)."""
    files = {f.name: f for f in sorted(PACKAGED_REFERENCES.glob("*.csv"))}
    if folder.is_dir():
        files.update({f.name: f for f in sorted(folder.glob("*.csv"))})
    out: list[Reference] = []
    for f in (files[name] for name in sorted(files)):
        try:
            with f.open(newline="", encoding="utf-8") as fh:
                reader = csv.DictReader(fh)
                missing = [c for c in REFERENCE_COLUMNS if c not in (reader.fieldnames or [])]
                if missing:
                    raise ValueError(
                        f"missing columns {missing} (found {reader.fieldnames}); expected "
                        f"{', '.join(REFERENCE_COLUMNS)}"
                    )
                for i, row in enumerate(reader, start=2):
                    try:
                        value = float(row["value"])
                    except (TypeError, ValueError):
                        raise ValueError(
                            f"line {i}: value {row['value']!r} is not a number"
                        ) from None
                    out.append(
                        Reference(**{c: row[c] for c in REFERENCE_COLUMNS[:-1]}, value=value)
                    )
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            problems.append(f"{f}: {exc}; published numbers from it are not shown")
    return out


def _short(exc: Exception) -> str:
    return str(exc).splitlines()[0][:120]
