"""A process that fills an embedding cache with a recording encoder, for the tests of runs
that share a cache (tests/unit/retrievers/test_embed_claims.py).

    python -m tests.helpers.claim_worker ROOT LOG TAG MODE

Each encoded shard is logged as a file LOG/<first text>.<TAG>. MODE `barrier`: the first
encode waits until LOG holds a `started.*` file of another worker (so two workers surely
overlap); `hang`: the first encode writes LOG/encoding.<TAG> and never returns. The
embeddings and stats land in LOG/out.<TAG>.npy and LOG/stats.<TAG>.json."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from retrievers.embed_cache import encode_cached

TEXTS = [f"text {i:02d}" for i in range(24)]
SHARD = 4
IDENTITY = {"model": "claims-test", "revision": None}
PATIENCE_S = 300  # a barrier never met fails the worker instead of hanging the test


def main(root: str, log: str, tag: str, mode: str) -> None:
    logdir = Path(log)
    first = True

    def encode(texts):
        nonlocal first
        if first and mode == "barrier":
            (logdir / f"started.{tag}").touch()
            waited = time.monotonic()
            while not [p for p in logdir.glob("started.*") if p.suffix != f".{tag}"]:
                if time.monotonic() - waited > PATIENCE_S:
                    raise SystemExit("no other worker started")
                time.sleep(0.01)
        if first and mode == "hang":
            (logdir / f"encoding.{tag}").touch()
            time.sleep(3600)
        first = False
        (logdir / f"{texts[0]}.{tag}").touch()
        return np.array([[len(t), int(t.split()[1]), 1.0] for t in texts], np.float32)

    emb, stats = encode_cached(encode, TEXTS, identity=IDENTITY, root=Path(root),
                               shard_size=SHARD, label=tag, progress=False)  # fmt: skip
    np.save(logdir / f"out.{tag}.npy", emb)
    (logdir / f"stats.{tag}.json").write_text(json.dumps(stats))


if __name__ == "__main__":
    main(*sys.argv[1:])
