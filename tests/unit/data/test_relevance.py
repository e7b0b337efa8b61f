"""Labels and dates become grades and groups (harness.data.relevance.judge), by hand."""

from __future__ import annotations

import json
from datetime import date

import pytest

from harness.core.errors import BenchmarkError, ConfigError
from harness.core.types import Benchmark, Chunk, Query
from harness.data.benchmarks import load_redqa
from harness.data.relevance import RelevanceSpec, judge, label_key

CORPUS = {
    "new": Chunk("new", "fresh news", date=date(2024, 5, 1)),
    "old": Chunk("old", "stale news", date=date(2024, 3, 1)),
    "rel": Chunk("rel", "background", date=date(2020, 1, 1)),
    "irr": Chunk("irr", "unrelated"),
    "undated": Chunk("undated", "no date"),
}


def bench(*queries: Query) -> Benchmark:
    return Benchmark("t", CORPUS, queries, "sha256:x", "<test>")


def fast(qid="q", **kw) -> Query:
    base = dict(
        query_id=qid,
        text="what happened",
        groups=(frozenset({"new", "old"}),),
        date=date(2024, 5, 5),
        fields={"dynamism": "fast"},
    )
    return Query(**{**base, **kw})


def test_label_names_match_loosely():
    assert label_key(" related_information ") == "RELATED-INFORMATION"
    assert label_key("Answer the question") == "ANSWER-THE-QUESTION"


def test_unlabelled_benchmark_comes_back_unchanged():
    b = bench(Query("q", "x", (frozenset({"new"}),)))
    assert judge(b) is b


def test_fast_question_old_gold_member_loses_relevance_and_its_group_place():
    q = judge(bench(fast())).queries[0]
    # 'old' is 65 days older than the question (> 7): grade 0, out of the group
    assert q.qrels == {"new": 1, "old": 0}
    assert q.groups == (frozenset({"new"}),)
    assert q.max_age_days == 7 and q.outdated is None and q.dated
    assert q.is_outdated(CORPUS["old"]) and not q.is_outdated(CORPUS["new"])
    assert not q.is_outdated(CORPUS["undated"])


def test_slow_question_keeps_old_passages_relevant():
    q = judge(bench(fast(fields={"dynamism": "slow"}))).queries[0]
    assert q.qrels == {"new": 1, "old": 1}
    assert q.groups == (frozenset({"new", "old"}),)
    assert q.max_age_days is None and not q.dated


def test_labels_become_grades_and_outdated_label_counts_for_fast_questions():
    labels = {
        "new": "ANSWER-THE-QUESTION",
        "rel": "related",
        "irr": "IRRELEVANT",
        "old": "OUTDATED",
    }
    q = judge(bench(fast(date=None, labels=labels))).queries[0]
    assert q.qrels == {"new": 2, "old": 0, "rel": 1, "irr": 0}
    assert q.outdated == frozenset({"old"})
    assert q.groups == (frozenset({"new"}),)
    slow = judge(bench(fast(date=None, labels=labels, fields={}))).queries[0]
    assert slow.qrels == {"new": 2, "old": 1, "rel": 1, "irr": 0}
    assert slow.outdated == frozenset({"old"}) and slow.dated  # labels say what is outdated


def test_group_of_only_outdated_members_stays_and_cannot_be_covered():
    q = judge(bench(fast(groups=(frozenset({"old"}), frozenset({"new"}))))).queries[0]
    assert q.groups == (frozenset(), frozenset({"new"}))


def test_labels_without_groups_make_one_group_per_relevant_passage():
    labels = {"new": "ANSWER-THE-QUESTION", "rel": "RELATED", "irr": "IRRELEVANT"}
    q = judge(bench(Query("q", "x", (), labels=labels))).queries[0]
    assert sorted(q.groups, key=sorted) == [frozenset({"new"}), frozenset({"rel"})]


def test_unanswerable_query_has_no_judgments_but_keeps_its_labels():
    labels = {"rel": "RELATED"}
    q = judge(bench(Query("q", "x", (), answerable="no", labels=labels))).queries[0]
    assert q.qrels == {} and q.groups == () and q.labels == labels


def test_grade_map_is_configurable():
    spec = RelevanceSpec.from_config({"grades": {"RELATED": 0, "ANSWER-THE-QUESTION": 3}})
    labels = {"new": "ANSWER-THE-QUESTION", "rel": "RELATED"}
    q = judge(bench(Query("q", "x", (), labels=labels)), spec).queries[0]
    assert q.qrels == {"new": 3, "rel": 0} and q.groups == (frozenset({"new"}),)


def test_outdated_for_none_keeps_every_passage_relevant():
    spec = RelevanceSpec.from_config({"outdated_for": []})
    q = judge(bench(fast()), spec).queries[0]
    assert q.qrels == {"new": 1, "old": 1} and q.max_age_days == 7  # outdated@K still known


