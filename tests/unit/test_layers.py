"""The package's layers: every import (inside functions too) points down the layer order, and
no module imports itself back through others (docs/architecture.md draws the layers)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGES = ("harness", "retrievers", "metrics")

# layer -> the layers it may import (itself included). Lower layers never import higher ones.
ALLOWED = {
    "harness.core": {"harness.core"},
    "harness.data": {"harness.core", "harness.data"},
    "metrics": {"harness.core", "metrics"},
    "retrievers": {"harness.core", "retrievers"},
    "harness.strata": {"harness.core", "harness.data", "metrics", "retrievers", "harness.strata"},
    # retrieval utility (ΔSePer): generators and NLI models, loaded like retrievers' models
    "harness.utility": {"harness.core", "harness.data", "metrics", "retrievers", "harness.utility"},
    # end-to-end RAG: a generator (harness.utility's models and cache) and a judge
    "harness.rag": {
        *("harness.core", "harness.data", "metrics", "retrievers", "harness.utility"),
        "harness.rag",
    },
    "harness.cell": {
        *("harness.core", "harness.data", "metrics", "retrievers", "harness.strata"),
        *("harness.utility", "harness.rag", "harness.cell"),
    },
    "harness.report": {
        *("harness.core", "harness.data", "metrics", "harness.strata", "harness.cell"),
        *("harness.utility", "harness.rag", "harness.report"),
    },
    "harness.api": {
        *("harness.core", "harness.data", "metrics", "retrievers", "harness.strata"),
        *("harness.utility", "harness.rag", "harness.cell", "harness.report", "harness.api"),
    },
    "harness.cli": {
        *("harness.core", "harness.data", "metrics", "retrievers", "harness.strata"),
        *("harness.utility", "harness.rag", "harness.cell", "harness.report", "harness.cli"),
    },
    # the package itself: the lazy public API and the `python -m harness.X` starters
    "harness": {"harness.core", "harness.api", "harness.cli"},
}


def layer(module: str) -> str:
    """The layer a module belongs to: the longest ALLOWED key that prefixes it."""
    best = ""
    for key in ALLOWED:
        if (module == key or module.startswith(key + ".")) and len(key) > len(best):
            best = key
    assert best, f"{module} belongs to no layer; add it to ALLOWED and docs/architecture.md"
    return best


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def imports(path: Path, name: str, is_package: bool) -> set[str]:
    """Every project module `path` imports, anywhere in the file (functions included)."""
    found: set[str] = set()
    base = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                mod = ".".join(base[: len(base) - node.level + 1] + [node.module or ""]).strip(".")
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import module`
    return {m for m in found if m.split(".")[0] in PACKAGES}


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {
        name: {m for m in imports(path, name, path.name == "__init__.py") if m in mods} - {name}
        for name, path in mods.items()
    }


def test_every_import_points_down_the_layers():
    bad = []
    for name, targets in graph().items():
        for target in targets:
            if layer(target) not in ALLOWED[layer(name)]:
                bad.append(f"{name} imports {target} ({layer(name)} -> {layer(target)})")
    assert not bad, "imports against the layer order:\n" + "\n".join(sorted(bad))


def test_no_import_cycles():
    g = graph()
    # a package's __init__ importing its own submodules is not a cycle back into it
    edges = {n: {t for t in ts if not t.startswith(n + ".")} for n, ts in g.items()}
    cycles, state, stack = [], {}, []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for t in sorted(edges[n]):
            if state.get(t) == 1:
                cycles.append(" -> ".join(stack[stack.index(t) :] + [t]))
            elif t not in state:
                visit(t)
        stack.pop()
        state[n] = 2

    for n in sorted(edges):
        if n not in state:
            visit(n)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_checks_can_fail():
    """The walker sees imports inside functions, and the layer map rejects an upward import."""
    src = ROOT / "retrievers" / "base.py"
    assert "harness.core.types" in imports(src, "retrievers.base", False)
    assert layer("harness.cli.run") == "harness.cli"
    assert "harness.cli" not in ALLOWED[layer("retrievers.dense")]


def test_every_package_folder_is_installed():
    """pyproject.toml lists packages by hand: a new folder missing there works from a checkout
    and breaks an installed copy."""
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for top in PACKAGES
        for p in (ROOT / top).rglob("__init__.py")
    }
    assert found - listed == set()
