"""Core immutable types: chunks, queries with grouped gold, benchmarks (runs: harness.core.run)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Any


@dataclass(frozen=True)
class Chunk:
    """One retrievable unit of the corpus."""

    chunk_id: str
    text: str
    title: str = ""
    date: date | None = None  # when the passage was written (dated relevance)

    @property
    def index_text(self) -> str:
        """Text a retriever indexes: the title (when there is one) followed by the body."""
        return f"{self.title} {self.text}" if self.title else self.text


ANSWERABLE = ("yes", "partial", "no")  # Query.answerable; also the stratum labels

# A free query field's value (Query.fields): categorical or numeric.
FieldValue = str | int | float | bool | None


def is_number(value: Any) -> bool:
    """An int or float, not a bool (True is an int to Python)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Query:
    """A query and its redundancy-aware gold: each group is one required piece of information.

    `groups` are the pieces the corpus holds (what is scored); `absent` are pieces the query
    needs that the corpus does not hold (CRUMQs' out-of-corpus hops). `answerable` is "yes"
    (nothing absent), "partial" (some groups absent) or "no" (every piece absent: the query is
    unanswerable from the corpus; its recall-type metrics are NaN). `labels` are the named
    relevance labels of judged chunks as the data gives them (GaRAGe: ANSWER-THE-QUESTION,
    RELATED, OUTDATED, UNKNOWN, IRRELEVANT); harness.data.relevance.judge turns them into
    graded `qrels` and sets `outdated` and `max_age_days`."""

    query_id: str
    text: str
    groups: tuple[frozenset[str], ...]
    qrels: Mapping[str, int] | None = None
    answers: tuple[str, ...] = ()  # acceptable answers (any of them counts)
    listed_groups: int | None = None  # groups as the file listed them, repeats included
    absent: tuple[frozenset[str], ...] = ()  # required pieces the corpus does not hold
    answerable: str = "yes"  # one of ANSWERABLE
    labels: Mapping[str, str] | None = None  # chunk id -> relevance label name
    date: date | None = None  # when the question was asked (dated relevance)
    fields: Mapping[str, FieldValue] = field(default_factory=dict)  # free metadata
    outdated: frozenset[str] | None = None  # judged chunks labelled outdated (set by judge)
    max_age_days: int | None = None  # validity window: older passages are outdated (judge)
    label_grades: Mapping[str, int] | None = None  # each labelled chunk's label grade (judge)
    citations: tuple[str, ...] = ()  # the chunks the reference answer cites (GaRAGe)

    @property
    def answer(self) -> str | None:
        """The first acceptable answer (None when the query has none)."""
        return self.answers[0] if self.answers else None

    @property
    def hop(self) -> int:
        """Hop depth: the number of gold groups the benchmark lists, absent ones included (a
        repeated group is scored once but keeps its hop, as the published per-hop counts do)."""
        if self.listed_groups is not None:
            return self.listed_groups
        return len(self.groups) + len(self.absent)

    @property
    def judgments(self) -> Mapping[str, int]:
        """Graded judgments for the standard metrics: the qrels when the benchmark has them,
        else grade 1 for every member of every gold group."""
        if self.qrels is not None:
            return self.qrels
        return {chunk: 1 for g in self.groups for chunk in sorted(g)}

    def is_outdated(self, chunk: Chunk) -> bool:
        """Whether `chunk` is outdated for this query: labelled so, or dated more than the
        query's validity window before the query's date."""
        if self.outdated is not None and chunk.chunk_id in self.outdated:
            return True
        if self.max_age_days is None or self.date is None or chunk.date is None:
            return False
        return (self.date - chunk.date).days > self.max_age_days

    @property
    def dated(self) -> bool:
        """Whether outdatedness is known for this query (labels were judged, or it has a date
        and a validity window): outdated@K is NaN otherwise."""
        return self.outdated is not None or (
            self.max_age_days is not None and self.date is not None
        )


@dataclass(frozen=True)
class Benchmark:
    """A corpus plus queries, with the checksum of the data it was loaded from."""

    name: str
    corpus: Mapping[str, Chunk]
    queries: tuple[Query, ...]
    checksum: str
    source: str
    metadata: Mapping[str, object] = field(default_factory=dict)
    # what loading it noted (judged ids the corpus lacks, a repeated gold group), for the API,
    # whose callers see no log: the command line prints these as they are logged
    notes: tuple[str, ...] = field(default=(), compare=False, repr=False)
    # what scoring derives from this very benchmark once (the judgments encoded against the
    # vocab), for the next run scored on it; a changed copy (dataclasses.replace) starts empty
    derived: dict[str, object] = field(default_factory=dict, init=False, compare=False, repr=False)

    def __repr__(self) -> str:  # the dataclass's would print the whole corpus
        q, c = len(self.queries), len(self.corpus)
        return (
            f"Benchmark({self.name!r}, {q:,} quer{'y' if q == 1 else 'ies'}, {c:,} "
            f"chunk{'s' * (c != 1)}, {self.checksum[:19]})"
        )

    @property
    def one_chunk_groups(self) -> bool:
        """Whether every relevant chunk is a gold group of its own (BEIR's qrels: BEIR
        folders, ir_datasets, a Hub dataset in the BEIR layout), not groups the data lists."""
        meta = self.metadata
        return meta.get("format") in ("beir", "irds") or meta.get("layout") == "beir"

    @cached_property
    def vocab(self) -> dict[str, int]:
        """Chunk id -> position in the corpus: the integer codes rankings may carry."""
        return {cid: i for i, cid in enumerate(self.corpus)}

    @cached_property
    def vocab_table(self):
        """`vocab` as the compiled lookup probes it (harness.core.run.store.KeyTable), built
        on first use: every large run scored on this benchmark reuses it."""
        from harness.core.run.store import KeyTable

        return KeyTable(self.vocab)
