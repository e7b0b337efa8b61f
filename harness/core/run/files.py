"""Run files: read a TREC run (`qid Q0 docid rank score tag`) or a JSON run
(`{"qid": {"docid": score}}`) into per-query scores, validated line by line; and what a run's
chunk ids that the corpus lacks become when it is scored (`run.unknown_ids`).

A TREC file of runstore.FAST_BYTES or more (less once numba is loaded) is read by a compiled
parser (harness.core.run.store.Rows.read_trec) that accepts only what the line-by-line reader
reads, to the same values; anything else (a malformed line, a duplicate, an unusual number or
white space) sends the file to the line-by-line reader, which gives the result or the error
with file and line."""

from __future__ import annotations

import gzip
import json
import math
import re
import zlib
from collections.abc import Collection, Mapping, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import BenchmarkError, ConfigError
from harness.core.files import missing

FORMATS = ("auto", "trec", "json")
# keep: in place, non-relevant (trec_eval's reading); drop: removed, later ranks move up.
UNKNOWN_IDS = ("keep", "drop")
_EXAMPLES = 5


def check_unknown_ids(value: Any, key: str = "run.unknown_ids") -> str:
    """The unknown-id setting, checked; a bad value is one ConfigError naming `key`."""
    if not isinstance(value, str) or value not in UNKNOWN_IDS:
        raise ConfigError(
            f"{key} is {value!r}; valid: keep (chunk ids the corpus lacks stay at their rank, "
            f"scored as the qrels judge them, as trec_eval does) or drop (removed, later ranks "
            f"move up)"
        )
    return value


def apply_unknown_ids(
    run: Any, vocab: Mapping[str, int], query_ids: Sequence[str], mode: str, table: Any = None
) -> tuple[Any, dict[str, Any]]:
    """`run` with the rankings of `query_ids` following `mode` for chunk ids `vocab` (the
    corpus) lacks: `keep` leaves them at their rank with code -1 (never relevant unless the
    judgments name that very id, as in trec_eval), `drop` removes them and closes the gaps
    (the list is not refilled past its depth). Also returns what it found: mode, entries,
    queries holding any, up to five example ids. `table`: a function giving `vocab` as a
    KeyTable kept for reuse (Benchmark.vocab_table), called only for rankings of a large run.

    One pass over the run's ids: rankings of a large run file are looked up together by
    compiled code, the others in one chained lookup; only the queries that hold an unknown
    id are touched again (a lazy ranking keeps its ids undecoded)."""
    check_unknown_ids(mode)
    rankings = {q: run[q] for q in run.query_ids()}
    present = [q for q in query_ids if q in rankings]
    todo = [rankings[q] for q in present]
    store = _one_store(todo)
    if store is not None:  # a run file's rankings, none coded yet: one lookup of its rows
        flat = store.lookup(table() if table else vocab)
        at = np.fromiter((r.place[1] for r in todo), np.int64, len(todo))
        lo, hi = store.offsets[at], store.offsets[at + 1]
        codes = [flat[a:z] for a, z in zip(lo.tolist(), hi.tolist())]
        given = [False] * len(todo)
    else:
        codes, given = _codes(todo, vocab, table)
        flat = np.concatenate(codes) if codes else np.zeros(0, np.int64)
        sizes = np.fromiter(map(len, codes), np.int64, len(codes))
        hi = np.cumsum(sizes)
        lo = hi - sizes
    before = np.zeros(len(flat) + 1, np.int64)  # unknown ids before each row
    np.cumsum(flat < 0, out=before[1:])
    unknown = before[hi] - before[lo]
    examples: dict[str, None] = {}
    for i in np.flatnonzero(unknown).tolist():
        r, c = todo[i], codes[i]
        at = np.flatnonzero(c < 0)
        if len(examples) < _EXAMPLES:
            ids = r.ids
            for j in at.tolist():
                examples.setdefault(ids[j])
                if len(examples) == _EXAMPLES:
                    break
        elif mode == "keep":
            break
        if mode == "drop":
            known = np.flatnonzero(c >= 0)
            ids, scores = r.ids, r.scores
            todo[i] = type(r)(
                tuple(ids[j] for j in known.tolist()),
                tuple(scores[j] for j in known.tolist()),
                c[known],
            )
            codes[i] = None
    for q, r, c, ok in zip(present, todo, codes, given):
        rankings[q] = r if (ok or c is None) else r.with_codes(c)
    found = {
        "mode": mode,
        "entries": int(unknown.sum()),
        "queries": int(np.count_nonzero(unknown)),
        "examples": list(examples),
    }
    return type(run)(run.name, rankings, run.depth), found


