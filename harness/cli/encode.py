"""`python -m harness.encode retriever=NAME corpus=NAME [shard=i/n]`: fill the embedding cache
of a dense retriever (or a hybrid's dense parts) for a corpus, all of it or one slice, so that
the cell (`python -m harness retriever=NAME corpus=NAME`) then runs from the cache. One job per
slice on a cluster: `-m shard=range(16) shards=16 hydra/launcher=submitit_slurm`.

Slice i of n is a contiguous run of the cache's shards (retrievers.embed_cache.slice_shards),
so the jobs write disjoint files and together exactly the files one unsliced run writes. The
queries are few: slice 0 encodes them (an unsliced run too).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.cli.common import guarded, verb_args
from harness.cli.hydra_app import launch
from harness.core.errors import ConfigError

HELP = """\
python -m harness.encode: encode a corpus (and its queries) into the embedding cache of a dense
retriever, all of it or one slice; the cell then runs from the cache and encodes nothing.

Usage: python -m harness.encode retriever=NAME corpus=NAME [shard=i/n] [key=value ...]

Options:
  shard=i/n            encode slice i of n (0 <= i < n) of the corpus's cache shards; the
                       default is the whole corpus. Slice 0 also encodes the queries.
  shard=i shards=n     the same, as two integers (for sweeps: shard=range(n) shards=n)
  retriever=NAME       a dense retriever config (minilm, qwen3-8b, ...) or a hybrid (its
                       dense parts are encoded)
  corpus=NAME          demo, general-wiki, finance, patent, legal, redqa, beir, hf
  retriever.shard_size=N   texts per cache shard (1024): the unit a slice is made of
  device=auto|cpu|cuda:N, cache_dir=PATH, retriever.batch_size=N
  -h, --help           this help

Examples:
  python -m harness.encode retriever=minilm corpus=general-wiki
  python -m harness.encode retriever=qwen3-8b corpus=general-wiki shard=3/16
  python -m harness.encode -m retriever=qwen3-8b corpus=general-wiki 'shard=range(16)' \\
      shards=16 hydra/launcher=submitit_slurm hydra.launcher.partition=gpu
  python -m harness retriever=qwen3-8b corpus=general-wiki      (then: the cell, from the cache)
"""

OWN_KEYS = ("shard", "shards")  # this command's keys, added to the run config
_SLASHED = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(shard: Any, shards: Any = None) -> tuple[int, int]:
    """(i, n) from shard=i/n, or shard=i with shards=n; (0, 1) (everything) when unset."""
    shown = f"shard={shard}" + ("" if shards is None else f" shards={shards}")
    if shard is None:
        if shards is not None:
            raise ConfigError(f"{shown}: name the slice too, shard=i with 0 <= i < {shards}")
        return 0, 1
    if isinstance(shard, str) and _SLASHED.match(shard):
        i, n = (int(x) for x in _SLASHED.match(shard).groups())
        if shards is not None and shards != n:
            raise ConfigError(f"{shown}: the slice count differs; give shard=i/n alone")
    elif isinstance(shard, int) and not isinstance(shard, bool):
        if shards is None:
            raise ConfigError(f"{shown}: say how many slices, shard={shard}/N or shards=N")
        if isinstance(shards, bool) or not isinstance(shards, int):
            raise ConfigError(f"{shown}: shards must be a whole number of slices, e.g. 16")
        i, n = shard, shards
    else:
        raise ConfigError(f"{shown}: write the slice as shard=i/n, e.g. shard=3/16 (slice 3 of 16)")
    if n < 1 or not 0 <= i < n:
        raise ConfigError(
            f"{shown}: slice {i} of {n} does not exist; slices count from 0: shard=0/{max(n, 1)}"
            f" .. shard={max(n, 1) - 1}/{max(n, 1)}"
        )
    return i, n


@dataclass
class Encoded:
    """What one encode job did (the sweep records `skipped` as 'up to date')."""

    lines: list[str] = field(default_factory=list)
    encoded: int = 0
    cached: int = 0

    @property
    def skipped(self) -> bool:
        return self.encoded == 0


def encode(cfg: dict[str, Any]) -> Encoded:
    """Encode the slice cfg's `shard` names of cfg's corpus (and, in slice 0, its queries)
    into the embedding cache of cfg's retriever; print and return what was written."""
    from harness.cell.plan import CellPlan
    from harness.data.relevance import load_judged
    from retrievers import build_retriever

    part = parse_shard(cfg.get("shard"), cfg.get("shards"))
    config = {k: v for k, v in cfg.items() if k not in OWN_KEYS}
    plan = CellPlan.from_config(config)
    if not plan.runtime["cache"]:
        raise ConfigError(
            "harness.encode fills the embedding cache, and cache=false turns it off; drop "
            "cache=false"
        )
    retriever = build_retriever(plan.retriever, plan.runtime)
    dense = dense_parts(retriever)
    bench = load_judged(config)
    slice_ = "all" if part == (0, 1) else f"slice {part[0]}/{part[1]}"
    out = Encoded([f"encode {retriever.name} · {bench.name} · {slice_}"])
    for enc in dense:
        texts = enc.corpus_texts(bench.corpus)
        stats = enc.fill(texts, "document", f"{enc.name}: corpus", part)
        out.lines.append(_line(enc.name, "corpus", len(texts), stats))
        out.encoded += stats["encoded"]
        out.cached += stats["cached"]
        if part[0] == 0:
            texts = enc.query_texts(bench.queries)
            stats = enc.fill(texts, "query", f"{enc.name}: queries")
            out.lines.append(_line(enc.name, "queries", len(texts), stats))
            out.encoded += stats["encoded"]
            out.cached += stats["cached"]
        else:
            out.lines.append(f"{enc.name} queries: left to slice 0")
    out.lines.append(
        f"{out.encoded} shard(s) encoded, {out.cached} already cached; the cell now reads them: "
        f"python -m harness retriever={retriever.name} corpus={bench.name}"
    )
    print("\n".join(out.lines))
    return out


