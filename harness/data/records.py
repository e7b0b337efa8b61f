"""Records into queries: the checks every loader shares (RedQA JSON, BEIR folders, Hugging
Face datasets map their rows to these records), so one bad value reads the same error line
whatever the source."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

from harness.core.errors import BenchmarkError
from harness.core.types import Chunk, Query

log = logging.getLogger("harness.data")


def query_record(where: str, q: Mapping[str, Any]) -> Query:
    """A query from a RedQA-style record (`query_id`, `question`, `gold_chunk_groups` and the
    optional keys of docs/protocols.md: `group_present`, `answerable`, `answer(s)`, `labels`,
    `date`, `metadata`); `where` names it in errors. The Hub loader maps its columns to
    these keys and comes through here too."""
    qid = q.get("query_id")
    text = q.get("question")
    if not isinstance(text, str) or not text.strip():
        raise BenchmarkError(f"{where} needs a non-empty 'question' (found {text!r})")
    raw_groups = q.get("gold_chunk_groups")
    present = _present(where, q.get("group_present"), raw_groups)
    if not isinstance(raw_groups, list) or not all(
        isinstance(g, list) and (g or not keep) and all(isinstance(c, str) for c in g)
        for g, keep in zip(raw_groups, present)
    ):
        raise BenchmarkError(
            f"{where}: 'gold_chunk_groups' must be a list of non-empty lists of chunk ids "
            f"(found {_short(raw_groups)}); use [] for a query without gold (an absent group, "
            f"group_present false, may be [])"
        )
    groups: list[frozenset[str]] = []
    absent: list[frozenset[str]] = []
    for no, (group, here) in enumerate(zip(raw_groups, present)):
        members = frozenset(group)
        kept = groups if here else absent
        if members in kept and members:
            # A group listed twice is still one piece of information: keep the hop honest.
            log.info(
                f"{where}: gold group {no + 1} {sorted(members)} repeats an earlier group; "
                f"scored once, hop stays {len(raw_groups)} as listed"
            )
            continue
        kept.append(members)
    answerable = _answerable(where, q.get("answerable"), groups, absent)
    listed = len(raw_groups) if len(groups) + len(absent) != len(raw_groups) else None
    return Query(
        query_id=str(qid),
        text=text,
        groups=tuple(groups),
        listed_groups=listed,
        answers=_answers(where, q),
        absent=tuple(absent),
        answerable=answerable,
        labels=_labels(where, q.get("labels")),
        date=parse_date(q.get("date"), f"{where}: 'date'"),
        fields=_fields(where, q.get("metadata")),
        citations=_citations(where, q.get("citations")),
    )


def _present(where: str, raw: Any, groups: Any) -> list[bool]:
    """`group_present`: one boolean per listed gold group (default: every group present)."""
    n = len(groups) if isinstance(groups, list) else 0
    if raw is None:
        return [True] * n
    if not isinstance(raw, list) or not all(isinstance(x, bool) for x in raw) or len(raw) != n:
        raise BenchmarkError(
            f"{where}: 'group_present' must be a list of {n} true/false values, one per gold "
            f"group (found {_short(raw)})"
        )
    return raw


def _answerable(where: str, raw: Any, groups: list, absent: list) -> str:
    """'yes' | 'partial' | 'no', as the record says (true / "partial" / false) or, when it
    says nothing, as the groups it marks absent imply; a contradiction is an error."""
    implied = "no" if absent and not groups else "partial" if absent else "yes"
    if raw is None:
        return implied
    if isinstance(raw, bool):
        said: str | None = "yes" if raw else "no"
    else:
        said = "partial" if raw == "partial" else None
    if said is None:
        raise BenchmarkError(
            f"{where}: 'answerable' is {_short(raw)}; write true, false or \"partial\""
        )
    if said == "no" and groups:
        raise BenchmarkError(
            f"{where}: 'answerable' is false but {len(groups)} gold group(s) are present in "
            f'the corpus; mark them group_present false or set answerable true / "partial"'
        )
    if said == "yes" and absent:
        raise BenchmarkError(
            f"{where}: 'answerable' is true but {len(absent)} gold group(s) are marked absent "
            f'(group_present false); set answerable "partial" (or false)'
        )
    if said == "partial" and not (absent and groups):
        raise BenchmarkError(
            f"{where}: 'answerable' is \"partial\" but {'no' if not absent else 'every'} gold "
            f"group is marked absent; a partial query needs some groups with group_present "
            f"false and some present"
        )
    return said


def _answers(where: str, q: Mapping[str, Any]) -> tuple[str, ...]:
    """`answer` (a string) and/or `answers` (a list of strings): every acceptable answer,
    first listed first, each once."""
    out: list[str] = []
    one = q.get("answer")
    if one is not None:
        if not isinstance(one, str):
            raise BenchmarkError(f"{where}: 'answer' must be a string (found {_short(one)})")
        out.append(one)
    many = q.get("answers")
    if many is not None:
        if not isinstance(many, list) or not all(isinstance(a, str) for a in many):
            raise BenchmarkError(
                f"{where}: 'answers' must be a list of strings (found {_short(many)})"
            )
        out += many
    return tuple(dict.fromkeys(a for a in out if a.strip()))


def _citations(where: str, raw: Any) -> tuple[str, ...]:
    """`citations`: the chunk ids the reference answer cites (attribution@K), each once."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(c, str) and c.strip() for c in raw):
        raise BenchmarkError(
            f"{where}: 'citations' must be a list of the chunk ids the reference answer cites, "
            f'e.g. ["doc1", "doc4"] (found {_short(raw)})'
        )
    return tuple(dict.fromkeys(raw))