def _one_store(rankings: Sequence[Any]) -> Any:
    """The RunStore every ranking reads from lazily, when none carries codes yet (else None)."""
    first = rankings[0].place if rankings else None
    if first is None:
        return None
    store = first[0]
    ok = all(r.codes is None and r.place is not None and r.place[0] is store for r in rankings)
    return store if ok else None


def _codes(todo: Sequence[Any], vocab: Mapping[str, int], table) -> tuple[list, list[bool]]:
    """Each ranking's corpus codes (-1 for an id `vocab` lacks), and whether it carried them
    already: rankings of large runs looked up by compiled code, the rest in one chained
    lookup over all their ids."""
    lengths = np.fromiter((r.size for r in todo), np.int64, len(todo))
    given = [r.codes is not None and len(r.codes) == n for r, n in zip(todo, lengths.tolist())]
    codes = [r.codes if ok else None for r, ok in zip(todo, given)]
    lazy = [i for i, ok in enumerate(given) if not ok and todo[i].place is not None]
    if lazy:
        from harness.core.run.store import id_codes

        for i, c in zip(lazy, id_codes([todo[i] for i in lazy], vocab, table=table and table())):
            codes[i] = c
    plain = [i for i, c in enumerate(codes) if c is None]
    if plain:  # one lookup over every id of these rankings, then cut per ranking
        chained = (cid for i in plain for cid in todo[i].ids)
        total = int(lengths[plain].sum())
        flat = np.fromiter(map(vocab.get, chained, repeat(-1)), np.int64, total)
        cuts = np.cumsum(lengths[plain]).tolist()
        for i, a, z in zip(plain, [0, *cuts], cuts):
            codes[i] = flat[a:z]
    return codes, given


def check_queries(qids: Sequence[str], wanted: Collection[str], where: str) -> None:
    """Refuse a run that holds nothing, or whose query ids are none of the benchmark's (a
    run of another benchmark scores 0 everywhere: an error, not a note). `qids`: the run's
    queries with at least one result."""
    if not len(qids):
        raise BenchmarkError(f"{where}the run holds no results; is it the right run?")
    if not any(q in wanted for q in qids):
        shown = ", ".join(map(repr, list(qids)[:5]))
        raise BenchmarkError(
            f"{where}none of its {len(qids)} query ids is in the benchmark (run has {shown}; "
            f"benchmark has {', '.join(map(repr, sorted(wanted)[:5]))}); is it a run for "
            f"another benchmark?"
        )


def extra_queries_note(count: int, examples) -> str:
    """The note line about run queries the benchmark does not score (a run file's, or an API
    run's): unknown ids, or queries without judgments in the split read."""
    return (
        f"{count} query id(s) in the run are not queries the benchmark scores (unknown, or "
        f"without judgments) and were left out (e.g. {', '.join(map(repr, examples))})"
    )