def test_a_changed_dynamism_setting_that_matches_nothing_is_refused():
    b = bench(fast(), fast("r", fields={"dynamism": "slow"}))
    said = r"relevance.dynamism_field 'dynamsm': no query of t has that field \(did you mean "
    with pytest.raises(ConfigError, match=said + r"'dynamism'\?\); fields: dynamism"):
        judge(b, RelevanceSpec.from_config({"dynamism_field": "dynamsm"}))
    with pytest.raises(ConfigError, match=r"relevance.outdated_for names 'rapid', which no query's "
                       r"dynamism is; values: fast, slow"):  # fmt: skip
        judge(b, RelevanceSpec.from_config({"outdated_for": ["fast", "rapid"]}))
    # the defaults, and settings that match, pass (a benchmark without the field too)
    judge(b, RelevanceSpec.from_config({"outdated_for": ["slow"]}))
    judge(bench(Query("q", "x", (), labels={"a": "RELATED"})), RelevanceSpec())


def test_unknown_label_is_one_line_naming_query_chunk_and_fix():
    b = bench(Query("q7", "x", (), labels={"rel": "RELEVANT"}))
    with pytest.raises(BenchmarkError) as info:
        judge(b)
    msg = str(info.value)
    assert "q7" in msg and "'rel'" in msg and "RELEVANT" in msg and "relevance.grades" in msg
    assert "\n" not in msg


@pytest.mark.parametrize(
    "cfg, message",
    [
        ({"grades": {"X": -1}}, "relevance.grades.X must be an integer grade >= 0"),
        ({"grades": {"X": True}}, "relevance.grades.X must be an integer"),
        ({"grades": {}}, "relevance.grades must map"),
        ({"max_age_days": {"fast": "week"}}, "relevance.max_age_days.fast must be"),
        ({"outdated_for": "fast"}, "relevance.outdated_for must be a list"),
        ({"grade": {}}, "relevance.grade is not a setting"),
        ({"grades": {"related": 1, "RELATED": 2}}, "names label RELATED twice"),
    ],
)
def test_bad_relevance_settings(cfg, message):
    with pytest.raises(ConfigError, match=message):
        RelevanceSpec.from_config(cfg)


def test_spec_round_trips_through_its_config():
    spec = RelevanceSpec.from_config({"grades": {"related_information": 2}})
    assert RelevanceSpec.from_config(spec.as_config()) == spec


# ---------------------------------------------------------------- the file format


def write(tmp_path, queries, corpus=None):
    corpus = corpus or {
        "a": {"content": "Paris is the capital", "date": "2024-01-02"},
        "b": {"content": "Berlin"},
    }
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"queries": queries, "corpus": corpus}), encoding="utf-8")
    return path


def q(**kw):
    return {"query_id": "q1", "question": "capital?", "gold_chunk_groups": [["a"]], **kw}


def test_redqa_reads_every_new_key(tmp_path):
    record = q(
        gold_chunk_groups=[["a"], ["x"], []],
        group_present=[True, False, False],
        answerable="partial",
        answer="Paris",
        answers=["Paris", "City of Paris"],
        labels={"b": "RELATED"},
        date="2024-05-01T10:00:00Z",
        metadata={"dynamism": "fast", "words": 3, "private": False, "note": None},
    )
    b = load_redqa(write(tmp_path, [record]), name="t")
    got = b.queries[0]
    assert got.groups == (frozenset({"a"}),)
    assert got.absent == (frozenset({"x"}), frozenset())
    assert got.hop == 3 and got.answerable == "partial"
    assert got.answers == ("Paris", "City of Paris") and got.answer == "Paris"
    assert got.labels == {"b": "RELATED"} and got.date == date(2024, 5, 1)
    assert got.fields == {"dynamism": "fast", "words": 3, "private": False, "note": None}
    assert b.corpus["a"].date == date(2024, 1, 2) and b.corpus["b"].date is None


def test_answerable_is_implied_by_the_groups(tmp_path):
    records = [
        q(query_id="yes"),
        q(query_id="part", gold_chunk_groups=[["a"], ["x"]], group_present=[True, False]),
        q(query_id="no", gold_chunk_groups=[["x"]], group_present=[False]),
    ]
    b = load_redqa(write(tmp_path, records), name="t")
    assert [x.answerable for x in b.queries] == ["yes", "partial", "no"]
    assert b.queries[2].groups == () and b.queries[2].hop == 1


@pytest.mark.parametrize(
    "record, message",
    [
        (q(answerable="maybe"), r"'answerable' is \"maybe\"; write true, false or \"partial\""),
        (q(answerable=1), r"'answerable' is 1; write true, false or \"partial\""),
        (q(answerable=False), "'answerable' is false but 1 gold group"),
        (
            q(gold_chunk_groups=[["a"], ["x"]], group_present=[True, False], answerable=True),
            "'answerable' is true but 1 gold group",
        ),
        (q(answerable="partial"), "'answerable' is \"partial\" but no gold group is marked absent"),
        (q(group_present=[True, False]), "'group_present' must be a list of 1 true/false"),
        (q(group_present=["yes"]), "'group_present' must be a list of 1 true/false"),
        (q(date="2024-13-01"), "'date' is '2024-13-01', not a date; write it as YYYY-MM-DD"),
        (q(date=20240501), "'date' is 20240501, not a date"),
        (q(labels=["a"]), "'labels' must be an object of chunk id -> label name"),
        (q(labels={"a": 2}), "'labels' must be an object"),
        (q(answers="Paris"), "'answers' must be a list of strings"),
        (q(answer=3), "'answer' must be a string"),
        (q(metadata={"x": [1]}), "metadata field 'x' is \\[1\\]"),
        (q(metadata=[1]), "'metadata' must be an object"),
    ],
)
def test_bad_new_keys_are_one_line_with_the_query(tmp_path, record, message):
    path = write(tmp_path, [record])
    with pytest.raises(BenchmarkError, match=message) as info:
        load_redqa(path, name="t")
    assert "query 'q1'" in str(info.value) and "\n" not in str(info.value)