def _labels(where: str, raw: Any) -> dict[str, str] | None:
    """`labels`: {chunk id: label name}; names are checked against relevance.grades when the
    benchmark is judged (harness.data.relevance)."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and k.strip() and isinstance(v, str) and v.strip()
        for k, v in raw.items()
    ):
        raise BenchmarkError(
            f"{where}: 'labels' must be an object of chunk id -> label name, e.g. "
            f'{{"doc1": "RELATED"}} (found {_short(raw)})'
        )
    return dict(raw)


def _fields(where: str, raw: Any) -> dict[str, Any]:
    """`metadata`: free query fields; each value a string, number, boolean or null."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise BenchmarkError(f"{where}: 'metadata' must be an object (found {_short(raw)})")
    for key, value in raw.items():
        if value is not None and not isinstance(value, (str, int, float, bool)):
            raise BenchmarkError(
                f"{where}: metadata field '{key}' is {_short(value)}; a query field must be a "
                f"string, number, boolean or null"
            )
        if isinstance(value, float) and value != value:
            raise BenchmarkError(f"{where}: metadata field '{key}' is NaN; use null")
    return dict(raw)


def parse_date(raw: Any, where: str) -> date | None:
    """An ISO 8601 date ('2024-05-01'; a date-time is cut to its date); None when absent."""
    if raw is None:
        return None
    if isinstance(raw, date) and not isinstance(raw, datetime):
        return raw
    if isinstance(raw, datetime):
        return raw.date()
    if isinstance(raw, str):
        text = raw.strip()
        try:
            return (
                date.fromisoformat(text)
                if len(text) == 10
                else datetime.fromisoformat(text.replace("Z", "+00:00")).date()
            )
        except ValueError:
            pass
    raise BenchmarkError(
        f"{where} is {_short(raw) if not isinstance(raw, str) else repr(raw)}, not a date; "
        f"write it as YYYY-MM-DD"
    )


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value) if value is not None else "nothing"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _beir_query(
    qid: str,
    text: str,
    judged: dict[str, int] | None,
    labelled: dict[str, str] | None,
    where: str,
    row: Mapping[str, Any],
) -> Query:
    """A BEIR query: each chunk judged grade > 0 is its own group (labelled chunks get their
    groups when the benchmark is judged: their grades come from relevance.grades); the row's
    optional `answerable`, `answer(s)`, `date` and `metadata` keys as in RedQA JSON."""
    groups = tuple(frozenset([cid]) for cid, grade in (judged or {}).items() if grade > 0)
    raw = row.get("answerable")
    if raw is False and groups:
        raise BenchmarkError(
            f"{where}: 'answerable' is false but the qrels judge {len(groups)} chunk(s) "
            f"relevant; an unanswerable query has no relevant chunk"
        )
    if raw is not None and raw is not True and raw is not False:
        hint = ' ("partial" needs gold groups: use RedQA JSON)' if raw == "partial" else ""
        raise BenchmarkError(f"{where}: 'answerable' is {_short(raw)}; write true or false{hint}")
    return Query(
        query_id=qid,
        text=text,
        groups=groups,
        qrels=judged if judged is not None or labelled else {},
        answers=_answers(where, row),
        answerable="no" if raw is False else "yes",
        labels=labelled,
        date=parse_date(row.get("date"), f"{where}: 'date'"),
        fields=_fields(where, row.get("metadata")),
        citations=_citations(where, row.get("citations")),
    )


