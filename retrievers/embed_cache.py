"""Content-addressed embedding cache, in shards, so an interrupted encoding resumes.

Layout: <root>/<key[:2]>/<key>/ holds `meta.json` (what the key was made of) and, per shard
of `shard_size` texts, `NNNNNN.npy` (float32, no pickle) with a `NNNNNN.json` sidecar (row
range, shape, sha256 of the .npy bytes). The key hashes the encoder's identity (model,
revision, prompt, max length, dtype, normalisation, model kwargs, encode API and task: every
setting that changes a vector) and the texts. Every file is written to
a temporary name and renamed, the sidecar last, so a shard counts only once complete. A
shard whose bytes or shape disagree with its sidecar is reported and encoded again.

Sharded encoding (`python -m harness.encode shard=i/n`, one job per slice): slice i of n is
a contiguous run of these cache shards (`slice_shards`), so jobs write disjoint files, and
any slicing fills exactly the files an unsliced run writes.

Runs that need the same shards at the same time (the cells of a sweep that share an encoder)
share the work: a run encodes a shard only while it holds that shard's claim, a POSIX record
lock on byte i of the folder's `claims` file; a shard another run holds is left for last and
then read from the cache once that run lets go. The kernel (or the NFS lock manager) drops the
locks of a run that dies, so a crash never leaves a shard claimed: no stale-claim rule.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.errors import DISK_ERRNOS, HarnessError
from harness.core.faults import checkpoint
from harness.core.paths import cache_dir
from harness.core.progress import Progress

log = logging.getLogger("harness.retrievers")

FORMAT = 1
POLL_S = 0.5  # how often a run waiting for another's shards looks again
STALL_S = 1800  # no shard from the other run for this long: its claims are taken as stale


def default_root() -> Path:
    """<cache dir>/embeddings ($HARNESS_CACHE_DIR, else the per-user cache folder)."""
    return cache_dir() / "embeddings"


def texts_digest(texts: Sequence[str]) -> str:
    """sha256 over the texts, each length-prefixed so boundaries count."""
    h = hashlib.sha256()
    for t in texts:
        b = t.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def cache_key(
    identity: Mapping[str, Any], texts: Sequence[str], shard_size: int
) -> tuple[str, dict]:
    """The key and the metadata it hashes."""
    meta = {
        "format": FORMAT,
        "identity": dict(identity),
        "n_texts": len(texts),
        "texts_sha256": texts_digest(texts),
        "shard_size": shard_size,
    }
    blob = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest(), meta


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


class EmbeddingCache:
    """Shards of one (encoder identity, texts) pair under one folder."""

    def __init__(
        self, root: Path, identity: Mapping[str, Any], texts: Sequence[str], shard_size: int
    ):
        if not isinstance(shard_size, int) or shard_size < 1:
            raise HarnessError(f"cache shard size must be a positive integer, got {shard_size!r}")
        self.key, self.meta = cache_key(identity, texts, shard_size)
        self.dir = Path(root) / self.key[:2] / self.key
        self.n = len(texts)
        self.shard_size = shard_size
        self.n_shards = max(1, -(-self.n // shard_size)) if self.n else 0
        self._claims: int | None = None  # the `claims` file's descriptor, opened on first use
        self._held: set[int] = set()  # the shards whose lock this run holds

    def _paths(self, i: int) -> tuple[Path, Path]:
        return self.dir / f"{i:06d}.npy", self.dir / f"{i:06d}.json"

    def rows(self, i: int) -> tuple[int, int]:
        """The range of texts shard i holds."""
        return i * self.shard_size, min(self.n, (i + 1) * self.shard_size)

    def load_shard(self, i: int) -> np.ndarray | None:
        """The shard's embeddings, or None if absent; a damaged shard is reported and removed."""
        npy, side = self._paths(i)
        if not side.is_file():
            return None
        problem = None
        try:
            info = json.loads(side.read_bytes())
            data = npy.read_bytes()
            start, stop = self.rows(i)
            if not isinstance(info, dict):
                problem = f"has a sidecar {side.name} that is not a JSON object"
            elif info.get("rows") != [start, stop]:
                problem = f"covers rows {info.get('rows')}, expected {[start, stop]}"
            elif hashlib.sha256(data).hexdigest() != info.get("sha256"):
                problem = "its bytes do not match the recorded sha256"
            else:
                arr = np.load(io.BytesIO(data), allow_pickle=False)
                if arr.dtype != np.float32 or arr.ndim != 2 or arr.shape[0] != stop - start:
                    problem = f"holds a {arr.dtype} array of shape {arr.shape}"
                else:
                    return arr
        except (OSError, ValueError, RecursionError) as exc:
            problem = f"cannot be read ({type(exc).__name__})"
        log.info(f"embedding cache shard {npy} {problem}; encoding it again")
        side.unlink(missing_ok=True)
        npy.unlink(missing_ok=True)
        return None

    def save_shard(self, i: int, arr: np.ndarray) -> None:
        self._writing(lambda: self._save_shard(i, arr))

    def claim(self, i: int) -> bool:
        """Take shard i's claim (a record lock on byte i of `claims`); False while another
        run holds it. Where the file system has no locks, every claim is granted (each run
        then encodes what it lacks, as without claims). Record locks belong to a process:
        two caches of one folder in one process (threads) do not exclude each other."""
        import fcntl

        if self._claims is None:

            def open_claims() -> None:
                self._claims = os.open(self.dir / "claims", os.O_RDWR | os.O_CREAT, 0o644)

            self._writing(open_claims)
        try:
            fcntl.lockf(self._claims, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, i)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EAGAIN):
                return False
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                raise
            return True  # no locks here: granted, nothing to release
        self._held.add(i)
        return True

    def release(self, i: int) -> None:
        """Let go of shard i's claim (if a lock was taken for it)."""
        import fcntl

        if i in self._held:
            self._held.discard(i)
            fcntl.lockf(self._claims, fcntl.LOCK_UN, 1, i)

    def close(self) -> None:
        if self._claims is not None:
            os.close(self._claims)  # drops every claim this run still holds
            self._claims = None
            self._held.clear()

    def prepare(self) -> None:
        """Create the cache folder before the first shard is encoded: a folder that cannot
        be made (a full disk, /proc, a file in the way) stops the run before the work."""
        self._writing(lambda: self.dir.mkdir(parents=True, exist_ok=True))

    def _writing(self, write) -> None:
        try:
            write()
        except OSError as exc:
            full = exc.errno in DISK_ERRNOS
            raise HarnessError(
                f"cannot write the embedding cache {self.dir}: {exc.strerror}; "
                + ("shards already written are kept and reused; free space there, " if full else "")
                + "set cache_dir to another folder, or cache=false"
            ) from None

    def _save_shard(self, i: int, arr: np.ndarray) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        meta = self.dir / "meta.json"
        if not meta.is_file():
            _write_atomic(meta, json.dumps(self.meta, indent=2, sort_keys=True).encode())
        npy, side = self._paths(i)
        data = _npy_bytes(np.ascontiguousarray(arr, dtype=np.float32))
        _write_atomic(npy, data)
        info = {
            "rows": list(self.rows(i)),
            "shape": list(arr.shape),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        _write_atomic(side, json.dumps(info).encode())


def encode_cached(
    encode: Callable[[Sequence[str]], np.ndarray],
    texts: Sequence[str],
    *,
    identity: Mapping[str, Any],
    root: Path | None,
    shard_size: int,
    label: str,
    progress: bool = True,
) -> tuple[np.ndarray, dict[str, int]]:
    """Embeddings of `texts`, reusing cached shards and caching new ones (root None: no cache).

    Returns the (n, dim) float32 matrix and counts of shards reused and encoded."""
    if root is None:
        # the same shard-sized calls as with the cache: batching changes the last bits of the
        # embeddings, and cache on or off must give the same numbers
        parts = []
        with Progress(len(texts), label, "text", enabled=progress) as bar:
            for s in range(0, len(texts), shard_size):
                parts.append(encode(texts[s : s + shard_size]))
                bar.update(len(parts[-1]))
        emb = np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)
        return emb, {"cached": 0, "encoded": len(parts)}
    cache = EmbeddingCache(root, identity, texts, shard_size)
    parts, stats = _fill(cache, encode, texts, range(cache.n_shards), label, progress)
    emb = np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)
    return emb, stats


