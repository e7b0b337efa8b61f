"""`python -m harness.trec_eval` against trec_eval 10.0 itself: its C sources (the folder
$HARNESS_TREC_EVAL_SRC, by default ../shared/tools/trec_eval-10 beside the checkout) are built
with make into a temporary folder, and both programs score thousands of random qrels and runs
(ties, negative, zero and large grades, unjudged documents, queries in one file only, duplicate
lines, every flag) to the same bytes. Without a C compiler or the sources those tests skip.

With --v9 (metrics.trec_eval's version 9) the numbers are trec_eval 9.0.8's, checked against
pytrec_eval, which bundles it."""

from __future__ import annotations

import contextlib
import io
import math
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import trec_eval as cli
from harness.core.errors import ConfigError, HarnessError
from harness.core.run import Run
from metrics import trec_eval
from tests.helpers.cli import assert_one_line_error, run_module

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(os.environ.get("HARNESS_TREC_EVAL_SRC", ROOT.parent / "shared/tools/trec_eval-10"))


@pytest.fixture(scope="module")
def c_trec_eval(tmp_path_factory) -> Path:
    """trec_eval 10.0 built from its sources in a temporary folder."""
    if not (SOURCE / "trec_eval.c").is_file():
        pytest.skip(f"trec_eval's sources are not at {SOURCE} (set HARNESS_TREC_EVAL_SRC)")
    if not (shutil.which("make") and (shutil.which("cc") or shutil.which("gcc"))):
        pytest.skip("no C compiler and make to build trec_eval 10.0 with")
    folder = tmp_path_factory.mktemp("trec_eval") / "src"
    shutil.copytree(SOURCE, folder)
    for path in folder.rglob("*"):  # the reference copy is read-only
        path.chmod(0o755 if path.is_dir() else 0o644)
    subprocess.run(["make", "-s"], cwd=folder, check=True, capture_output=True)
    return folder / "trec_eval"


DOCS = [f"d{i}" for i in range(12)] + ["D1", "d1x", "é9"]
MEASURES = [
    ["-m", "all_trec"],
    ["-m", "official"],
    ["-m", "set"],
    ["-m", "all_trec", "-m", "relstring.5"],
    ["-m", "P.3,1,7", "-m", "ndcg.1=3,2=0.5", "-m", "Rndcg", "-m", "G.2=4", "-m", "rbp.p=0.5"],
    ["-m", "iprec_at_recall.0.33,0.5,0.05", "-m", "11pt_avg.0.5,0.2", "-m", "Rprec_mult.0.5,1.5"],
    ["-m", "utility.2,-1,0.5,0.1", "-m", "set_F.0.5", "-m", "ndcg_rel", "-m", "dcg"],
    ["-m", "ideal_dcg", "-m", "unj.1,3", "-m", "ndcg.0=1,1=2,3=-1", "-m", "rbp_resid.p=0.3"],
    ["-m", "G", "-m", "binG", "-m", "recall.2,4", "-m", "map_cut.1,3", "-m", "success.2"],
]


def _case(rng: random.Random):
    """Random qrels and run files' text and trec_eval flags."""
    qrels, run = [], []
    for i in range(rng.randint(1, 5)):
        q = f"q{i}" if rng.random() < 0.9 else f"Q{i}"  # upper case sorts first
        if i == 0 or rng.random() < 0.85:
            for d in rng.sample(DOCS, rng.randint(1, 8)):
                grade = rng.choice([0, 0, 1, 1, 2, 3, -1, rng.randint(-5, 40)])
                qrels.append(f"{q} 0 {d} {grade}")
        if i == 0 or rng.random() < 0.85:
            for rank, d in enumerate(rng.sample(DOCS, rng.randint(1, 14))):
                score = rng.choice(["1", "0.5", "2", "0", "-1", f"{rng.random():.3f}", "3.25"])
                run.append(f"{q} Q0 {d} {rank + 1} {score} tag{rng.randint(0, 2)}")
    flags = [f for f, p in (("-q", 0.5), ("-c", 0.3), ("-J", 0.2), ("-n", 0.1)) if rng.random() < p]
    if rng.random() < 0.2:
        flags += ["-M", str(rng.randint(1, 6))]
    if rng.random() < 0.2:
        flags += ["-l", str(rng.randint(1, 3))]
    if rng.random() < 0.2:
        flags += ["-N", str(rng.randint(10, 100))]
    judged = {line.split()[0] for line in qrels}
    if "-M" not in flags and rng.random() < 0.05:
        # a line twice: trec_eval refuses it in a query it scores, within -M's cut (the
        # harness refuses any, when reading the run: docs/usage.md, trec_eval 10.0 drop-in)
        twice = [line for line in run if line.split()[0] in judged]
        run.append(rng.choice(twice))
    rng.shuffle(qrels)
    rng.shuffle(run)
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n", flags + rng.choice(MEASURES)