def _check_unique(path: Path, queries: tuple[Query, ...]) -> None:
    seen: set[str] = set()
    for q in queries:
        if q.query_id in seen:
            raise BenchmarkError(f"{path}: duplicate query_id '{q.query_id}'; ids must be unique")
        seen.add(q.query_id)


def _absent_gold(
    path: Path, queries: tuple[Query, ...], corpus: Mapping[str, Chunk]
) -> dict[str, Any] | None:
    """Gold chunk ids the corpus lacks (they stay gold: relevant; no retriever finds them, a
    run file may rank them): counted, with examples, and noted; None when there are none."""
    members = unreachable = 0
    chunks: dict[str, None] = {}
    for q in queries:
        for g in q.groups:
            missing = sorted(c for c in g if c not in corpus)
            members += len(missing)
            unreachable += len(missing) == len(g)
            chunks.update(dict.fromkeys(missing))
    if not members:
        return None
    examples = list(chunks)[:5]
    never = (
        f"; {unreachable} group(s) have no member in it and are never covered"
        if unreachable
        else ""
    )
    log.info(
        f"{path}: {len(chunks)} gold chunk id(s) are not in the corpus (e.g. "
        f"{', '.join(map(repr, examples))}); they stay gold (relevant, as trec_eval counts "
        f"them), and only a run file can rank them: no retriever finds them in the corpus{never}"
    )
    return {
        "gold_members": members,
        "chunks": len(chunks),
        "groups_without_corpus_member": unreachable,
        "examples": examples,
    }


def text_id(value: Any) -> str | None:
    """An id as text (parquet and CSV readers may give integers); None when missing/blank."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) and value.strip() else None


def absent_notes(where, queries: tuple[Query, ...], corpus: Mapping[str, Chunk]) -> dict:
    """A RedQA-shaped benchmark's metadata notes on gold and labels naming chunks the corpus
    lacks (`judged_not_in_corpus`, `labelled_not_in_corpus`); empty when there are none."""
    labels = {q.query_id: q.labels for q in queries}
    notes = {
        "judged_not_in_corpus": _absent_gold(where, queries, corpus),
        "labelled_not_in_corpus": _absent_labelled(labels, corpus),
    }
    return {key: note for key, note in notes.items() if note}


def _absent_labelled(
    labels: Mapping[str, Mapping[str, str] | None], corpus: Mapping[str, Chunk]
) -> dict[str, Any] | None:
    """Labels (query -> {chunk id: label}) naming chunks the corpus lacks, counted with
    examples (a label grades a chunk; one that cannot be retrieved grades nothing a run
    returns); None when there are none."""
    chunks: dict[str, None] = {}
    count = 0
    for labelled in labels.values():
        missing = [c for c in labelled or {} if c not in corpus]
        count += len(missing)
        chunks.update(dict.fromkeys(missing))
    if not count:
        return None
    # noted by harness.data.relevance.judge, once the labels themselves are known good
    return {"labels": count, "chunks": len(chunks), "examples": list(chunks)[:5]}


def _absent_judged(
    path: Path | str, qrels: Mapping[str, Mapping[str, int]], corpus: Mapping[str, Chunk]
) -> dict[str, Any] | None:
    judgments = relevant = 0
    chunks: dict[str, None] = {}
    for judged in qrels.values():
        for cid, grade in judged.items():
            if cid not in corpus:
                judgments += 1
                relevant += grade > 0
                chunks[cid] = None
    if not judgments:
        return None
    examples = list(chunks)[:5]
    log.info(
        f"{path}: {judgments} judgment(s) ({relevant} with grade > 0) name {len(chunks)} "
        f"chunk(s) not in corpus.jsonl (e.g. {', '.join(map(repr, examples))}); kept as "
        f"trec_eval keeps them (graded as judged), and only a run file can rank them: no "
        f"retriever finds them in the corpus"
    )
    return {
        "judgments": judgments,
        "relevant": relevant,
        "chunks": len(chunks),
        "examples": examples,
    }


def grade_of(raw: Any) -> int | None:
    """A qrels score as an integer grade; None when it is not one (then it may be a label)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str):
        try:
            return int(raw.strip())
        except ValueError:
            return None
    return None


