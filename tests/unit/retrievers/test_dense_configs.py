"""Every dense model config states what the issue asks, composes, and builds without loading."""

import re

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from harness.cli.hydra_conf import register
from harness.core.paths import conf_dir, group_options
from retrievers import build_retriever
from retrievers.encoders import DTYPES

register()

ST_MODELS = {
    "qwen3-0.6b": "Qwen/Qwen3-Embedding-0.6B",
    "qwen3-4b": "Qwen/Qwen3-Embedding-4B",
    "qwen3-8b": "Qwen/Qwen3-Embedding-8B",
    "bge-m3": "BAAI/bge-m3",
    "e5-large": "intfloat/multilingual-e5-large",
    "e5-mistral-7b": "intfloat/e5-mistral-7b-instruct",
    "jina-v4": "jinaai/jina-embeddings-v4",
    "embeddinggemma-300m": "google/embeddinggemma-300m",
    "minilm": "sentence-transformers/all-MiniLM-L6-v2",
}
# Only models shipping their own modelling code may run remote code.
NEEDS_REMOTE_CODE = {"jina-v4"}


def _own_keys(name: str) -> dict:
    """The keys written in the model's own file."""
    return yaml.safe_load((conf_dir() / "retriever" / f"{name}.yaml").read_text())


@pytest.fixture(scope="module")
def hydra_ctx():
    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        yield


def test_the_suite_is_all_there():
    options = set(group_options("retriever"))
    assert set(ST_MODELS) | {"openai-large", "hybrid-bm25-minilm"} <= options


@pytest.mark.parametrize("name", sorted(ST_MODELS))
def test_model_config_states_everything(hydra_ctx, name):
    own = _own_keys(name)
    for key in (
        "model", "revision", "query_prompt", "query_prompt_name", "document_prompt",
        "document_prompt_name", "max_seq_length", "normalize", "dtype", "batch_size",
        "trust_remote_code",
    ):  # fmt: skip
        assert key in own, f"{name}.yaml does not state {key}"
    assert own["model"] == ST_MODELS[name]
    assert own["trust_remote_code"] is (name in NEEDS_REMOTE_CODE)
    assert own["dtype"] in DTYPES and own["normalize"] is True
    assert isinstance(own["max_seq_length"], int) and isinstance(own["batch_size"], int)
    # one way to give each prompt, never both
    assert own["query_prompt"] is None or own["query_prompt_name"] is None
    assert own["document_prompt"] is None or own["document_prompt_name"] is None
    cfg = compose(config_name="config", overrides=[f"retriever={name}", "device=cpu"])
    resolved = OmegaConf.to_container(cfg, resolve=True)
    built = build_retriever(resolved["retriever"], {"device": "cpu", "cache": False})
    assert built.name == name and built.encoder._model is None  # nothing loaded
    assert built.encoder.dtype == "fp32"  # auto on the CPU


@pytest.mark.parametrize("path", sorted((conf_dir() / "retriever").glob("*.yaml")), ids=str)
def test_remote_code_is_pinned_to_a_commit(path):
    """A config that runs a model's own code names the exact commit of that code."""
    own = yaml.safe_load(path.read_text())
    if own.get("trust_remote_code"):
        assert isinstance(own.get("revision"), str), f"{path.name}: revision is not a string"
        assert re.fullmatch(r"[0-9a-f]{40}", own["revision"]), f"{path.name}: not a commit"


def test_prompts_follow_the_model_cards():
    assert _own_keys("qwen3-8b")["query_prompt_name"] == "query"
    assert _own_keys("e5-large")["query_prompt"] == "query: "
    assert _own_keys("e5-large")["document_prompt"] == "passage: "
    assert _own_keys("e5-mistral-7b")["query_prompt_name"] == "web_search_query"
    jina = _own_keys("jina-v4")
    assert (jina["query_prompt_name"], jina["document_prompt_name"]) == ("query", "passage")
    assert jina["model_kwargs"] == {"default_task": "retrieval"}
    gemma = _own_keys("embeddinggemma-300m")
    assert (gemma["query_prompt_name"], gemma["document_prompt_name"]) == ("query", "document")


def test_openai_config_keeps_the_key_out(hydra_ctx, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    cfg = compose(config_name="config", overrides=["retriever=openai-large"])
    resolved = OmegaConf.to_container(cfg, resolve=True)
    assert "sk-secret" not in str(resolved)
    built = build_retriever(resolved["retriever"], {"cache": False})
    assert "sk-secret" not in str(built.encoder.identity("query"))


def test_hybrid_composes_its_parts(hydra_ctx):
    cfg = compose(config_name="config", overrides=["retriever=hybrid-bm25-minilm"])
    parts = cfg.retriever.parts
    assert set(parts) == {"bm25", "minilm"}
    assert parts.bm25.type == "bm25" and parts.minilm.model == ST_MODELS["minilm"]
    assert cfg.retriever.rrf_k == 60 and cfg.retriever.fusion == "rrf"
