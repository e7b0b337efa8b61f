"""Which folder a cell lives in. A cell is (benchmark and its checksum, retriever config,
ranking depth): two runs that differ in any of these never share a folder. The folder is the
retriever's name for its shipped config, and `name[key=value,...]` for a variant, listing what
differs from the shipped config (`bm25[k1=0.5]`); a long or awkward list becomes a short hash
of the config (`bm25[cfg-1a2b3c4d]`). See docs/architecture.md#cell-identity."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from harness.core.confs import RetrievalConf

# Retriever keys that change neither the ranked list nor its meaning: they are left out of
# the identity (a rerun with another batch size or retry policy reuses the cell).
RUNTIME_KEYS = frozenset(
    {
        "display_name",
        "batch_size",
        "shard_size",
        "max_retries",
        "backoff_s",
        "timeout_s",
        "max_wait_s",
        "max_total_s",
    }
)
# never in a variant's name: the name itself, and a run file's checksum (its path names it)
_UNNAMED = RUNTIME_KEYS | {"name", "sha256"}
_MAX_LABEL = 48  # longer `[key=value,...]` lists become a hash
MANDATORY = "???"  # OmegaConf's value for a setting the user must give
_PLAIN_VALUE = re.compile(r"^[A-Za-z0-9._+-]{1,24}$")


def identity(retriever: Mapping[str, Any], depth: int) -> dict[str, Any]:
    """What a cell's ranked list depends on besides the data: the retriever config without
    its runtime keys, and the depth."""
    kept = {k: _plain(v) for k, v in retriever.items() if k not in RUNTIME_KEYS}
    if kept.get("sha256"):  # a run file's content stands for it, wherever it lies
        kept.pop("path", None)
    return {"retriever": kept, "depth": depth}


def variant(
    retriever: Mapping[str, Any], base: Mapping[str, Any] | None, depth: int
) -> dict[str, Any]:
    """The settings (dotted keys) in which `retriever` differs from its shipped config `base`,
    plus `depth` when it is not the default; the name is not a setting."""
    out: dict[str, Any] = {}
    if base is not None:
        mine, theirs = _flat(retriever), _flat(base)
        for key in [k for k, v in theirs.items() if v == {}]:  # an empty mapping filled in
            if any(m.startswith(f"{key}.") for m in mine):  # ({} -> weights.bm25=0.3)
                del theirs[key]
        for key in sorted(set(mine) | set(theirs)):
            if key.split(".")[0] in _UNNAMED or theirs.get(key) == MANDATORY:
                continue  # a mandatory setting (run_file's path, a plug-in's class) is named
            if mine.get(key, _ABSENT) != theirs.get(key, _ABSENT):
                out[key] = mine.get(key, None)
    if depth != RetrievalConf().depth:  # another depth than the default names the variant
        out["depth"] = depth
    return out


def cell_name(
    retriever: Mapping[str, Any],
    base: Mapping[str, Any] | None,
    depth: int,
    name: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """The cell's folder name and its variant settings (empty for the shipped config).
    `name`: the retriever's own name when the config leaves it to the retriever (run_file)."""
    name = str(name or retriever["name"])
    diff = variant(retriever, base, depth)
    if not diff:
        return name, diff
    parts = [f"{k}={text_of(v)}" for k, v in diff.items()]
    label = ",".join(parts)
    plain = all(_PLAIN_VALUE.match(text_of(v)) for v in diff.values())
    if not plain or len(label) > _MAX_LABEL:
        label = "cfg-" + config_hash(identity(retriever, depth))
    return f"{name}[{label}]", diff


def config_hash(value: Any) -> str:
    """Eight hex digits of the canonical JSON of `value` (sorted keys): stable across runs."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def describe_difference(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str:
    """'k1: 0.9 here, 1.2 there' for the first few settings two identities differ in."""
    a, b = _flat(ours), _flat(theirs)
    keys = [k for k in sorted(set(a) | set(b)) if a.get(k, _ABSENT) != b.get(k, _ABSENT)]
    shown = [f"{k}: {text_of(a.get(k))} here, {text_of(b.get(k))} there" for k in keys[:3]]
    more = f" (and {len(keys) - 3} more)" if len(keys) > 3 else ""
    return "; ".join(shown) + more


_ABSENT = object()


def _flat(node: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(_flat(value, dotted + "."))
        else:
            out[dotted] = _plain(value)
    return out


def _plain(value: Any) -> Any:
    """A whole float as the int it equals, in mappings and lists too: `k1=1` and `k1=1.0`
    (Hydra reads the one as int, the other as float) are one setting, one cell."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def text_of(value: Any) -> str:
    """A setting's value as names and labels write it: true/false, null, JSON for mappings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(text_of(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return json.dumps(value, sort_keys=True)
    return str(value)
