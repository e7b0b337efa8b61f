"""`python -m harness.stratify corpus=NAME [extractor=...] [--report] [--force]`: build (once) the
semantic strata of a benchmark, and with --report its coverage diagnostics (MSC, SCC, ZQC).

Takes the same configuration as `python -m harness` (corpus, extractor, strata.*, device,
cache), so a run finds the file this wrote.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from harness.cli.common import verb_args
from harness.cli.hydra_app import launch
from harness.core.confs import runtime_of

log = logging.getLogger("harness")

HELP = """\
python -m harness.stratify: build the semantic strata of a benchmark once (entities, a kNN
entity graph, Leiden clusters, each query's cluster, dispersion and alignment tertiles) into
<strata.dir>/<corpus>/; every later run of that corpus reports them.

Usage: python -m harness.stratify corpus=NAME [key=value ...] [--report] [--force]

Options:
  --report (or report=true)   also write the coverage report (MSC, SCC, zero-query clusters)
                              as Markdown and JSON beside the strata file, and print it
  --force (or force=true)     rebuild even when the strata file is up to date
  corpus=NAME                 demo, general-wiki, finance, patent, legal, redqa, beir
  extractor=offline|llm       entity extractor; llm: extractor.model, extractor.base_url, ...
  strata.embedder=NAME        a dense retriever config that embeds the entities (minilm)
  strata.resolution=G         Leiden resolution γ (1.0); strata.k (50), strata.tau (0.5),
                              strata.seed (0), strata.min_queries (5), strata.scc_min (5)
  device=auto|cpu|cuda:N, cache=true|false, cache_dir=PATH, results.dir=PATH
  -h, --help                  this help

Examples:
  python -m harness.stratify corpus=general-wiki
  python -m harness.stratify corpus=general-wiki --report
  python -m harness.stratify corpus=finance extractor=llm extractor.model=gpt-4o-mini
"""


def stratify(cfg: dict[str, Any], *, report: bool = False) -> None:
    """Build or load the strata for cfg's corpus; print a summary, and the report if asked."""
    from harness.cell.plan import strata_spec
    from harness.data.relevance import load_judged
    from harness.strata import file as strata_file
    from harness.strata import report as strata_report

    started = time.perf_counter()
    bench = load_judged(cfg)
    runtime = runtime_of(cfg)
    print(f"stratifying {bench.name} ({len(bench.corpus)} chunks, {len(bench.queries)} queries)")
    force = bool(cfg.get("force", False))
    doc, path, status = strata_file.ensure(bench, cfg, runtime, force=force)
    spec = strata_spec(cfg.get("strata") or {}, cfg.get("stats") or {})
    min_entities = spec.min_cluster_entities
    print(strata_report.summary(doc, min_entities))
    print(f"strata file ({status}, {time.perf_counter() - started:.1f} s): {path}")
    if report:
        md, js = strata_report.write(doc, path, min_entities)
        print()
        print(strata_report.markdown(doc, max_rows=25, min_entities=min_entities))
        print(f"report: {md} and {js}")


def main(argv: list[str] | None = None) -> None:
    parsed = verb_args(argv, HELP, ("report",))
    if parsed is not None:
        rest, found = parsed
        report = found.get("report", False)
        launch(lambda cfg: stratify(cfg, report=report), rest, handled=["--report"])
