"""Every retriever x corpus config composes against the schema; bad choices are caught early."""

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from harness.cli.hydra_conf import register
from harness.core.errors import ConfigError
from harness.core.paths import conf_dir, group_options
from metrics.registry import metrics_for
from retrievers import build_retriever

register()


@pytest.fixture(scope="module")
def hydra_ctx():
    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        yield


@pytest.mark.parametrize("retriever", group_options("retriever"))
@pytest.mark.parametrize("corpus", group_options("corpus"))
def test_every_cell_composes(hydra_ctx, retriever, corpus):
    overrides = [f"retriever={retriever}", f"corpus={corpus}"]
    if corpus in ("redqa", "beir"):
        overrides.append("corpus.path=/data/x")
    if corpus == "hf":
        overrides.append("corpus.dataset=BeIR/scifact")
    if corpus == "irds":
        overrides.append("corpus.id=beir/scifact/test")
    if retriever == "run_file":
        overrides.append("retriever.path=/runs/run_file.trec")
    if retriever == "custom":  # a plug-in: any class with the retriever protocol
        overrides.append("retriever._target_=retrievers.bm25.BM25")
    cfg = compose(config_name="config", overrides=overrides)
    resolved = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    assert resolved["corpus"]["format"] in ("redqa", "beir", "hf", "irds")
    built = build_retriever(resolved["retriever"])  # validates parameters, loads nothing
    assert built.name == retriever


@pytest.mark.parametrize("metrics", group_options("metrics"))
def test_every_metric_set_parses(hydra_ctx, metrics):
    cfg = compose(config_name="config", overrides=[f"metrics={metrics}"])
    parsed = metrics_for(list(cfg.metrics.names), list(cfg.metrics.k), cfg.retrieval.depth)
    assert parsed and cfg.metrics.relevance_level == 1


def test_run_file_needs_a_path():
    with pytest.raises(ConfigError, match="needs retriever.path=FILE"):
        build_retriever({"name": None, "type": "run_file", "path": None})


def test_named_corpora_are_pinned(hydra_ctx):
    for name in ("finance", "patent", "legal", "general-wiki"):
        c = compose(config_name="config", overrides=[f"corpus={name}"]).corpus
        assert len(c.git_blob_sha1) == 40 and c.file == f"redqa/{name}.json"
        assert "5667e3cd432cdc55c0abe0a3893132cd43a07d2d" in c.url


def test_schema_rejects_wrong_types_and_typos(hydra_ctx):
    with pytest.raises(Exception, match="k"):
        compose(config_name="config", overrides=["metrics.k=[ten]"])
    with pytest.raises(Exception, match="dpeth"):
        compose(config_name="config", overrides=["retrieval.dpeth=3"])


def test_bad_retriever_parameters():
    with pytest.raises(ConfigError, match="retriever.b must be in"):
        build_retriever({"name": "bm25", "type": "bm25", "b": 2})
    with pytest.raises(ConfigError, match="unknown tokenizer 'simpel'.*did you mean 'simple'"):
        build_retriever({"name": "bm25", "type": "bm25", "tokenizer": "simpel"})
    with pytest.raises(ConfigError, match="unknown retriever type 'bm52'"):
        build_retriever({"name": "x", "type": "bm52"})
