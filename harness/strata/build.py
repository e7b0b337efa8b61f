"""Build a benchmark's semantic strata (docs/stratification.md#how-the-semantic-strata-are-
built): entities -> entity graph -> Leiden clusters -> each query's primary cluster, Δ, J and
their tertiles, as one JSON document.

The document depends only on the benchmark and the strata parameters, never on a retriever,
and is byte-identical when rebuilt from the same inputs (no dates, sorted entity order).
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from harness.core import provenance
from harness.core.errors import POSITIVE, ConfigError, HarnessError, unknown_name
from harness.core.progress import Progress
from harness.core.types import Benchmark
from harness.strata.entities import Mention, OfflineExtractor
from harness.strata.semantic import (
    NA,
    Tertiles,
    alignment,
    corpus_coverage,
    dispersion,
    primary_cluster,
)

log = logging.getLogger("harness.strata")

SCHEMA = "retrieval-harness/strata/1"
LABEL_NAMES = 3  # entity names in a cluster's label
EXTRA_VERSIONS = ("leidenalg", "igraph", "faiss-cpu", "sentence-transformers", "torch")


def make_extractor(cfg: Mapping[str, Any], runtime: Mapping[str, Any]):
    """The extractor an `extractor` config describes (offline keyphrases or an LLM)."""
    params = dict(cfg)
    method = params.get("method")
    if method == "keyphrase":
        return OfflineExtractor(**params)
    if method == "llm":
        from harness.strata.llm_extract import LLMExtractor

        return LLMExtractor(**params, cache=bool(runtime.get("cache", True)))
    raise unknown_name("extractor.method", str(method), ("keyphrase", "llm"), "pick extractor=...")


def make_embedder(name: str, runtime: Mapping[str, Any]):
    """A dense retriever config (conf/retriever/NAME.yaml) used as the entity embedder."""
    from omegaconf import OmegaConf

    from harness.core.paths import conf_dir, group_options

    path = conf_dir() / "retriever" / f"{name}.yaml"
    if not path.is_file():
        raise unknown_name("strata.embedder", name, group_options("retriever"))
    params = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    params.pop("display_name", None)  # a label for tables, not an encoder argument
    if params.pop("type", None) != "dense":
        raise ConfigError(
            f"strata.embedder '{name}' is not a dense retriever config; pick a sentence "
            f"embedder such as minilm"
        )
    from retrievers.dense import Dense

    try:
        return Dense(**params, **runtime)
    except TypeError as exc:
        raise ConfigError(f"strata.embedder '{name}': {exc}") from None


# relevance settings that decide no passage's grade: they leave the strata as they are
NOT_GOLD = frozenset({"distractors"})


def relevance_param(cfg: Mapping[str, Any], bench: Benchmark) -> dict[str, Any]:
    """The `relevance` settings, where they shape the gold the strata read (a benchmark with
    labels or dates, which harness.data.relevance judged): {"relevance": ...}; else {}."""
    if "relevance" not in bench.metadata:
        return {}
    from harness.data.relevance import RelevanceSpec

    conf = RelevanceSpec.from_config(cfg.get("relevance")).as_config()
    return {"relevance": {k: v for k, v in conf.items() if k not in NOT_GOLD}}


def strata_params(cfg: Mapping[str, Any], extractor, embedder) -> dict[str, Any]:
    """Everything the strata depend on; a file whose params differ is rebuilt or refused."""
    s = cfg["strata"]
    for key in ("k", "min_queries", "scc_min"):
        if isinstance(s[key], bool) or not isinstance(s[key], int) or s[key] < 1:
            raise ConfigError(f"strata.{key} must be {POSITIVE}, got {s[key]!r}")
    if not isinstance(s["tau"], (int, float)) or not -1 <= s["tau"] <= 1:
        raise ConfigError(f"strata.tau must be a cosine in [-1, 1], got {s['tau']!r}")
    if (
        not isinstance(s["resolution"], (int, float))
        or not math.isfinite(s["resolution"])
        or s["resolution"] <= 0
    ):
        raise ConfigError(f"strata.resolution must be a finite number > 0, got {s['resolution']!r}")
    seed = s["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ConfigError(f"strata.seed must be an integer in [0, 2^32), got {seed!r}")
    return base_params(cfg, extractor, embedder.encoder.identity("document"))


def base_params(cfg: Mapping[str, Any], extractor, embedder_identity: dict) -> dict[str, Any]:
    """What strata depend on, in the strata file's order: the extractor's and embedder's
    identities, k, τ, γ, seed and the SCC threshold."""
    s = cfg["strata"]
    return {
        "extractor": {"name": cfg["extractor"]["name"], **extractor.identity()},
        "embedder": {"name": s["embedder"], **embedder_identity},
        "k": s["k"],
        "tau": float(s["tau"]),
        "resolution": float(s["resolution"]),
        "seed": int(s["seed"]),
        "scc_min": s["scc_min"],
    }


def _extract(extractor, labelled: Sequence[tuple[str, str]], *, corpus_text: bool, label: str):
    with Progress(len(labelled), label, "text") as bar:
        if hasattr(extractor, "extract_many"):
            return extractor.extract_many(labelled, on_done=bar.update)
        out = []
        for _, text in labelled:
            out.append(extractor.extract(text, corpus_text=corpus_text))
            bar.update()
        return out


def build(bench: Benchmark, cfg: Mapping[str, Any], runtime: Mapping[str, Any]) -> dict[str, Any]:
    """The strata document of `bench` under the config's extractor, embedder and strata keys."""
    from harness.strata.clusters import knn_graph, leiden

    timings: dict[str, float] = {}
    extractor = make_extractor(cfg["extractor"], runtime)
    embedder = make_embedder(cfg["strata"]["embedder"], {**runtime, "progress": True})
    params = {**strata_params(cfg, extractor, embedder), **relevance_param(cfg, bench)}

    t = time.perf_counter()
    chunk_ids = list(bench.corpus)
    texts = [bench.corpus[c].index_text for c in chunk_ids]
    extractor.fit(texts)
    chunk_mentions = _extract(
        extractor,
        [(f"chunk '{c}'", x) for c, x in zip(chunk_ids, texts)],
        corpus_text=True,
        label=f"{bench.name}: entities of the chunks",
    )
    query_mentions = _extract(
        extractor,
        [(f"query '{q.query_id}'", q.text) for q in bench.queries],
        corpus_text=False,
        label=f"{bench.name}: entities of the queries",
    )
    timings["extract_s"] = time.perf_counter() - t
    if hasattr(extractor, "summary"):
        log.info(f"{extractor.summary()}")

    # de-duplicate across the corpus: one entity per normalised name, sorted by it; the
    # first mention in corpus order names and describes it
    first: dict[str, Mention] = {}
    for mentions in chunk_mentions:
        for m in mentions:
            first.setdefault(m.key, m)
    keys = sorted(first)
    if not keys:
        raise HarnessError(
            f"the extractor found no entity in the {len(chunk_ids)} chunks of '{bench.name}'; "
            f"check the corpus text or pick another extractor"
        )
    index = {k: i for i, k in enumerate(keys)}
    chunk_entities = [sorted({index[m.key] for m in ms}) for ms in chunk_mentions]
    df = Counter(e for ents in chunk_entities for e in ents)

    t = time.perf_counter()
    entity_texts = [_entity_text(first[k]) for k in keys]
    emb = embedder.embed(entity_texts, "document", f"{bench.name}: {len(keys)} entities")
    timings["embed_s"] = time.perf_counter() - t

    t = time.perf_counter()
    graph = knn_graph(emb, k=params["k"], tau=params["tau"])
    cluster = leiden(graph, resolution=params["resolution"], seed=params["seed"])
    n_clusters = int(cluster.max()) + 1
    timings["cluster_s"] = time.perf_counter() - t

    t = time.perf_counter()
    queries = _query_strata(
        bench, query_mentions, chunk_entities, index, cluster, emb, embedder, params
    )
    timings["queries_s"] = time.perf_counter() - t

    chunk_clusters = {
        cid: sorted({int(cluster[e]) for e in ents}) for cid, ents in zip(chunk_ids, chunk_entities)
    }
    coverage = corpus_coverage(
        chunk_clusters,
        [q["clusters"] for q in queries.values()],
        n_clusters,
        scc_min=params["scc_min"],
    )
    primary = Counter(q["primary"] for q in queries.values() if q["primary"] is not None)
    members: dict[int, list[int]] = {c: [] for c in range(n_clusters)}
    for e, c in enumerate(cluster):
        members[int(c)].append(e)
    clusters = [
        {
            "id": c,
            "label": _label(members[c], df, keys, first),
            "n_entities": len(members[c]),
            "n_chunks": coverage.chunks_per_cluster[c],
            "n_queries": coverage.queries_per_cluster[c],
            "n_primary": primary.get(c, 0),
        }
        for c in range(n_clusters)
    ]
    tertiles = {}
    for signal in ("dispersion", "alignment"):
        cut = Tertiles.fit([np.nan if q[signal] is None else q[signal] for q in queries.values()])
        tertiles[signal] = None if cut is None else [cut.low_max, cut.mid_max]
        for q in queries.values():
            value = np.nan if q[signal] is None else q[signal]
            q[f"{signal}_stratum"] = NA if cut is None else cut.label(value)
    doc = {
        "schema": SCHEMA,
        "corpus": bench.name,
        "checksum": bench.checksum,
        "params": params,
        "summary": {
            "n_chunks": len(chunk_ids),
            "n_chunks_without_entities": sum(1 for e in chunk_entities if not e),
            "n_queries": len(bench.queries),
            "n_mentions": sum(len(e) for e in chunk_entities),
            "n_entities": len(keys),
            "n_edges": int(len(graph.edges)),
            "n_clusters": n_clusters,
            "msc": coverage.msc,
            "scc": coverage.scc,
            "zqc": len(coverage.zero_query),
            "zero_query_chunks": sum(coverage.zero_query.values()),
        },
        "tertiles": tertiles,
        "clusters": clusters,
        "entities": [[k, first[k].name, int(cluster[i])] for i, k in enumerate(keys)],
        "chunks": {cid: ents for cid, ents in zip(chunk_ids, chunk_entities)},
        "queries": queries,
        "versions": provenance.versions(EXTRA_VERSIONS),
    }
    for key, value in timings.items():
        log.info(f"  {key[:-2]:>8}: {value:6.1f} s")
    return doc


