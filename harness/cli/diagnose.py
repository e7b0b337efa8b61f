"""`python -m harness.diagnose corpus=NAME [embedder=minilm]`: corpus diagnostics.

Similarity (%) is the mean cosine over all distinct pairs of chunk embeddings, computed in
O(M·d); gold redundancy (%) is the share of gold groups with more than one chunk. Both go to
results/<corpus>/diagnostics.json, which the leaderboard shows in the Table 3 header row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.cli.common import verb_args
from harness.cli.hydra_app import launch
from harness.core.confs import runtime_of

HELP = """\
python -m harness.diagnose: corpus Similarity (%) (mean cosine over all chunk pairs, in
O(M·d)) and gold redundancy (%) (gold groups holding more than one chunk), written to
<results.dir>/<corpus>/diagnostics.json (one entry per embedder).

Usage: python -m harness.diagnose corpus=NAME [embedder=NAME] [key=value ...]

Options:
  corpus=NAME          demo, general-wiki, finance, patent, legal, redqa, beir
  embedder=NAME        any dense retriever config (default: minilm)
  device=auto|cpu|cuda:N, cache=true|false, cache_dir=PATH
  results.dir=PATH     where diagnostics.json goes (default: results); results.write=false: none
  -h, --help           this help

Example:
  python -m harness.diagnose corpus=general-wiki embedder=minilm
"""


def diagnose(cfg: dict[str, Any], embedder_name: str) -> None:
    """Embed the corpus with the named embedder and print (and store) both diagnostics."""
    from harness.core.errors import ConfigError
    from harness.data.relevance import load_judged
    from harness.strata.build import make_embedder
    from harness.strata.diagnostics import diagnose as run_diagnostics

    runtime = runtime_of(cfg)
    try:
        embedder = make_embedder(embedder_name, runtime)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("strata.embedder", "embedder")) from None
    bench = load_judged(cfg)
    write = cfg["results"]["write"]
    out = run_diagnostics(
        bench, embedder, embedder_name, Path(cfg["results"]["dir"]) if write else None
    )
    sim = out["similarity"][embedder_name]
    red = out["gold_redundancy"]
    print(f"{bench.name} · {len(bench.corpus)} chunks · {len(bench.queries)} queries")
    print(
        f"similarity (%)      {100 * sim['value']:.2f}  (mean cosine over all chunk pairs, "
        f"{embedder_name}: {sim['model']}, d={sim['dim']}; O(M·d) in {out['seconds']:.3f} s)"
    )
    print(
        f"gold redundancy (%) {100 * red['value']:.2f}  ({red['n_redundant']} of "
        f"{red['n_groups']} gold groups hold more than one chunk; mean group size "
        f"{red['mean_group_size']:.2f})"
    )
    if "path" in out:
        print(f"diagnostics: {out['path']}")


def main(argv: list[str] | None = None) -> None:
    parsed = verb_args(argv, HELP, values=("embedder",))
    if parsed is not None:
        rest, found = parsed
        launch(lambda cfg: diagnose(cfg, found.get("embedder", "minilm")), rest)
