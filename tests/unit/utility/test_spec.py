"""UtilitySpec.from_config: defaults, one-line errors naming the key and the fix, identity."""

from __future__ import annotations

import pytest

from harness.core.errors import ConfigError
from harness.utility.spec import DEFAULT_GENERATOR, DEFAULT_NLI, ModelSpec, UtilitySpec


def test_defaults():
    s = UtilitySpec.from_config(None)
    assert (s.generator.backend, s.generator.model) == ("hf", DEFAULT_GENERATOR)
    assert (s.nli.backend, s.nli.model) == ("hf", DEFAULT_NLI)
    assert (s.samples, s.temperature, s.top_p, s.max_new_tokens) == (10, 1.0, 1.0, 32)
    assert (s.threshold, s.with_question, s.length_normalize, s.seed) == (0.5, True, True, 0)
    assert s.cache is None
    assert "{passages}" in s.prompt and "{passages}" not in s.prompt_closed


def test_section_with_overrides_and_omegaconf():
    from omegaconf import OmegaConf

    cfg = OmegaConf.create(
        {
            "generator": {
                "model": "org/gen",
                "revision": "main",
                "batch_size": 64,
                "options": {"chat_template": False},
            },  # fmt: skip
            "nli": {"backend": "custom", "target": "pkg.mod.NLI", "options": {"x": [1, 2]}},
            "samples": 5,
            "cache": "~/utility-cache",
        }
    )
    s = UtilitySpec.from_config(cfg)
    assert s.generator == ModelSpec("hf", "org/gen", "main", batch_size=64,
                                    options={"chat_template": False})  # fmt: skip
    assert s.nli.target == "pkg.mod.NLI" and s.nli.model is None
    assert dict(s.nli.options) == {"x": [1, 2]}
    assert s.samples == 5 and "~" not in str(s.cache)
    hash(s)  # frozen, options included


@pytest.mark.parametrize(
    "section, message",
    [
        ({"sample": 3}, "unknown setting utility.sample (did you mean 'samples'?)"),
        ({"samples": 0}, "utility.samples must be an integer >= 1, got 0"),
        ({"samples": True}, "utility.samples must be an integer >= 1"),
        ({"temperature": 0}, "utility.temperature must be > 0"),
        ({"top_p": 1.5}, "utility.top_p must be in (0, 1]"),
        ({"threshold": -0.1}, "utility.threshold must be in [0, 1]"),
        ({"with_question": "yes"}, "utility.with_question must be true or false"),
        ({"prompt": "Q: {question}"}, "utility.prompt lacks {passages}"),
        ({"prompt": "{question} {passages} {date}"}, "utility.prompt uses {date}"),
        ({"prompt_closed": "{question} {passages}"}, "utility.prompt_closed uses {passages}"),
        ({"passage": "{rank} {title"}, "utility.passage is not a valid template"),
        ({"generator": {"backend": "vllm"}}, "utility.generator.backend is 'vllm'"),
        ({"nli": {"backend": "openai", "model": "m"}}, "openai serves the generator only"),
        ({"generator": {"backend": "openai"}}, "utility.generator.model is required"),
        ({"generator": {"dtype": "int8"}}, "utility.generator.dtype is 'int8'"),
        ({"generator": {"device": "gpu"}}, "utility.generator.device is 'gpu'"),
        ({"nli": {"batch_size": 0}}, "utility.nli.batch_size must be an integer >= 1"),
        ({"generator": {"revision": 123}}, "utility.generator.revision must be a branch"),
        ({"generator": {"backend": "custom"}}, "utility.generator.target is None"),
        ({"generator": {"target": "a.B"}}, "set utility.generator.backend=custom"),
        ({"generator": {"options": {"chat_templat": 1}}}, "did you mean 'chat_template'"),
        ({"nli": {"options": {"chat_template": True}}}, "unknown option utility.nli.options"),
        (
            {"generator": {"model": "org/m", "options": {"trust_remote_code": True}}},
            "utility.generator.revision=<40-hex commit",
        ),
        ({"cache": 3}, "utility.cache must be a folder path or null"),
    ],
)
def test_errors_are_one_line(section, message):
    with pytest.raises(ConfigError) as info:
        UtilitySpec.from_config(section)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_identity_has_what_changes_numbers_only():
    a = UtilitySpec.from_config({"generator": {"batch_size": 8, "device": "cpu"}, "cache": "/x"})
    b = UtilitySpec.from_config({"generator": {"batch_size": 64}, "nli": {"device": "cuda:1"}})
    assert a.identity() == b.identity()
    c = UtilitySpec.from_config({"generator": {"revision": "abc"}})
    d = UtilitySpec.from_config({"prompt": "{passages}\n{question}"})
    e = UtilitySpec.from_config({"threshold": 0.7})
    assert len({str(x.identity()) for x in (a, c, d, e)}) == 4
    assert list(a.identity()) == sorted(a.identity())
    # an endpoint's retries and key variable change nothing; its address does
    o1 = ModelSpec("openai", "m", options={"base_url": "http://a/v1", "max_retries": 1})
    o2 = ModelSpec("openai", "m", options={"base_url": "http://a/v1", "api_key_env": "K"})
    o3 = ModelSpec("openai", "m", options={"base_url": "http://b/v1"})
    assert o1.identity() == o2.identity() != o3.identity()


def test_options_must_be_json():
    with pytest.raises(ConfigError, match="must be JSON values"):
        ModelSpec("custom", None, target="a.B", options={"f": object()})


def test_a_local_model_folder_is_another_model_once_its_files_change(tmp_path):
    """Weights saved again in the same folder (a fine-tuning checkpoint) change the cache
    identity, so no answer cached for the old weights is read for the new ones."""
    import os

    from harness.utility.hf import hf_identity

    folder = tmp_path / "model"
    folder.mkdir()
    weights = folder / "model.safetensors"
    weights.write_bytes(b"old")
    spec = ModelSpec(backend="hf", model=str(folder), device="cpu")
    before = hf_identity(spec)
    assert hf_identity(spec) == before  # stable while nothing changes
    weights.write_bytes(b"new")
    os.utime(weights, ns=(10**18, 10**18))
    assert hf_identity(spec) != before and hf_identity(spec)["path"] == before["path"]
