"""Load and validate benchmarks: RedQA JSON files, BEIR folders and the packaged demo.

Gold or judged chunk ids the corpus lacks are kept, as trec_eval keeps them: they count as
relevant (in R, in a group) and no retriever over the corpus can return them. Each loader
notes how many there are and records them in the metadata (`judged_not_in_corpus`)."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.core.errors import BenchmarkError, ConfigError
from harness.core.files import missing
from harness.core.frames import is_frame
from harness.core.paths import data_dir
from harness.core.types import Benchmark, Chunk, Query
from harness.data import download as datasets
from harness.data.beir import beir_benchmark, qrels_file, qrels_source
from harness.data.records import (
    _check_unique,
    absent_notes,
    hash_part,
    parse_date,
    query_record,
    text_id,
    text_of,
)

log = logging.getLogger("harness.data")

PACKAGED_DIR = Path(__file__).parent
FORMATS = ("redqa", "beir", "hf", "irds")


def load_benchmark(cfg: Mapping[str, Any]) -> Benchmark:
    """Load the benchmark a `corpus` config describes, downloading and verifying it if pinned."""
    fmt = cfg.get("format")
    if fmt not in FORMATS:
        raise ConfigError(f"corpus.format is '{fmt}'; valid: {', '.join(FORMATS)}")
    qrels = cfg.get("qrels")
    if qrels is not None and fmt not in ("beir", "irds"):
        raise ConfigError(
            f"corpus.qrels applies to BEIR folders and ir_datasets (corpus.format=beir or irds), "
            f"not to format {fmt}"
        )
    if fmt == "hf":  # imported here: `datasets` is only needed for Hub benchmarks
        from harness.data.hub import load_hub

        return load_hub(cfg)
    if fmt == "irds":
        from harness.data.irds import load_irds

        return load_irds(cfg)
    path, fix = _resolve_path(cfg)
    pinned = cfg.get("git_blob_sha1") if fix else None  # still to check against the file
    name = cfg.get("name") or _default_name(path)
    if fmt == "redqa":
        if path.suffix == ".jsonl" and (path.parent / "queries.jsonl").is_file():
            raise BenchmarkError(
                f"{path} is a file of the BEIR folder {path.parent}; give the folder "
                f"(load_benchmark('{path.parent}'), or corpus=beir corpus.path={path.parent})"
            )
        return load_redqa(path, name=name, pinned=pinned, fix=fix)  # checked on its bytes
    if pinned:
        datasets.verify(path, pinned, fix)
    bench = load_beir(path, name=name, split=cfg.get("split") or "test", qrels=qrels)
    if cfg.get("git_blob_sha1"):
        bench = replace(bench, metadata={**bench.metadata, "git_blob_sha1": cfg["git_blob_sha1"]})
    return bench


def _default_name(path: Path) -> str:
    return path.stem if path.is_file() else path.name


def data_files(cfg: Mapping[str, Any]) -> tuple[str, list[tuple[str | None, Path]]] | None:
    """(name, files) of the benchmark a `corpus` config describes, as load_benchmark would
    name and hash them, without reading them: a RedQA file (label None: its bytes alone), or
    a BEIR folder's three files with their labels, in the order the loader reads them. None
    where that takes loading (the Hub) or a file is not there (a download)."""
    if cfg.get("format") == "beir" and cfg.get("path") and not is_frame(cfg.get("qrels")):
        folder = Path(str(cfg["path"])).expanduser()
        qrels = qrels_file(folder, cfg.get("split") or "test", cfg.get("qrels"))
        files: list[tuple[str | None, Path]] = [
            *((label, folder / label) for label in ("corpus.jsonl", "queries.jsonl")),
            (f"qrels/{qrels.name}", qrels),
        ]
        name = cfg.get("name") or _default_name(folder)
    elif cfg.get("format") == "redqa":
        if cfg.get("path"):
            path = Path(str(cfg["path"])).expanduser()
        elif cfg.get("packaged"):
            path = PACKAGED_DIR / str(cfg["packaged"])
        elif cfg.get("file"):
            path = data_dir() / str(cfg["file"])
        else:
            return None
        files = [(None, path)]
        name = cfg.get("name") or _default_name(path)
    else:
        return None
    if not all(path.is_file() for _, path in files):
        return None
    return name, files


def files_checksum(files: list[tuple[str | None, Path]]) -> str:
    """The checksum load_benchmark records for these files (data_files)."""
    digest = hashlib.sha256()
    for label, path in files:
        if label is None:  # a RedQA file: its bytes
            digest.update(path.read_bytes())
        else:
            hash_part(digest, label, path.read_bytes())
    return "sha256:" + digest.hexdigest()


def _resolve_path(cfg: Mapping[str, Any]) -> tuple[Path, str]:
    """The local file or folder to read (an explicit path, the packaged demo, or the data
    dir), and how to fix it should it not be the pinned file ('': nothing left to check,
    a fresh download was checked as it came)."""
    pinned = cfg.get("git_blob_sha1")
    if cfg.get("path"):
        path = Path(str(cfg["path"])).expanduser()
        if not path.exists():
            raise BenchmarkError(f"benchmark not found: {path} (from corpus.path); check the path")
        return path, "corpus.path must point to the pinned file"
    if cfg.get("packaged"):
        return PACKAGED_DIR / str(cfg["packaged"]), ""  # shipped with the code, as it was
    if not cfg.get("file"):
        raise ConfigError(
            f"corpus '{cfg.get('name')}' needs a path: set corpus.path=/path/to/benchmark"
        )
    path = data_dir() / str(cfg["file"])
    if path.exists():
        return path, f"delete {path} to download it again"
    if not (cfg.get("url") and pinned):
        raise BenchmarkError(f"benchmark not found: {path}; set corpus.path or HARNESS_DATA_DIR")
    return datasets.fetch(str(cfg["url"]), path, pinned), ""


# ---------------------------------------------------------------- RedQA JSON


def load_redqa(path: Path, *, name: str, pinned: str | None = None, fix: str = "") -> Benchmark:
    """Read a RedQA-format JSON file (`queries[].gold_chunk_groups`, `corpus{id:{content}}`);
    with `pinned`, refuse it unless its git blob id is that one (`fix`: how to mend it)."""
    if not path.is_file():
        raise BenchmarkError(missing(path, "benchmark file"))
    raw = path.read_bytes()
    blob = datasets.blob_sha1_of(raw)  # hashed once: checked here, recorded below
    if pinned:
        datasets.verify(path, pinned, fix, blob)
    data = _json(path, raw)
    if not isinstance(data, dict):
        raise BenchmarkError(f"{path}: top level must be an object with 'queries' and 'corpus'")
    corpus = _redqa_corpus(path, data.get("corpus"))
    raw_queries = data.get("queries")
    if not isinstance(raw_queries, list):
        raise BenchmarkError(
            f"{path}: 'queries' must be a list (found {type(raw_queries).__name__})"
        )
    queries = tuple(_redqa_query(path, i, q) for i, q in enumerate(raw_queries))
    if not queries:
        raise BenchmarkError(f"{path}: 'queries' is empty; a benchmark needs at least one query")
    _check_unique(path, queries)
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    # the file's git blob id, as corpus configs pin it: a reproduction report tells the
    # published file from other data under the same name
    metadata: dict[str, Any] = {
        "format": "redqa", "file_metadata": meta, "git_blob_sha1": blob
    }  # fmt: skip
    metadata.update(absent_notes(path, queries, corpus))
    return Benchmark(
        name=name,
        corpus=corpus,
        queries=queries,
        checksum="sha256:" + hashlib.sha256(raw).hexdigest(),
        source=str(path),
        metadata=metadata,
    )


def _redqa_corpus(path: Path, raw: Any) -> dict[str, Chunk]:
    if not isinstance(raw, dict) or not raw:
        raise BenchmarkError(f"{path}: 'corpus' must be a non-empty object of chunk_id -> chunk")
    corpus = {}
    for cid, entry in raw.items():
        if not cid.strip():
            raise BenchmarkError(
                f"{path}: corpus has a chunk id {cid!r}; ids must be non-empty and not blank"
            )
        text = entry.get("content") if isinstance(entry, dict) else None
        if not isinstance(text, str):
            found = (
                f"it is {type(entry).__name__}, not an object: write "
                f'{{"{cid}": {{"content": ...}}}}'
                if not isinstance(entry, dict)
                else f"found {type(text).__name__}"
            )
            raise BenchmarkError(
                f"{path}: corpus chunk '{cid}' needs a string 'content' field ({found})"
            )
        title = entry.get("title")  # optional; prompts show it (rag.passage's {title})
        if title is not None and not isinstance(title, str):
            raise BenchmarkError(
                f"{path}: corpus chunk '{cid}': 'title' must be a string (found "
                f"{type(title).__name__}); leave it out for an untitled chunk"
            )
        when = entry.get("date")  # the error's place is spelled out only when there is a date
        if when is not None:
            when = parse_date(when, f"{path}: corpus chunk '{cid}': 'date'")
        corpus[cid] = Chunk(cid, text, title or "", date=when)
    return corpus


def _redqa_query(path: Path, i: int, q: Any) -> Query:
    where = f"{path}: queries[{i}]"
    if not isinstance(q, dict):
        raise BenchmarkError(f"{where} must be an object")
    qid = q.get("query_id")
    if not isinstance(qid, str) or not qid:
        raise BenchmarkError(f"{where} needs a non-empty string 'query_id'")
    return query_record(f"{path}: query '{qid}' (queries[{i}])", q)


class _Repeated(Exception):
    def __init__(self, key: str):
        self.key = key


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each there once (json keeps the last of a repeated key
    without a word: two chunks with one id would be one chunk)."""
    out = dict(pairs)
    if len(out) < len(pairs):
        seen: set[str] = set()
        raise _Repeated(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return out


def _json(path: Path, raw: bytes, where: str = "") -> Any:
    """Parse JSON bytes; every way it can be unreadable is one BenchmarkError naming the file.
    A key repeated in one object is refused (a RedQA corpus's chunk ids are keys; a BEIR
    line's fields are read by `_scan`, which doubles in speed without the check, and its
    chunk ids are checked across lines)."""
    try:
        return json.loads(raw, object_pairs_hook=_once)
    except _Repeated as exc:
        raise BenchmarkError(
            f"{path}{':' + where if where else ''}: the key '{exc.key}' appears twice in one "
            f"object (two chunks or fields with one id?); keep one: the reader does not pick"
        ) from None
    except json.JSONDecodeError as exc:
        at = where or f"line {exc.lineno} column {exc.colno}"
        raise BenchmarkError(f"{path}: invalid JSON at {at}: {exc.msg}") from None
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise BenchmarkError(
            f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
            f"{exc.start}); save the file as UTF-8"
        ) from None
    except RecursionError:
        raise BenchmarkError(
            f"{path}{':' + where if where else ''}: JSON nested too deeply to read; the "
            f"file is damaged or not a benchmark"
        ) from None


# ---------------------------------------------------------------- BEIR folder


def load_beir(folder: Path, *, name: str, split: str = "test", qrels: Any = None) -> Benchmark:
    """Read a BEIR folder; each judged chunk with grade > 0 becomes its own one-chunk group.
    `qrels` replaces qrels/<split>.tsv: a file (BEIR TSV or TREC qrels) or a DataFrame."""
    if not folder.is_dir():
        raise BenchmarkError(missing(folder, "BEIR folder", "folder"))
    digest = hashlib.sha256()
    corpus = _beir_corpus(folder / "corpus.jsonl", digest)
    texts: dict[str, str] = {}
    rows: dict[str, tuple[str, dict]] = {}
    path = folder / "queries.jsonl"
    lines = _jsonl(path, digest)
    for line_no, row in lines:
        with _errors_in_file_order(lines):
            qid = _field(path, line_no, row, "_id")
            text = row.get("text")
            if not isinstance(text, str) or not text.strip():
                raise BenchmarkError(f"{path}:{line_no}: query '{qid}' has no text")
            if qid in texts:  # one rule with the Hub's BEIR layout: ids must be unique
                raise BenchmarkError(f"{path}:{line_no}: duplicate _id '{qid}'")
        texts[qid] = text
        rows[qid] = (f"{path}:{line_no}: query '{qid}'", row)
    source = qrels_source(folder, split, qrels)
    metadata = {"format": "beir", "split": split}
    return beir_benchmark(name, str(folder), corpus, texts, rows, source, digest, metadata)


def _beir_corpus(path: Path, digest: Any) -> dict[str, Chunk]:
    """corpus.jsonl as chunks, each built as its line is read (no row is kept)."""
    corpus: dict[str, Chunk] = {}
    lines = _jsonl(path, digest)
    for line_no, row in lines:
        cid, text, raw_date = row.get("_id"), row.get("text"), row.get("date")
        if type(cid) is not str or not isinstance(text, str) or cid in corpus or not cid.strip():
            with _errors_in_file_order(lines):
                cid = _field(path, line_no, row, "_id")
                if not isinstance(text, str):
                    raise BenchmarkError(f"{path}:{line_no}: 'text' must be a string")
                if cid in corpus:
                    raise BenchmarkError(f"{path}:{line_no}: duplicate _id '{cid}'")
        when = None
        if raw_date is not None:  # the error's place is only spelled out when there is a date
            with _errors_in_file_order(lines):
                when = parse_date(raw_date, f"{path}:{line_no}: 'date'")
        corpus[cid] = Chunk(cid, text, str(row.get("title") or ""), date=when)
    if not corpus:
        raise BenchmarkError(f"{path}: the corpus is empty")
    return corpus


@contextmanager
def _errors_in_file_order(lines: Iterator[tuple[int, dict]]) -> Iterator[None]:
    """A row's error, unless a later line is no JSON object (or not JSON): that one came
    first when the whole file was parsed before any row was checked, and still does."""
    try:
        yield
    except BenchmarkError:
        for _ in lines:
            pass
        raise


def _jsonl(path: Path, digest: Any) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line, parsed as it is reached; the file's
    bytes are hashed and its UTF-8 checked before the first line is."""
    if not path.is_file():
        raise BenchmarkError(missing(path, "BEIR file"))
    raw = path.read_bytes()
    hash_part(digest, path.name, raw)
    lines = text_of(path, raw).splitlines()
    del raw
    lines.reverse()  # popped from the end: each line is freed once parsed
    line_no = 0
    while lines:
        line = lines.pop()
        line_no += 1
        if not line.strip():
            continue
        try:  # one object filling the line, read by json's own scanner without its wrappers
            row, end = _scan(line, 0)
        except (StopIteration, ValueError, RecursionError):
            end = -1
        if end != len(line) and not (end > 0 and not line[end:].strip(" \t")):
            # anything else exactly as json.loads read it from the line's bytes, errors included
            row = _json(path, line.encode(), where=f"line {line_no}")
        if not isinstance(row, dict):
            raise BenchmarkError(f"{path}:{line_no}: each line must be a JSON object")
        yield line_no, row


_scan = json.JSONDecoder().scan_once  # (value, end) of the JSON value starting at an index


def _field(path: Path, line_no: int, row: dict, key: str) -> str:
    value = text_id(row.get(key))
    if value is None:
        raise BenchmarkError(f"{path}:{line_no}: missing or blank '{key}'")
    return value
