"""A strata file records what its strata depend on: for a benchmark with labels or dates,
the relevance settings too (they decide which passages are gold), so a run under other
settings refuses the file instead of reporting strata of other gold."""

import json

import harness
from harness.data.relevance import RelevanceSpec, judge
from harness.strata.build import relevance_param
from harness.strata.file import mismatch


def _labelled(tmp_path):
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    corpus = [{"_id": "d1", "text": "Paris"}, {"_id": "d2", "text": "Rome"}]
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in corpus) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "x"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n1\td1\tRELATED\n1\td2\tIRRELEVANT\n"
    )
    return harness.load_benchmark(folder)


def test_labelled_benchmarks_key_their_strata_by_the_relevance_settings(tmp_path):
    raw = _labelled(tmp_path)
    strict = {"grades": {"RELATED": 0, "IRRELEVANT": 0, "ANSWER-THE-QUESTION": 2}}
    loose = {"grades": {"RELATED": 1, "IRRELEVANT": 1, "ANSWER-THE-QUESTION": 2}}
    a = relevance_param({"relevance": loose}, judge(raw, RelevanceSpec.from_config(loose)))
    gold = RelevanceSpec.from_config(loose).as_config()
    del gold["distractors"]  # which labels count as distractors decides no grade
    assert a == {"relevance": gold}
    b = relevance_param({"relevance": strict}, judge(raw, RelevanceSpec.from_config(loose)))
    doc = {"checksum": "sha256:x", "params": {"k": 50, **a}}
    assert mismatch(doc, "sha256:x", {"k": 50, **a}) is None
    said = mismatch(doc, "sha256:x", {"k": 50, **b})  # the one setting that differs, alone
    assert said == (
        "it was built with relevance.grades = {'ANSWER-THE-QUESTION': 2, 'IRRELEVANT': 1, "
        "'RELATED': 1}, the config asks for {'ANSWER-THE-QUESTION': 2, 'IRRELEVANT': 0, "
        "'RELATED': 0}"
    )
    # a file built before recorded the distractors too: they still decide nothing
    before = {"checksum": "sha256:x", "params": {"k": 50, "relevance": {**gold, "distractors": []}}}
    assert mismatch(before, "sha256:x", {"k": 50, **a}) is None
    # a benchmark without labels or dates: the settings change nothing, and are not recorded
    demo = judge(harness.load_benchmark("demo"), RelevanceSpec.from_config(strict))
    assert relevance_param({"relevance": strict}, demo) == {}


def test_the_rebuild_command_names_a_corpus_read_by_path_as_it_was_given():
    from harness.strata.file import rebuild_command

    def cfg(corpus):
        strata = {"embedder": "minilm", "resolution": 1.0}
        return {"corpus": corpus, "strata": strata, "extractor": {"name": "offline"}}

    named = cfg({"name": "general-wiki", "format": "redqa", "git_blob_sha1": "x"})
    assert rebuild_command(named, "general-wiki") == (
        "python -m harness.stratify corpus=general-wiki --force"
    )
    redqa = cfg({"name": None, "format": "redqa", "path": "data/p1.json"})
    assert rebuild_command(redqa, "p1") == (
        "python -m harness.stratify corpus=redqa corpus.path=data/p1.json --force"
    )
    beir = cfg({"name": "sf", "format": "beir", "path": "my data/sf", "split": "dev"})
    assert rebuild_command(beir, "sf") == (
        "python -m harness.stratify corpus=beir 'corpus.path=my data/sf' corpus.name=sf "
        "corpus.split=dev --force"
    )
