"""docs/api.md runs: every ```python block, top to bottom, in one namespace, as a notebook."""

from __future__ import annotations

import re
import shutil

from tests.conftest import ROOT

DOC = ROOT / "docs" / "api.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_api_walkthrough_runs(tmp_path, monkeypatch):
    code = blocks()
    assert len(code) >= 6, "docs/api.md lost its examples"
    (tmp_path / "docs" / "examples").mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "examples" / "toy_plugins.py", tmp_path / "docs" / "examples")
    monkeypatch.chdir(tmp_path)  # the docs run from a repository root; files land here
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path / "docs" / "examples"))
    namespace: dict = {"__name__": "__api_docs__"}
    for i, block in enumerate(code, start=1):
        exec(compile(block, f"docs/api.md block {i}", "exec"), namespace)  # noqa: S102
    assert (tmp_path / "results" / "demo" / "bm25-api" / "metrics.json").is_file()
    assert namespace["report"].to_markdown() == namespace["markdown"]
    assert "\\toprule" in namespace["latex"]