def _harness(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(args)
        except SystemExit as exc:  # bad input: one error line, exit 2
            status = exc.code
    return status, out.getvalue()


def _comparable(text: str) -> str:
    """The output without rbp's lines: trec_eval 10.0's rbp reads two variables it never
    sets (m_rbp.c's min and max, which decide whether the gains are rescaled), so its value
    is whatever its stack held, and moves with the flags. (Its own test outputs, which
    test_trec_eval_s_own_test_folder checks, agree with ours.)"""
    return "".join(ln for ln in text.splitlines(True) if not ln.startswith(("rbp ", "rbp_p")))


@pytest.mark.parametrize("seed", range(5))
def test_random_cases_print_what_trec_eval_10_prints(c_trec_eval, tmp_path, seed):
    """500 cases a seed (2,500 in all): the same output byte for byte, or both refuse the
    input (about a fifth: a judged query the run lacks without -c, a first query judged only
    below 0, a duplicate line)."""
    rng = random.Random(seed)
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    compared = crashed = refused = 0
    for i in range(500):
        qrels, run, flags = _case(rng)
        qrels_path.write_text(qrels)
        run_path.write_text(run)
        args = [*flags, str(qrels_path), str(run_path)]
        c = subprocess.run([str(c_trec_eval), *args], capture_output=True, text=True)
        if c.returncode < 0:  # trec_eval died (a later query judged only below -1 overruns
            crashed += 1  # its grade buffer): there is nothing to compare with
            continue
        status, out = _harness(args)
        case = f"case {seed}/{i}: {' '.join(flags)}\n{qrels}\n{run}"
        assert (status == 0) == (c.returncode == 0), f"{case}\n{c.stderr}"
        if status:
            refused += 1
            continue
        assert _comparable(out) == _comparable(c.stdout), case
        compared += 1
    assert compared >= 300 and refused >= 25 and crashed <= 60, (compared, refused, crashed)


TESTS = os.environ.get("HARNESS_TREC_EVAL_TESTS")  # trec_eval's own test/ folder, if at hand
SUITE = [  # trec_eval's Makefile quicktest, the all_trec part: (expected output, arguments)
    ("out.test", "qrels.test results.test"),
    ("out.test", "qrels.test.with-comments results.test"),
    ("out.comment.test", "qrels.comment.test results.comment.test"),
    ("out.test.a", "-m all_trec qrels.test results.test"),
    ("out.test.aq", "-m all_trec -q qrels.test results.test"),
    ("out.test.aqc", "-m all_trec -q -c qrels.test results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100 qrels.test results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test"),
    (
        "out.test.meas_params",
        "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
        "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
        "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 qrels.test results.test",
    ),
]


@pytest.mark.skipif(not TESTS, reason="set HARNESS_TREC_EVAL_TESTS to trec_eval's test folder")
@pytest.mark.parametrize("expected, args", SUITE)
def test_trec_eval_s_own_test_folder(expected, args):
    folder = Path(TESTS)
    words = [str(folder / w) if (folder / w).is_file() else w for w in args.split()]
    status, out = _harness(words)
    assert status == 0 and out == (folder / expected).read_text()


def test_a_query_the_run_lacks_stops_trec_eval_10_unless_complete():
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"d": 0}}
    run = Run.from_dict({"q1": {"a": 1.0, "x": 0.5}}, name="r")
    asked = trec_eval.requested(["num_q", "num_ret", "num_rel", "map", "gm_map", "P.1", "unj.1"])
    with pytest.raises(HarnessError, match="query q2 of the qrels has no results in the run"):
        trec_eval.evaluate(qrels, run, asked)
    full = trec_eval.evaluate(qrels, run, asked, options=trec_eval.Options(complete=True))
    summary = {m: v for m, v, _ in full.summary}
    # q2 and q3 are scored as one unjudged document, then num_ret and unj are zeroed
    assert summary["num_q"] == 3 and summary["num_ret"] == 2 and summary["unj_1"] == 0
    assert summary["num_rel"] == 3  # with -c: every judgment above 0
    assert summary["map"] == pytest.approx(0.5 / 3) and summary["P_1"] == pytest.approx(1 / 3)
    assert summary["gm_map"] == pytest.approx(math.exp((math.log(0.5) + 2 * math.log(1e-5)) / 3))
    assert full.qids == ["q1", "q2", "q3"]
    old = trec_eval.evaluate(qrels, run, asked, options=trec_eval.Options(version=9))
    assert old.qids == ["q1"] and {m: v for m, v, _ in old.summary}["num_q"] == 1