def _entity_text(m: Mention) -> str:
    """What is embedded for an entity (name + ": " + description)."""
    return f"{m.name}: {m.description}" if m.description else m.name


def _label(members: list[int], df: Counter, keys: list[str], first: Mapping[str, Mention]) -> str:
    """The cluster's most frequent entity names (by chunks mentioning them; ties by name)."""
    top = sorted(members, key=lambda e: (-df[e], keys[e]))[:LABEL_NAMES]
    return " · ".join(first[keys[e]].name for e in top)


def _query_strata(
    bench, query_mentions, chunk_entities, index, cluster, emb, embedder, params
) -> dict[str, Any]:
    """Per query: its entities mapped to clusters (exact name first, else the nearest corpus
    entity with cosine >= tau), C(q), primary cluster, Δ and J."""
    chunk_pos = {cid: i for i, cid in enumerate(bench.corpus)}
    lookups = [
        (qi, mi, m)
        for qi, ms in enumerate(query_mentions)
        for mi, m in enumerate(ms)
        if m.key not in index
    ]
    nearest: dict[tuple[int, int], tuple[int, float]] = {}
    if lookups:
        q_emb = embedder.embed(
            [_entity_text(m) for _, _, m in lookups], "document", f"{bench.name}: query entities"
        )
        import faiss

        search = faiss.IndexFlatIP(emb.shape[1])
        search.add(_normalised(emb))
        sims, best = search.search(_normalised(q_emb), 1)
        for row, (qi, mi, _) in enumerate(lookups):
            nearest[(qi, mi)] = (int(best[row, 0]), float(sims[row, 0]))
    out: dict[str, Any] = {}
    for qi, (q, ms) in enumerate(zip(bench.queries, query_mentions)):
        ents, q_clusters = [], set()
        for mi, m in enumerate(ms):
            if m.key in index:
                e, sim, how = index[m.key], 1.0, "name"
            else:
                e, sim = nearest[(qi, mi)]
                how = "nearest"
            mapped = sim >= params["tau"]
            c = int(cluster[e]) if mapped else None
            if c is not None:
                q_clusters.add(c)
            ents.append(
                {"name": m.name, "entity": e if mapped else None, "how": how, "cosine": sim}
                | {"cluster": c}
            )
        gold = sorted({chunk_pos[d] for g in q.groups for d in g if d in chunk_pos})
        mentions = [int(cluster[e]) for d in gold for e in chunk_entities[d]]
        out[q.query_id] = {
            "entities": ents,
            "clusters": sorted(q_clusters),
            "gold_clusters": sorted(set(mentions)),
            "primary": primary_cluster(mentions),
            "dispersion": _none_if_nan(dispersion(mentions)),
            "alignment": _none_if_nan(alignment(q_clusters, set(mentions))),
        }
    return out


def _normalised(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1, norms)


def _none_if_nan(x: float) -> float | None:
    return None if x != x else x