MAX_GRADE = 2**31 - 1  # a C int, as trec_eval keeps relevance; larger ones overflowed


class QrelsCollector:
    """Judgments as BEIR qrels give them, from a TSV file or a dataset's rows: an integer
    score is a grade, any other a label name (RELATED); one judgment per (query, chunk)."""

    def __init__(self) -> None:
        self.qrels: dict[str, dict[str, int]] = {}
        self.labels: dict[str, dict[str, str]] = {}
        self._first: dict[tuple[str, str], str] = {}

    def add(self, at: str, place: str, qid: str, cid: str, raw: Any) -> None:
        """One judgment; `at` names it in errors ("file:3"), `place` in later ones ("line 3")."""
        grade = grade_of(raw)
        if grade is not None and not -MAX_GRADE <= grade <= MAX_GRADE:
            raise BenchmarkError(
                f"{at}: grade {grade} is out of range; grades are small integers "
                f"(|grade| <= {MAX_GRADE:,}, as trec_eval reads them), e.g. 0, 1, 2"
            )
        if grade is None and not (isinstance(raw, str) and raw[:1].isalpha()):
            shown = f"'{raw}'" if isinstance(raw, str) else repr(raw)
            raise BenchmarkError(
                f"{at}: score {shown} is neither an integer grade nor a label name (e.g. RELATED)"
            )
        table: dict[str, dict[str, Any]] = self.labels if grade is None else self.qrels
        value = raw if grade is None else grade
        judged = table.setdefault(qid, {})
        if cid in judged and judged[cid] != value:
            verb, past = ("labels", "labelled") if grade is None else ("judges", "judged")
            raise BenchmarkError(
                f"{at}: query '{qid}' {verb} chunk '{cid}' {value}, but "
                f"{self._first[qid, cid]} {past} it {judged[cid]}; keep one judgment per pair"
            )
        self._first.setdefault((qid, cid), place)
        judged[cid] = value

    def check(self, where: str) -> None:
        """A chunk both graded and labelled for one query is an error."""
        both = sorted(
            (q, c)
            for q in set(self.qrels) & set(self.labels)
            for c in set(self.qrels[q]) & set(self.labels[q])
        )
        if both:
            q, c = both[0]
            raise BenchmarkError(
                f"{where}: query '{q}' gives chunk '{c}' both a grade and a label; keep one"
            )


def text_of(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")  # a byte order mark is not part of the first id
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise BenchmarkError(
            f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the file as UTF-8"
        ) from None


def hash_part(digest: Any, label: str, raw: bytes) -> None:
    """One file's share of a BEIR folder's checksum (its name, then its bytes): the one rule
    the BEIR loaders and benchmarks.files_checksum follow."""
    digest.update(label.encode() + b"\0")
    digest.update(raw)