def test_first_query_judged_only_below_zero_is_refused_as_trec_eval_does():
    qrels = {"a": {"x": -1}, "b": {"y": 1}}
    run = Run.from_dict({"a": {"x": 1.0}, "b": {"y": 1.0}})
    with pytest.raises(HarnessError, match="query a of the qrels has only negative judgments"):
        trec_eval.evaluate(qrels, run, trec_eval.requested([]))


def test_iprec_at_recall_rounds_in_10_and_adds_0_9_in_9():
    """4 relevant documents, recall 0.6: trec_eval 10 takes lround(2.4) = 2 of them,
    trec_eval 9 (long)(2.4 + 0.9) = 3. They are at ranks 1, 2, 10 and 20."""
    docs = {f"d{r}": 100.0 - r for r in range(1, 21)}
    qrels = {"q": {"d1": 1, "d2": 1, "d10": 1, "d20": 1}}
    run = Run.from_dict({"q": docs})
    asked = trec_eval.requested(["iprec_at_recall.0.6"])
    new = trec_eval.evaluate(qrels, run, asked).summary[0][1]
    old = trec_eval.evaluate(qrels, run, asked, options=trec_eval.Options(version=9))
    assert new == 1.0  # the best precision from the 2nd relevant document on: 2/2
    assert old.summary[0][1] == pytest.approx(0.3)  # from the 3rd on: 3/10


def test_measure_arguments_as_trec_eval_takes_them():
    asked = trec_eval.requested(["P.10,5", "map", "ndcg_cut.3", "iprec_at_recall.0.5,0.25"])
    assert list(asked) == ["map", "iprec_at_recall", "P", "ndcg_cut"]  # trec_eval's order
    assert asked["P"].values == (5, 10) and asked["iprec_at_recall"].values == (0.25, 0.5)
    assert asked["P"].names == ["P_5", "P_10"]
    assert asked["iprec_at_recall"].names == ["iprec_at_recall_0.25", "iprec_at_recall_0.50"]
    assert list(trec_eval.requested([])) == list(trec_eval.OFFICIAL)
    assert trec_eval.requested(["P"])["P"].values == trec_eval.CUTS
    assert trec_eval.requested(["P.5", "P.7"])["P"].values == (5,)  # the first one given
    assert trec_eval.requested(["ndcg_cut.23.4"])["ndcg_cut"].values == (23,)  # atol
    assert trec_eval.requested(["utility.2,-1,0,0"])["utility"].names == ["utility_2,-1,0,0"]
    assert trec_eval.requested(["ndcg.1=3,2=9"])["ndcg"].values == (("1", 3.0), ("2", 9.0))
    assert len(trec_eval.requested(["all_trec"])) == 37
    with pytest.raises(ConfigError, match="'prefs_simp' reads preference"):
        trec_eval.requested(["prefs_simp"])
    with pytest.raises(ConfigError, match="cut-offs must be positive whole numbers"):
        trec_eval.requested(["P.5,x"])
    with pytest.raises(ConfigError, match="a cut-off is given twice"):
        trec_eval.requested(["P.5,5"])
    with pytest.raises(
        ConfigError, match=r"'ndcg_cut_10' is not a trec_eval measure \(write ndcg_cut.10\)"
    ):
        trec_eval.requested(["ndcg_cut_10"])
    with pytest.raises(ConfigError, match="map takes no parameters"):
        trec_eval.requested(["map.5"])
    with pytest.raises(ConfigError, match="utility takes 4 coefficients"):
        trec_eval.requested(["utility.1,2"])
    with pytest.raises(ConfigError, match="name=value pairs"):
        trec_eval.requested(["ndcg.3"])


