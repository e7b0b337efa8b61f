"""Where a benchmark's strata file lives, and reading, checking and writing it.

One file per (corpus, extractor, embedder, γ):
<strata.dir>/<corpus>/<extractor>_<embedder>_g<γ>.json.
It records the corpus checksum and every parameter, so a file built for other data or other
settings is refused (by runs) or rebuilt (by `python -m harness.stratify`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from harness.core.confs import runtime_of
from harness.core.errors import HarnessError
from harness.core.files import hold_lock, remove_temp_files, write_text_atomic
from harness.strata.build import SCHEMA


def path_for(cfg: Mapping[str, Any], corpus: str) -> Path:
    s = cfg["strata"]
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in cfg["extractor"]["name"])
    name = f"{safe}_{s['embedder']}_g{float(s['resolution']):g}.json"
    return Path(s["dir"]).expanduser() / corpus / name


def corpus_args(corpus: Mapping[str, Any], name: str) -> list[str]:
    """The overrides that name this corpus again: its config's name, or for data read by
    path (corpus=redqa / beir / ...) the format and the path, with the settings that change
    what is read."""
    import shlex

    if not corpus.get("path"):
        return [f"corpus={name}"]
    out = [f"corpus={corpus.get('format', 'redqa')}", f"corpus.path={corpus['path']}"]
    for key in ("name", "split", "qrels"):
        if isinstance(corpus.get(key), str) and not (key == "split" and corpus[key] == "test"):
            out.append(f"corpus.{key}={corpus[key]}")
    return [shlex.quote(a) for a in out]


def rebuild_command(cfg: Mapping[str, Any], corpus: str) -> str:
    """The command that rebuilds the strata file this config points at."""
    s = cfg["strata"]
    parts = ["python -m harness.stratify", *corpus_args(cfg.get("corpus") or {}, corpus)]
    if cfg["extractor"].get("method") == "llm":
        parts += ["extractor=llm", f"extractor.model={cfg['extractor']['model']}"]
    elif cfg["extractor"]["name"] != "offline":
        parts.append(f"extractor={cfg['extractor']['name']}")
    if s["embedder"] != "minilm":
        parts.append(f"strata.embedder={s['embedder']}")
    if float(s["resolution"]) != 1.0:
        parts.append(f"strata.resolution={float(s['resolution']):g}")
    return " ".join(parts) + " --force"


def save(path: Path, doc: Mapping[str, Any]) -> None:
    """Compact, deterministic JSON, written atomically."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
    write_text_atomic(path, text, fault="stratify")