def test_bad_chunk_date(tmp_path):
    path = write(tmp_path, [q()], corpus={"a": {"content": "x", "date": "May 2024"}})
    with pytest.raises(BenchmarkError, match="corpus chunk 'a': 'date' is 'May 2024'"):
        load_redqa(path, name="t")


def write_beir(tmp_path, queries, qrels):
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    corpus = [{"_id": "d1", "text": "Paris", "date": "2024-01-01"}, {"_id": "d2", "text": "Rome"}]
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in corpus) + "\n")
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(r) for r in queries) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    return folder


def test_beir_reads_labels_answers_dates_and_unanswerable_queries(tmp_path):
    from harness.data.benchmarks import load_beir

    queries = [
        {
            "_id": "1",
            "text": "capital of France",
            "answers": ["Paris"],
            "date": "2024-02-02",
            "metadata": {"dynamism": "static"},
        },
        {"_id": "2", "text": "capital of Atlantis", "answerable": False},
        {"_id": "3", "text": "not judged"},
    ]
    folder = write_beir(tmp_path, queries, "1\td1\tANSWER-THE-QUESTION\n1\td2\tRELATED\n")
    b = load_beir(folder, name="t")
    assert [x.query_id for x in b.queries] == ["1", "2"]  # 3 has no judgments
    one, two = b.queries
    assert one.labels == {"d1": "ANSWER-THE-QUESTION", "d2": "RELATED"}
    assert one.answers == ("Paris",) and one.fields == {"dynamism": "static"}
    assert two.answerable == "no" and two.groups == ()
    assert b.corpus["d1"].date == date(2024, 1, 1)
    judged = judge(b).queries[0]
    assert judged.qrels == {"d1": 2, "d2": 1}
    assert sorted(judged.groups, key=sorted) == [frozenset({"d1"}), frozenset({"d2"})]


def test_beir_query_mixing_grades_and_labels_keeps_every_relevant_passage_as_a_group(tmp_path):
    from harness.data.benchmarks import load_beir

    queries = [{"_id": "1", "text": "x"}, {"_id": "2", "text": "y"}]
    folder = write_beir(tmp_path, queries, "1\td1\t1\n1\td2\tRELATED\n2\td2\t0\n")
    one, two = judge(load_beir(folder, name="t")).queries
    assert one.qrels == {"d1": 1, "d2": 1}
    assert one.groups == (frozenset({"d1"}), frozenset({"d2"}))  # d2's group was lost
    assert two.qrels == {"d2": 0} and two.groups == ()


def test_beir_grade_and_label_for_one_pair_is_an_error(tmp_path):
    from harness.data.benchmarks import load_beir

    folder = write_beir(tmp_path, [{"_id": "1", "text": "x"}], "1\td1\t1\n1\td1\tRELATED\n")
    with pytest.raises(BenchmarkError, match="both a grade and a label"):
        load_beir(folder, name="t")


def test_a_distractor_the_grades_do_not_name_is_refused():
    from harness.core.errors import ConfigError
    from harness.data.relevance import RelevanceSpec

    with pytest.raises(ConfigError, match=r"names 'RELATD'.*\(did you mean 'RELATED'\?\)"):
        RelevanceSpec.from_config({"distractors": ["RELATD"]})
    assert RelevanceSpec.from_config({"distractors": ["related"]}).distractors == ("RELATED",)


def test_labels_for_chunks_the_corpus_lacks_are_noted(tmp_path, caplog):
    import logging

    record = q(labels={"b": "RELATED", "ghost": "RELATED", "shade": "OUTDATED"})
    with caplog.at_level(logging.INFO, logger="harness"):
        b = load_redqa(write(tmp_path, [record]), name="t")
        judge(b)  # noted once the labels are known good
    assert b.metadata["labelled_not_in_corpus"] == {
        "labels": 2,
        "chunks": 2,
        "examples": ["ghost", "shade"],
    }
    said = [r.getMessage() for r in caplog.records if "label(s) name" in r.getMessage()]
    assert len(said) == 1 and "2 label(s) name 2 chunk id(s) not in the corpus" in said[0]
    clean = load_redqa(write(tmp_path, [q(labels={"b": "RELATED"})]), name="t")
    assert "labelled_not_in_corpus" not in clean.metadata