# --v9 is trec_eval 9.0.8, which pytrec_eval bundles: every measure both compute
pytrec_eval = pytest.importorskip("pytrec_eval")
PYTREC = [
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P.1,2,3,5,10",
    "recall.1,2,3,5,10",
    "infAP",
    "ndcg_cut.1,2,3,5,10,100",
    "map_cut.1,2,3,5,10",
    "success.1,2,3,5,10",
]
REFERENCE = set(PYTREC) - {"num_q"}


@st.composite
def cases(draw):
    qrels, run = {}, {}
    for i in range(draw(st.integers(1, 5))):
        q = f"q{i}"
        if i == 0 or draw(st.booleans()):
            judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=7, unique=True))
            qrels[q] = {d: draw(st.integers(-1, 3)) for d in judged}
            qrels[q][judged[0]] = max(qrels[q][judged[0]], 0)  # see the test above
        if i == 0 or draw(st.booleans()):
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True))
            run[q] = {d: draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])) for d in docs}
    return qrels, run, draw(st.sampled_from([1, 2]))


@settings(max_examples=250, deadline=None)
@given(cases())
def test_v9_is_pytrec_eval_per_query_and_over_all(case):
    qrels, run, level = case
    options = trec_eval.Options(level=level, version=9)
    asked = trec_eval.requested(PYTREC)
    if not any(q in qrels for q in run):
        with pytest.raises(HarnessError, match="no query has both results and judgments"):
            trec_eval.evaluate(qrels, Run.from_dict(run), asked, options=options)
        return
    both = {q: r for q, r in run.items() if q in qrels}
    ref = pytrec_eval.RelevanceEvaluator(qrels, REFERENCE, relevance_level=level).evaluate(both)
    report = trec_eval.evaluate(qrels, Run.from_dict(run, name="r"), asked, options=options)
    per_query = {(m, q): v for m, q, v, _ in report.per_query}
    assert {q for _, q in per_query} == set(ref)
    for q, values in ref.items():
        for name, want in values.items():
            if name == "gm_map":  # not printed per query; pytrec_eval gives log(max(AP, 1e-5))
                want = math.exp(want)
                got = max(per_query.get(("map", q)), trec_eval.MIN_GEO_MEAN)
            else:
                got = per_query[(name, q)]
            assert got == pytest.approx(want, abs=1e-9), (name, q, qrels[q], run[q])
    summary = {m: v for m, v, _ in report.summary}
    n = len(ref)
    assert summary["num_q"] == n
    for name in ("num_ret", "num_rel", "num_rel_ret"):
        assert summary[name] == sum(v[name] for v in ref.values())
    for name in ("map", "bpref", "infAP", "P_5", "ndcg_cut_100", "iprec_at_recall_0.30"):
        mean = math.fsum(v[name] for v in ref.values()) / n
        assert summary[name] == pytest.approx(mean, abs=1e-12), name


QRELS = """\
# a comment line, as trec_eval skips it
q2 0 d1 1
q1 0 d1 2
q1 0 d2 0
q1\t0\td3   1
q3 0 d9 1
"""
RUN = """\
q1 Q0 d2 1 2.5 sysA extra fields are ignored
q1 Q0 d1 2 2.5 sysA
q1 Q0 d7 3 1.0 sysA
q1 Q0 d3 4 0.5 sysA
q2 Q0 d4 1 3.0 sysA
q2 Q0 d1 2 1.0 sysB
q9 Q0 d1 1 1.0 sysB
"""