def load(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise HarnessError(
            f"strata file {path} cannot be read ({exc}); delete it and rebuild with "
            f"python -m harness.stratify"
        ) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise HarnessError(
            f"strata file {path} is not a '{SCHEMA}' file; delete it and rebuild with "
            f"python -m harness.stratify"
        )
    return doc


def mismatch(doc: Mapping[str, Any], checksum: str, params: Mapping[str, Any]) -> str | None:
    """Why a strata document does not fit this benchmark and these parameters (None: it does).

    `params` are compared key by key where the file has them; the embedder is compared by
    name and model (the rest of its identity is checked when the file is built)."""
    if doc.get("checksum") != checksum:
        return (
            f"it was built for corpus checksum {str(doc.get('checksum'))[:19]}, but the "
            f"benchmark now has {checksum[:19]}"
        )
    built = doc.get("params") or {}
    for key, want in params.items():
        have = built.get(key)
        if key == "embedder":
            have = {k: (have or {}).get(k) for k in want}
        if key == "relevance" and isinstance(have, dict):  # files built before recorded more
            from harness.strata.build import NOT_GOLD

            have = {k: v for k, v in have.items() if k not in NOT_GOLD}
        if isinstance(have, dict) and isinstance(want, dict) and have != want:
            sub = next(k for k in sorted({*have, *want}) if have.get(k) != want.get(k))
            key, have, want = f"{key}.{sub}", have.get(sub), want.get(sub)
        if have != want:
            return f"it was built with {key} = {have!r}, the config asks for {want!r}"
    return None


def run_params(cfg: Mapping[str, Any], bench) -> dict[str, Any]:
    """The parameters a run can check without loading the extractor's corpus statistics or the
    embedder: the extractor's settings, the embedder's name, k, τ, γ, seed, SCC threshold,
    and for a labelled or dated benchmark the relevance settings (they shape its gold)."""
    from harness.strata.build import base_params, make_extractor, relevance_param

    extractor = make_extractor(cfg["extractor"], {"cache": False})
    return {**base_params(cfg, extractor, {}), **relevance_param(cfg, bench)}


def ensure(
    bench, cfg: Mapping[str, Any], runtime: Mapping[str, Any], *, force: bool = False
) -> tuple[dict[str, Any], Path, str]:
    """The strata of `bench` for this config: read from its file when that fits, else built
    and written. Returns the document, the path and what happened ("cached", "built",
    "rebuilt: <why>")."""
    path = path_for(cfg, bench.name)
    # One builder per strata file: a second one waits, then finds the file built.
    lock = path.parent / f".{path.name}.lock"
    with hold_lock(lock, path, f"the strata file {path}", "strata.dir"):
        remove_temp_files(path)  # of a build that was killed while writing
        return _ensure(bench, cfg, runtime, path, force)


def _ensure(bench, cfg, runtime, path: Path, force: bool) -> tuple[dict[str, Any], Path, str]:
    from harness.strata.build import build

    status = "built"
    if path.is_file() and not force:
        try:
            doc = load(path)
            why = mismatch(doc, bench.checksum, run_params(cfg, bench))
        except HarnessError as exc:
            why = str(exc)
        if why is None:
            return doc, path, "cached"
        status = f"rebuilt: {why}"
    elif path.is_file():
        status = "rebuilt (--force)"
    doc = build(bench, cfg, runtime)
    save(path, doc)
    return doc, path, status


class ForRun(NamedTuple):
    """What a run reports of its strata: the document (None without one), its path, a note
    every report prints, and a hint report=full prints (how to build strata never built)."""

    doc: dict[str, Any] | None
    path: Path
    note: str | None = None
    hint: str | None = None


def for_run(cfg: Mapping[str, Any], bench) -> ForRun:
    """The strata a run reports, per strata.mode.

    A file that exists but does not fit is refused with the command that rebuilds it. With no
    file for these settings but files for others (strata.resolution=2 where γ = 1 was built),
    the note says so, as a run asking for other strata wants to hear."""
    mode = cfg["strata"]["mode"]
    if mode not in ("auto", "build", "off"):
        raise HarnessError(f"strata.mode must be auto, build or off, got {mode!r}")
    path = path_for(cfg, bench.name)
    if mode == "off":
        return ForRun(None, path)
    if mode == "build":
        doc, path, status = ensure(bench, cfg, runtime_of(cfg))
        return ForRun(doc, path, f"semantic strata {status}: {path}")
    if not path.is_file():
        build = rebuild_command(cfg, bench.name)[: -len(" --force")]
        others = sorted(  # strata files, not the reports beside them (<stem>.report.json)
            p.name for p in path.parent.glob("*_g*.json") if not p.name.endswith(".report.json")
        )
        if others:
            return ForRun(None, path, (
                f"no semantic strata for '{bench.name}' with these settings ({path.name}); "
                f"{path.parent} holds {', '.join(others)}; build them with: {build}"
            ))  # fmt: skip
        return ForRun(None, path, hint=f"no semantic strata for '{bench.name}' yet; build them "
                      f"once with: {build}")  # fmt: skip
    doc = load(path)
    why = mismatch(doc, bench.checksum, run_params(cfg, bench))
    if why is not None:
        raise HarnessError(
            f"strata file {path} does not fit this run: {why}; rebuild it with: "
            f"{rebuild_command(cfg, bench.name)}"
        )
    return ForRun(doc, path)