def unknown_ids_note(found: Mapping[str, Any] | None) -> str | None:
    """The note line about chunk ids the corpus lacks (None when the run has none)."""
    if not found or not found.get("entries"):
        return None
    n, m = found["entries"], found["queries"]
    what = (
        "kept at their rank and scored as the qrels judge them (unknown_ids=keep, as trec_eval "
        "does)"
        if found["mode"] == "keep"
        else "dropped, later ranks moved up (unknown_ids=drop)"
    )
    return (
        f"{n} ranked chunk id{'' if n == 1 else 's'} in {m} quer{'y' if m == 1 else 'ies'} "
        f"{'is' if n == 1 else 'are'} not in the corpus (e.g. "
        f"{', '.join(map(repr, found['examples']))}); {what}"
    )


GZIP = b"\x1f\x8b"


def run_stem(path: Path) -> str:
    """The name a run file gives its run: 'bm25' for bm25.trec and bm25.trec.gz."""
    return Path(path.stem).stem if path.suffix.lower() == ".gz" else path.stem


def read_run(path: Path, fmt: str = "auto", key: str = "") -> dict[str, dict[str, float]]:
    """qid -> {chunk id: score}, read and validated; errors name the file and line (and the
    config `key` that named a missing file)."""
    rows = read_run_rows(path, fmt, key)
    if rows is not None:
        return rows.to_dict()
    data = path.read_bytes()
    if data.startswith(GZIP):  # TREC's submissions come gzipped; ir_measures reads them too
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise BenchmarkError(f"{path}: a damaged gzip file ({exc}); gunzip -t it") from None
    try:
        text = data.decode("utf-8-sig")  # a byte order mark is not part of an id
    except UnicodeDecodeError as exc:
        raise BenchmarkError(
            f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8"
        ) from None
    if fmt == "auto":
        json_like = path.suffix.lower() == ".json" or text.lstrip()[:1] in ("{", "[")
        fmt = "json" if json_like else "trec"
    scores = _read_json(path, text) if fmt == "json" else _read_trec(path, text)
    if not any(scores.values()):  # nothing, or queries with empty rankings only
        raise BenchmarkError(f"{path}: the run holds no results; is it the right file?")
    return scores


def check_run_file(path: Path, fmt: str, key: str = "") -> None:
    """Refuse an unknown format and a missing run file (naming the config `key`, if any)."""
    if fmt not in FORMATS:
        raise ConfigError(f"retriever.format is '{fmt}'; valid: {', '.join(FORMATS)}")
    if not path.is_file():
        said = f" (from {key})" if key else ""
        raise BenchmarkError(f"{missing(path, 'run file')}{said}; check the path")


def read_run_rows(path: Path, fmt: str = "auto", key: str = ""):
    """A large TREC run read by the compiled parser and put in canonical order (a
    harness.core.run.store.Rows), or None: a small file, a JSON run, or one the parser leaves
    to the line-by-line reader (read_run), which then gives the result or the exact error."""
    from harness.core.run import store as runstore

    check_run_file(path, fmt, key)
    if fmt == "json" or not runstore.compiled_from(path.stat().st_size, runstore.FAST_BYTES):
        return None
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if head.startswith((b"\xef\xbb\xbf", GZIP)):  # a byte order mark, gzip: read line by line
        return None
    if fmt == "auto":
        if path.suffix.lower() == ".json":
            return None
        text = head.decode("utf-8", "replace").lstrip()
        if not text or text[:1] in ("{", "["):  # JSON, or a long blank start: read whole
            return None
    rows = runstore.Rows.read_trec(path)
    if rows is None or any(q.startswith("#") for q in rows.query_ids):
        return None  # a comment line read as a query: the line-by-line reader skips it
    if not rows.canonical(check_duplicates=True):
        return None
    return rows


