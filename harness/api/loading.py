"""Benchmarks and retrievers by name, path or object: the API's ways in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError
from harness.core.types import Benchmark

RUNTIME_KEYS = ("device", "cache", "cache_dir")


def load_benchmark(name_or_path: str | Path | Benchmark, **options: Any) -> Benchmark:
    """A benchmark by config name (`"general-wiki"`, `"demo"`: conf/corpus/NAME.yaml, pinned and
    verified), by ir_datasets id (`"irds:beir/scifact/test"`), or by path (a RedQA JSON file,
    or a BEIR folder). `options` override the corpus config's keys: `split="dev"` for BEIR,
    `qrels=...` (a file or a DataFrame), `name=...`, `path=...`. What loading notes (judged
    ids the corpus lacks, a repeated gold group) is in the benchmark's `notes`, and in the
    notes of every evaluation of it."""
    from dataclasses import replace

    from harness.data import noted

    if isinstance(name_or_path, Benchmark):
        return name_or_path
    with noted() as notes:
        bench = _load(name_or_path, options)
    return replace(bench, notes=(*bench.notes, *notes)) if notes else bench


def _load(name_or_path: str | Path, options: dict[str, Any]) -> Benchmark:
    from harness.core.confs import named_config
    from harness.core.paths import group_options
    from harness.data.benchmarks import load_benchmark as load

    text = str(name_or_path)
    if isinstance(name_or_path, str) and text.startswith("irds:"):
        return load(named_config("corpus", "irds", {"id": text[len("irds:") :], **options}))
    path = Path(text).expanduser()
    if isinstance(name_or_path, str) and text in group_options("corpus"):
        cfg = named_config("corpus", text, options)
        needs = [k for k, v in named_config("corpus", text, {}).items() if v == "???"]
        unset = [k for k in needs if k not in options]  # beir, redqa, hf, irds: formats
        if unset and path.exists():  # load_benchmark("beir") beside a folder ./beir
            return _load(f"./{text}", options)
        if unset:
            raise ConfigError(
                f"'{text}' is a format, not a benchmark: it needs {', '.join(unset)}; give "
                f"load_benchmark('{text}', {unset[0]}=...), or a RedQA JSON file or BEIR folder "
                "by its path"
            )
        if path.exists() and not needs:  # a packaged benchmark's name, and a folder here
            import warnings

            warnings.warn(
                f"'{text}' names the packaged benchmark; the '{text}' here is not read (give "
                f"'./{text}' to read it)",
                stacklevel=3,  # the caller of load_benchmark
            )
        return load(cfg)
    if not path.exists():
        raise ConfigError(
            f"'{text}' is neither a corpus config ({', '.join(group_options('corpus'))}) nor an "
            "existing file or folder; give a name, a RedQA JSON file or a BEIR folder"
        )
    fmt = options.pop("format", "beir" if path.is_dir() else "redqa")
    if fmt in group_options("corpus"):  # beir, redqa: the settings their configs hold
        from omegaconf import OmegaConf

        from harness.core.confs import check_settings
        from harness.core.paths import conf_dir

        valid = [str(k) for k in OmegaConf.load(conf_dir() / "corpus" / f"{fmt}.yaml")]
        check_settings("corpus", fmt, options, valid)
    return load({"format": fmt, "path": str(path), **options})


def get_retriever(config: str, /, **overrides: Any):
    """The retriever conf/retriever/CONFIG.yaml describes, with `overrides` applied (e.g.
    `get_retriever("bm25", k1=0.9, name="bm25-k1")`, `get_retriever("minilm", device="cpu")`)."""
    from harness.core.confs import named_config
    from retrievers import build_retriever

    runtime = {k: overrides.pop(k) for k in RUNTIME_KEYS if k in overrides}
    cfg = named_config("retriever", config, overrides)
    return build_retriever(cfg, runtime)
