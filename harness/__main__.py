"""`python -m harness retriever=... corpus=...`: score a retriever on a benchmark (Hydra CLI)."""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from harness.config import check_overrides, conf_dir, register
from harness.errors import HarnessError

register()


@hydra.main(version_base=None, config_path=str(conf_dir()), config_name="config")
def _app(cfg: DictConfig) -> None:
    from harness.report import table
    from harness.run import run_cell
    from harness.semantic_report import render

    result = guarded(run_cell, cfg)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"\n{result.corpus} · {result.retriever} · {result.n_queries} queries")
    print(table(result.aggregated, result.metric_names, skip=("cluster",)))
    print(render(result.aggregated, result.variance, result.semantic, result.metric_names))
    if result.strata_hint:
        print(f"\n({result.strata_hint})")
    if result.cell_dir is not None:
        print(f"results: {result.cell_dir}")


def guarded(fn, cfg: DictConfig, *args, **kwargs):
    """fn(resolved cfg, ...), with bad input (a HarnessError, or OmegaConf's errors such as a
    missing mandatory value) turned into one `error:` line and exit status 2."""
    try:
        resolved = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
        return fn(resolved, *args, **kwargs)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except Exception as exc:  # MissingMandatoryValue and friends from OmegaConf
        if type(exc).__module__.startswith("omegaconf"):
            print(f"error: {_omegaconf_message(exc)}", file=sys.stderr)
            sys.exit(2)
        raise


def _omegaconf_message(exc: Exception) -> str:
    first = str(exc).splitlines()[0]
    key = getattr(exc, "full_key", None)
    if "Missing mandatory value" in first and key:
        return f"{key} is required; set it on the command line, e.g. {key}=/path/to/data"
    return first


def main() -> None:
    """Console entry: check group choices (did-you-mean), then hand over to Hydra."""
    try:
        check_overrides(sys.argv[1:])
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    _app()


if __name__ == "__main__":
    main()