def slice_shards(n_shards: int, part: int, parts: int) -> range:
    """The cache shards slice `part` of `parts` covers: contiguous, in order, sizes differing
    by at most one, together every shard exactly once (a slice may be empty)."""
    if not (isinstance(part, int) and isinstance(parts, int) and 0 <= part < parts):
        raise HarnessError(f"slice {part!r} of {parts!r}: need 0 <= slice < slices")
    return range(part * n_shards // parts, (part + 1) * n_shards // parts)


def fill_cache(
    encode: Callable[[Sequence[str]], np.ndarray],
    texts: Sequence[str],
    *,
    identity: Mapping[str, Any],
    root: Path,
    shard_size: int,
    label: str,
    part: tuple[int, int] = (0, 1),
    progress: bool = True,
) -> dict[str, Any]:
    """Encode into the cache the shards of slice `part` = (i, n) (slice_shards) that it
    lacks, as encode_cached would (the same calls on the same rows, so the same files): any
    slicing writes exactly the files one unsliced run writes. Returns counts of shards
    reused and encoded, the shards and rows covered, the cache folder and its shard count."""
    cache = EmbeddingCache(root, identity, texts, shard_size)
    shards = slice_shards(cache.n_shards, *part)
    _, stats = _fill(cache, encode, texts, shards, label, progress)
    rows = (cache.rows(shards.start)[0], cache.rows(shards.stop - 1)[1]) if shards else (0, 0)
    return {**stats, "shards": shards, "rows": rows, "n_shards": cache.n_shards,
            "dir": str(cache.dir)}  # fmt: skip


def _fill(
    cache: EmbeddingCache,
    encode: Callable[[Sequence[str]], np.ndarray],
    texts: Sequence[str],
    shards: range,
    label: str,
    progress: bool,
) -> tuple[list[np.ndarray], dict[str, int]]:
    """The embeddings of cache shards `shards`, loaded or encoded and saved. A shard another
    run is encoding (its claim held) is left for last, then read once that run lets go."""
    parts: list[np.ndarray | None] = [cache.load_shard(i) for i in shards]
    todo = [i for i, p in zip(shards, parts) if p is None]
    dims = {p.shape[1] for p in parts if p is not None}
    if len(dims) > 1:
        raise HarnessError(
            f"embedding cache {cache.dir} mixes dimensions {sorted(dims)}; delete that folder "
            f"or run with cache=false"
        )
    if todo and len(todo) < len(shards):
        log.info(
            f"{label}: resuming, {len(shards) - len(todo)} of {len(shards)} shards "
            f"already in {cache.dir}"
        )
    remaining = sum(cache.rows(i)[1] - cache.rows(i)[0] for i in todo)
    if todo:
        cache.prepare()
    encoded = 0
    held: list[int] = []  # shards another run was encoding when their turn came

    def one(i: int, bar: Progress) -> None:
        nonlocal encoded
        try:
            arr = cache.load_shard(i)  # another run may have saved it meanwhile
            if arr is None:
                start, stop = cache.rows(i)
                arr = encode(texts[start:stop])
                if dims and arr.shape[1] not in dims:
                    raise HarnessError(
                        f"{label}: fresh embeddings have dimension {arr.shape[1]} but the "
                        f"cached ones in {cache.dir} have {dims.pop()}: the model changed under "
                        f"the same id and revision; delete that folder or run with cache=false"
                    )
                cache.save_shard(i, arr)
                encoded += 1
                checkpoint("encode")  # reliability tests: a kill here must cost only this run
        finally:
            cache.release(i)
        dims.add(arr.shape[1])
        parts[i - shards.start] = arr
        bar.update(arr.shape[0])

    try:
        with Progress(remaining, label, "text", enabled=progress and bool(todo)) as bar:
            for i in todo:
                if cache.claim(i):
                    one(i, bar)
                else:
                    held.append(i)
            if held:
                log.info(
                    f"{label}: waiting for {len(held)} shard{'s' * (len(held) > 1)} another run "
                    f"is encoding into {cache.dir}"
                )
            moved = time.monotonic()
            while held:  # nothing else left to do: each as soon as its claim is let go
                for i in [i for i in held if cache.claim(i)]:
                    one(i, bar)
                    held.remove(i)
                    moved = time.monotonic()
                if held and time.monotonic() - moved > STALL_S:
                    # a claim no run lets go (its node died on an NFS without lock recovery)
                    log.info(
                        f"{label}: no shard came from the other run in {STALL_S // 60} min; "
                        f"encoding the {len(held)} it holds here"
                    )
                    for i in held:
                        one(i, bar)
                    break
                if held:
                    time.sleep(POLL_S)
    finally:
        cache.close()
    return parts, {"cached": len(shards) - encoded, "encoded": encoded}