def dense_parts(retriever) -> list:
    """The dense retrievers whose caches a run of `retriever` reads: itself, or a hybrid's
    dense parts."""
    from retrievers.dense import Dense

    if isinstance(retriever, Dense):
        return [retriever]
    parts = [p for p in getattr(retriever, "parts", {}).values() if isinstance(p, Dense)]
    if not parts:
        raise ConfigError(
            f"retriever '{retriever.name}' encodes no text, so there is no embedding cache to "
            f"fill; harness.encode takes a dense retriever (retriever=minilm, qwen3-8b, ...) or "
            f"a hybrid with dense parts"
        )
    return parts


def _line(name: str, what: str, n_texts: int, stats: dict[str, Any]) -> str:
    shards, total = stats["shards"], stats["n_shards"]
    if not shards:
        return f"{name} {what}: this slice holds none of the {total} cache shards; nothing to do"
    first, last = shards.start, shards.stop - 1
    span = f"shard {first}" if first == last else f"shards {first}-{last}"
    rows = f"texts {stats['rows'][0]}-{stats['rows'][1] - 1} of {n_texts}"
    return (
        f"{name} {what}: cache {span} of {total} ({rows}): {stats['encoded']} encoded, "
        f"{stats['cached']} already cached, in {stats['dir']}"
    )


def own_keys(argv: Sequence[str]) -> list[str]:
    """`shard=` and `shards=` become `+shard=` / `+shards=`: keys of this command only, added
    to the run config (so `python -m harness shard=...` is still refused as unknown)."""
    return [f"+{a}" if a.split("=", 1)[0] in OWN_KEYS and "=" in a else a for a in argv]


def check_shards(argv: Sequence[str]) -> None:
    """Every shard value of the command line (each value of a sweep) before anything starts."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    values: dict[str, list[Any]] = {"shard": [None], "shards": [None]}
    args = [a for a in argv if a.lstrip("+").split("=", 1)[0] in OWN_KEYS]
    try:
        parsed = OverridesParser.create().parse_overrides(args)
    except Exception:  # a grammar error: the override check reports it
        return
    for o in parsed:
        items = o.sweep_iterator() if o.is_sweep_override() else [o.value()]
        values[o.key_or_group] = list(items)
    for shard in values["shard"]:
        for shards in values["shards"]:
            parse_shard(shard, shards)


def main(argv: list[str] | None = None) -> None:
    parsed = verb_args(argv, HELP)
    if parsed is not None:
        args = own_keys(parsed[0])
        guarded(check_shards, args)
        launch(encode, args, keys=OWN_KEYS)