def _read_trec(path: Path, text: str) -> dict[str, dict[str, float]]:
    scores: dict[str, dict[str, float]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for no, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):  # a blank or comment line
            continue
        where = f"{path}:{no}"
        # trec_eval ignores fields after the tag, splitting on C's white space only: where
        # str.split() also splits on other white space (NBSP, \x1c-\x1f), the fields it
        # finds past the sixth may be part of an id, so such a line keeps to six
        if len(fields) < 6 or (len(fields) > 6 and _ODD_SPACE.search(line)):
            raise BenchmarkError(
                f"{where}: expected 6 fields 'qid Q0 docid rank score tag', found "
                f"{len(fields)}: '{_short(line)}'"
            )
        qid, _, doc, rank, score = fields[:5]  # fields after the tag are ignored, as trec_eval does
        try:
            int(rank)
        except ValueError:
            raise BenchmarkError(f"{where}: rank '{rank}' is not an integer") from None
        value = _score(score, where)
        key = (qid, doc)
        if key in first_line:
            raise BenchmarkError(
                f"{where}: chunk '{doc}' appears twice for query '{qid}' (first at line "
                f"{first_line[key]}); a run lists each chunk once per query"
            )
        first_line[key] = no
        scores.setdefault(qid, {})[doc] = value
    return scores


def _read_json(path: Path, text: str) -> dict[str, dict[str, float]]:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchmarkError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); expected "
            '{"qid": {"docid": score}}'
        ) from None
    except RecursionError:
        raise BenchmarkError(
            f'{path}: JSON nested too deeply; expected {{"qid": {{"docid": score}}}}'
        ) from None
    if not isinstance(raw, dict):
        raise BenchmarkError(f'{path}: expected a JSON object {{"qid": {{"docid": score}}}}')
    scores: dict[str, dict[str, float]] = {}
    for qid, docs in raw.items():
        if not isinstance(docs, dict):
            raise BenchmarkError(
                f"{path}: query '{qid}' maps to {type(docs).__name__}, expected an object "
                '{"docid": score}'
            )
        blank = qid if not qid.strip() else next((d for d in docs if not d.strip()), None)
        if blank is not None:
            raise BenchmarkError(
                f"{path}: blank id {blank!r} (query '{qid}'); ids must be non-empty"
            )
        scores[qid] = {}
        for doc, score in docs.items():
            where = f"{path}: query '{qid}', chunk '{doc}'"
            if isinstance(score, bool) or not isinstance(score, (int, float, str)):
                raise BenchmarkError(f"{where}: score {_short(repr(score))} is not a number")
            scores[qid][doc] = _score(str(score), where)
    return scores


def _score(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BenchmarkError(f"{where}: score '{_short(text)}' is not a number") from None
    if not math.isfinite(value):
        raise BenchmarkError(f"{where}: score '{text}' is not finite")
    return value


def _short(text: str, limit: int = 60) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def trec_lines(run, query_ids, tag: str) -> str:
    """TREC run text (qid Q0 docid rank score tag) for `query_ids` in that order; ids with
    white space cannot be written in this format and are refused."""
    from harness.core.errors import HarnessError

    lines = []
    for qid in query_ids:
        ranking = run[qid]
        for rank, (cid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1):
            lines.append(f"{qid} Q0 {cid} {rank} {score!r} {tag}")
    bad = [x for x in (tag, *query_ids) if not x or has_space(x)]
    # one regex pass over all chunk ids joined (10x faster than a test per character at 1M
    # ids); only when it finds white space are the ids looked at one by one, to name the first
    if not bad and _SPACE.search("".join(c for qid in query_ids for c in run[qid].ids)):
        bad = [c for qid in query_ids for c in run[qid].ids if has_space(c)][:1]
    if bad:
        raise HarnessError(
            f"cannot write a TREC run: id '{bad[0]}' contains white space, which TREC format "
            f"cannot hold; rename it (in the benchmark, or the run's name)"
        )
    return "\n".join(lines) + ("\n" if lines else "")


_SPACE = re.compile(r"\s")  # matches exactly the characters str.isspace() accepts
_ODD_SPACE = re.compile(r"[^\S \t\n\r\f\v]")  # white space to str.split(), not to C's isspace


def has_space(text: str) -> bool:
    return any(c.isspace() for c in text)
