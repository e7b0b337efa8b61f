"""`python -m harness.stratify corpus=NAME [extractor=...] [--report] [--force]`: build (once) the
semantic strata of a benchmark, and with --report its coverage diagnostics (MSC, SCC, ZQC).

Takes the same configuration as `python -m harness` (corpus, extractor, strata.*, device,
cache), so a run finds the file this wrote.
"""

from __future__ import annotations

import sys
import time

import hydra
from omegaconf import DictConfig

from harness.config import check_overrides, conf_dir, register
from harness.errors import HarnessError

register()
FLAGS = {"--report": "report", "--force": "force"}
_flags: dict[str, bool] = {}


@hydra.main(version_base=None, config_path=str(conf_dir()), config_name="config")
def _app(cfg: DictConfig) -> None:
    from harness.__main__ import guarded

    guarded(run, cfg, report=_flags.get("report", False), force=_flags.get("force", False))


def run(cfg: dict, *, report: bool = False, force: bool = False) -> None:
    """Build or load the strata for cfg's corpus; print a summary, and the report if asked."""
    from harness import strata_file, strata_report
    from harness.benchmarks import load_benchmark

    started = time.perf_counter()
    bench = load_benchmark(cfg["corpus"])
    runtime = {k: cfg.get(k) for k in ("device", "cache", "cache_dir")}
    print(f"stratifying {bench.name} ({len(bench.corpus)} chunks, {len(bench.queries)} queries)")
    doc, path, status = strata_file.ensure(bench, cfg, runtime, force=force)
    print(strata_report.summary(doc))
    print(f"strata file ({status}, {time.perf_counter() - started:.1f} s): {path}")
    if report:
        md, js = strata_report.write(doc, path)
        print()
        print(strata_report.markdown(doc, max_rows=25))
        print(f"report: {md} and {js}")


def main() -> None:
    argv = sys.argv[1:]
    for flag, key in FLAGS.items():
        _flags[key] = flag in argv
    rest = [a for a in argv if a not in FLAGS]
    try:
        check_overrides(rest)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    sys.argv = [sys.argv[0], *rest]
    _app()


if __name__ == "__main__":
    main()