def test_the_command_prints_what_trec_eval_prints(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    out = run_module(
        "harness.trec_eval", "-q", "-c", "-m", "map", "-mP.1,2", "-m", "num_ret", "qrels.txt",
        "run.trec", cwd=tmp_path,
    ).stdout  # fmt: skip
    # q1: d2 and d1 tie at 2.5, docno descending puts d2 first; d1 (grade 2) at rank 2, d3 at 4
    ap1 = (1 / 2 + 2 / 4) / 2
    ap2 = 1 / 2  # q2: d1 at rank 2; q3 is not in the run (-c: scored empty), q9 not judged
    assert out == (
        "num_ret               \tq1\t4\n"
        f"map                   \tq1\t{ap1:6.4f}\n"
        "P_1                   \tq1\t0.0000\n"
        "P_2                   \tq1\t0.5000\n"
        "num_ret               \tq2\t2\n"
        f"map                   \tq2\t{ap2:6.4f}\n"
        "P_1                   \tq2\t0.0000\n"
        "P_2                   \tq2\t0.5000\n"
        "num_ret               \tq3\t0\n"
        "map                   \tq3\t0.0000\n"
        "P_1                   \tq3\t0.0000\n"
        "P_2                   \tq3\t0.0000\n"
        "num_ret               \tall\t6\n"
        f"map                   \tall\t{(ap1 + ap2) / 3:6.4f}\n"
        "P_1                   \tall\t0.0000\n"
        "P_2                   \tall\t0.3333\n"
    )
    official = run_module("harness.trec_eval", "-c", "qrels.txt", "run.trec", cwd=tmp_path)
    lines = official.stdout.splitlines()
    assert lines[0] == "runid                 \tall\tsysB"  # the last line's tag
    assert lines[1] == "num_q                 \tall\t3"
    assert lines[3] == "num_rel               \tall\t4"
    assert lines[-1].startswith("P_1000                \tall\t")
    assert len(lines) == 10 + 11 + 9
    import gzip

    (tmp_path / "run.trec.gz").write_bytes(gzip.compress(RUN.encode()))
    packed = run_module("harness.trec_eval", "-c", "qrels.txt", "run.trec.gz", cwd=tmp_path)
    assert packed.stdout == official.stdout
    quiet = run_module("harness.trec_eval", "-n", "-q", "--v9", "-m", "map", "qrels.txt",
                       "run.trec", cwd=tmp_path).stdout  # fmt: skip
    assert quiet.splitlines() == [
        f"map                   \tq1\t{ap1:6.4f}",
        f"map                   \tq2\t{ap2:6.4f}",
    ]
    same = run_module("harness", "trec_eval", "-q", "-c", "-m", "map", "-mP.1,2", "-m",
                      "num_ret", "qrels.txt", "run.trec", cwd=tmp_path).stdout  # fmt: skip
    assert same == out


@pytest.mark.parametrize(
    "args, message",
    [
        (["-m", "nope", "qrels.txt", "run.trec"], "-m nope: 'nope' is not a trec_eval measure"),
        (["qrels.txt", "run.trec"], "query q3 of the qrels has no results in the run (1 such)"),
        (["-l", "0", "qrels.txt", "run.trec"], "-l must be a grade of 1 or more"),
        (["-M", "0", "qrels.txt", "run.trec"], "-M must be a positive number"),
        (["nope.txt", "run.trec"], "nope.txt"),
        (["qrels.txt", "nope.trec"], "run file not found"),
        (["dup.txt", "run.trec"], "dup.txt:3: q1 d1 is judged twice"),
        (["short.txt", "run.trec"], "short.txt:2: expected 'qid iter docid rel' (TREC qrels)"),
        (["three.txt", "run.trec"], "three.txt:1: 'q1 d1 1' has 3 fields apart by spaces; BEIR"),
        (["-x", "qrels.txt", "run.trec"], "unrecognized arguments: -x"),
        (["run.trec", "qrels.txt"], "run.trec reads like a run and qrels.txt like qrels: trec_"),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, message):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "dup.txt").write_text("q1 0 d1 1\nq1 0 d2 1\nq1 0 d1 0\n")
    (tmp_path / "short.txt").write_text("q1 0 d1 1\nq1 0 d2\n")
    (tmp_path / "three.txt").write_text("q1 d1 1\n")  # BEIR's three fields split by tabs only
    (tmp_path / "run.trec").write_text(RUN)
    res = run_module("harness.trec_eval", *args, cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, message)
