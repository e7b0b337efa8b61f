"""Benchmarks from the Hugging Face Hub, or from a local folder in the Hub layout.

A Hub dataset is read through the Hub cache: `huggingface_hub.snapshot_download` fetches the
README (its `configs:` header says which files hold which config and split), then only the
files of the configs the layout needs; `datasets` streams their rows (parquet, JSON lines,
CSV/TSV) straight from the cache, so nothing is copied a second time. Offline
(HF_HUB_OFFLINE=1, HF_DATASETS_OFFLINE=1, or the Hub unreachable) only the cache is read, and
a revision it lacks is one error line with the command that fetches it.

Three layouts say which columns mean what (docs/protocols.md#hugging-face-hub):
`beir` (configs corpus, queries and qrels, the qrels in the same repo or in `<repo>-qrels`),
`redqa` (queries with gold_chunk_groups, a corpus config) and `garage` (one row per
question, its passages and their labels inline). Every row becomes the record the RedQA JSON
and BEIR loaders read, so validation and errors are theirs.

The revision is the data's identity: a Hub benchmark's checksum is `hf:<repo>@<commit>` (and
its qrels repo's, when separate); a local folder's is the SHA-256 of the files read."""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.errors import BenchmarkError, ConfigError, did_you_mean
from harness.core.types import Benchmark, Chunk, Query
from harness.data import records as readers
from harness.data.beir import judged_benchmark

log = logging.getLogger("harness.data")

LAYOUTS = ("beir", "redqa", "garage")
FETCH = "hf download {repo} --repo-type dataset --revision {revision}"
_COMMIT = re.compile(r"[0-9a-f]{40}")
_DATA_SUFFIXES = (".parquet", ".jsonl", ".json", ".csv", ".tsv")
_COMPRESSED = ("", ".gz", ".bz2", ".xz", ".zst")
# Read when a repo's README declares no configs (e.g. BeIR's qrels repos: train.tsv, test.tsv).
_DATA_PATTERNS = [f"*{s}{c}" for s in _DATA_SUFFIXES for c in _COMPRESSED]

# role -> the column (garage: the passage key) each layout reads it from; None: not read.
_ROLES: dict[str, dict[str, str | None]] = {
    # queries
    "query_id": {"beir": "_id", "redqa": "query_id", "garage": "query_id"},
    "question": {"beir": "text", "redqa": "question", "garage": "question"},
    "gold_chunk_groups": {"beir": None, "redqa": "gold_chunk_groups", "garage": None},
    "group_present": {"beir": None, "redqa": "group_present", "garage": None},
    "answerable": {"beir": "answerable", "redqa": "answerable", "garage": "answerable"},
    "answer": {"beir": "answer", "redqa": "answer", "garage": "answer"},
    "answers": {"beir": "answers", "redqa": "answers", "garage": "answers"},
    "labels": {"beir": None, "redqa": "labels", "garage": None},
    "date": {"beir": "date", "redqa": "date", "garage": "date"},
    "metadata": {"beir": "metadata", "redqa": "metadata", "garage": "metadata"},
    "passages": {"beir": None, "redqa": None, "garage": "passages"},
    # corpus rows (garage: keys of each passage)
    "chunk_id": {"beir": "_id", "redqa": "chunk_id", "garage": "id"},
    "content": {"beir": "text", "redqa": "content", "garage": "text"},
    "title": {"beir": "title", "redqa": "title", "garage": "title"},
    "chunk_date": {"beir": "date", "redqa": "date", "garage": "date"},
    "label": {"beir": None, "redqa": None, "garage": "label"},
    # qrels rows
    "qrels_query_id": {"beir": "query-id", "redqa": None, "garage": None},
    "qrels_chunk_id": {"beir": "corpus-id", "redqa": None, "garage": None},
    "score": {"beir": "score", "redqa": None, "garage": None},
}
_REQUIRED = frozenset(
    ["query_id", "question", "gold_chunk_groups", "passages", "content"]
    + ["chunk_id", "qrels_query_id", "qrels_chunk_id", "score"]
)
# Query columns read as fields (strata.fields) when corpus.fields is null.
_DEFAULT_FIELDS = {
    "beir": (),
    "redqa": (),
    "garage": ("dynamism", "complexity", "popularity", "source", "category"),
}
# Config names looked for, in order, when corpus.configs.<role> is null; a garage repo's
# questions and a qrels repo's judgments are else its only config.
_CONFIGS = {
    "corpus": ("corpus",),
    "queries": ("queries",),
    "qrels": ("default", "qrels"),
}
_GARAGE_CONFIGS = ("default", "queries")


def load_hub(cfg: Mapping[str, Any]) -> Benchmark:
    """The benchmark a `corpus=hf` config describes. harness.data.records builds every query
    and chunk, as for RedQA JSON and BEIR, so errors read the same."""
    layout = cfg.get("layout") or "beir"
    if layout not in LAYOUTS:
        raise ConfigError(
            f"corpus.layout is '{layout}'{did_you_mean(str(layout), LAYOUTS)}; "
            f"valid: {', '.join(LAYOUTS)}"
        )
    spec = _Spec.from_config(cfg, layout)
    main = _open(spec.dataset, cfg.get("revision"), "corpus.revision")
    split = str(cfg.get("split") or "test")
    if layout == "beir":
        return _load_beir(spec, main, split, cfg)
    return _load_rows(spec, main, split, cfg)


# ---------------------------------------------------------------- settings


@dataclass(frozen=True)
class _Spec:
    """The checked settings: which columns and configs hold what."""

    dataset: str
    layout: str
    columns: Mapping[str, str | None]  # role -> column as set (None: the layout's default)
    configs: Mapping[str, str | None]
    fields: tuple[str, ...] | None

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], layout: str) -> _Spec:
        dataset = cfg.get("dataset")
        if not isinstance(dataset, str) or not dataset.strip() or dataset == "???":
            raise ConfigError(
                "corpus.dataset is not set; name a Hub dataset (corpus.dataset=BeIR/scifact) "
                "or a local folder in the Hub layout"
            )
        columns = dict(cfg.get("columns") or {})
        for role, value in columns.items():
            if role not in _ROLES:
                raise ConfigError(
                    f"corpus.columns.{role} is not a column role{did_you_mean(role, _ROLES)}; "
                    f"roles: {', '.join(_ROLES)}"
                )
            if value is not None and not isinstance(value, str):
                raise ConfigError(
                    f"corpus.columns.{role} must be a column name, null (the layout's default) "
                    f"or '' (not read); got {value!r}"
                )
        configs = dict(cfg.get("configs") or {})
        for role, value in configs.items():
            if role not in _CONFIGS:
                raise ConfigError(
                    f"corpus.configs.{role} is not a config role; roles: {', '.join(_CONFIGS)}"
                )
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigError(f"corpus.configs.{role} must be a config name, got {value!r}")
        raw_fields = cfg.get("fields")
        if raw_fields is not None and (
            isinstance(raw_fields, str) or not all(isinstance(f, str) and f for f in raw_fields)
        ):
            raise ConfigError(
                f"corpus.fields must list column names, e.g. [dynamism, popularity]; "
                f"got {raw_fields!r}"
            )
        return cls(
            dataset=dataset.strip(),
            layout=layout,
            columns=columns,
            configs=configs,
            fields=None if raw_fields is None else tuple(raw_fields),
        )

    def column(
        self, role: str, found: list[str], where: str, *, keys: str = "columns"
    ) -> str | None:
        """The column `role` is read from, checked against the columns `found`; None when the
        layout does not read it, it is set to '', or an optional default is absent."""
        chosen = self.columns.get(role)
        if chosen == "":
            return None
        name = chosen if chosen is not None else _ROLES[role][self.layout]
        if name is None or name in found:
            return name
        if chosen is None and role not in _REQUIRED:
            return None
        told = "" if chosen is not None else f", the {self.layout} layout's default"
        raise ConfigError(
            f"{where} has no {keys[:-1]} '{name}' (corpus.columns.{role}{told})"
            f"{did_you_mean(name, found)}; its {keys}: {', '.join(found) or 'none'}; set "
            f"corpus.columns.{role}=<one of them>"
        )

    def field_columns(self, found: list[str], where: str) -> list[str]:
        """Query columns read as fields: those listed (each must exist), or the layout's."""
        if self.fields is None:
            return [f for f in _DEFAULT_FIELDS[self.layout] if f in found]
        missing = [f for f in self.fields if f not in found]
        if missing:
            raise ConfigError(
                f"{where} has no column '{missing[0]}' (corpus.fields)"
                f"{did_you_mean(missing[0], found)}; its columns: {', '.join(found)}"
            )
        return list(self.fields)


# ---------------------------------------------------------------- the Hub cache


@dataclass
class _Source:
    """One dataset repo (or local folder): where its files are and which configs it has."""

    repo: str  # owner/name, or the folder as given
    revision: str | None
    commit: str | None
    root: Path
    local: bool
    configs: dict[str, dict[str, list[str]]] | None  # config -> split -> patterns; None: none
    cache: str = ""
    read: list[Path] = field(default_factory=list)  # data files read, for a folder's digest

    @property
    def label(self) -> str:
        return str(self.root) if self.local else f"{self.repo}@{(self.commit or '')[:12]}"

    @property
    def source(self) -> str:
        return str(self.root) if self.local else f"hf://datasets/{self.repo}@{self.commit}"

    @property
    def config_names(self) -> list[str]:
        return list(self.configs) if self.configs is not None else ["default"]

    def identity(self) -> str:
        if not self.local:
            return f"hf:{self.repo}@{self.commit}"
        digest = hashlib.sha256()
        readme = self.root / "README.md"
        files = sorted({*self.read, *([readme] if readme.is_file() else [])})
        for path in files:
            digest.update(path.relative_to(self.root).as_posix().encode() + b"\0")
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            digest.update(b"\0")
        return "sha256:" + digest.hexdigest()

    def splits(self, config: str) -> dict[str, list[str]]:
        """Split -> file patterns of `config` (fetching its files when they are not here)."""
        if self.configs is not None:
            return self.configs[config]
        self._fetch(_DATA_PATTERNS, lambda root: bool(_infer_splits(root)))
        return _infer_splits(self.root)

    def files(self, config: str, split: str) -> list[Path]:
        """The data files of one config's split, fetched into the cache when missing."""
        patterns = self.splits(config)[split]
        if self.configs is not None:
            wanted = patterns + [p[3:] for p in patterns if p.startswith("**/")]
            self._fetch(wanted, lambda root: all(any(root.glob(p)) for p in patterns))
        found = sorted(
            {
                p
                for pattern in patterns
                for p in self.root.glob(pattern)
                if p.is_file()
                and not any(s.startswith(".") for s in p.relative_to(self.root).parts)
            }
        )
        if not found:
            fix = (
                "check the folder"
                if self.local
                else "fetch it with: " + FETCH.format(repo=self.repo, revision=self.commit)
            )
            raise BenchmarkError(
                f"{self.label}: config '{config}' split '{split}' names no file that is here "
                f"({', '.join(patterns)}); {fix}"
            )
        self.read += found
        return found

    def _fetch(self, patterns: list[str], cached: Callable[[Path], bool]) -> None:
        if not self.local:
            _snapshot(self.repo, self.commit or "", ["README.md", *patterns], self.cache, cached)


def _open(dataset: str, revision: Any, setting: str, *, local: bool = False) -> _Source:
    """The repo (through the Hub cache) or local folder (`local`: it must be one) `dataset`
    names, with its configs; `setting` is the revision's setting (corpus.revision, ...)."""
    folder = Path(dataset).expanduser()
    if local or folder.is_dir() or dataset.startswith(("/", ".", "~")):
        if not folder.is_dir():
            named = "corpus.qrels_dataset" if "qrels" in setting else "corpus.dataset"
            raise BenchmarkError(f"dataset folder not found: {folder} (from {named})")
        root = folder.resolve()
        return _Source(dataset, None, None, root, True, _card_configs(root, str(root)))
    if revision is None or str(revision).strip() == "":
        raise ConfigError(
            f"{setting} is not set for Hub dataset {dataset}; pin the data: {setting}=<commit> "
            f"(or {setting}=main: the newest, resolved to its commit and recorded; a local "
            f"folder needs none, but must exist)"
        )
    revision = str(revision).strip()
    cache = _hub_cache()
    root = _snapshot(dataset, revision, ["README.md"], cache, lambda p: (p / "README.md").is_file())
    commit = root.name
    if commit != revision:
        log.info(f"{dataset}: revision '{revision}' is commit {commit}")
    src = _Source(dataset, revision, commit, root, False, None, cache)
    src.configs = _card_configs(root, src.label)
    return src


def _snapshot(
    repo: str, revision: str, patterns: list[str], cache: str, cached: Callable[[Path], bool]
) -> Path:
    """The cached snapshot folder of `repo` at `revision` holding `patterns` (downloaded when
    online and missing; a commit whose cached snapshot passes `cached` is read without asking
    the Hub); every way it can fail is one error line."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        HFValidationError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    offline = _offline()
    fetch = FETCH.format(repo=repo, revision=revision)
    args = dict(repo_type="dataset", revision=revision, allow_patterns=patterns, cache_dir=cache)
    if not offline and _COMMIT.fullmatch(revision):
        # A commit never changes: when the cache holds its files, the Hub is not asked.
        try:
            path = Path(snapshot_download(repo, local_files_only=True, **args))
            if cached(path):
                return path
        except LocalEntryNotFoundError:
            pass
    try:
        path = snapshot_download(repo, local_files_only=offline, **args)
    except LocalEntryNotFoundError:  # also an incomplete cached snapshot
        why = "the Hub is offline (HF_HUB_OFFLINE)" if offline else "the Hub cannot be reached"
        raise BenchmarkError(
            f"dataset {repo} at revision '{revision}' is not in the Hugging Face cache "
            f"({cache}) and {why}; fetch it with: {fetch}"
        ) from None
    except RevisionNotFoundError:
        raise BenchmarkError(
            f"dataset {repo} has no revision '{revision}' on the Hub; check corpus.revision "
            f"(a commit, branch or tag of the dataset)"
        ) from None
    except GatedRepoError:
        raise BenchmarkError(
            f"dataset {repo} is gated: accept its terms on huggingface.co, then log in with "
            f"`hf auth login`"
        ) from None
    except RepositoryNotFoundError:
        raise BenchmarkError(
            f"dataset {repo} not found on the Hub (check its name; a private one needs "
            f"`hf auth login`)"
        ) from None
    except HFValidationError as exc:
        raise ConfigError(f"corpus.dataset '{repo}' is not a Hub dataset id: {exc}") from None
    except HfHubHTTPError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BenchmarkError(f"dataset {repo}: the Hub answered {first}; {fetch}") from None
    return Path(path)


def _hub_cache() -> str:
    """The Hub cache folder, read from the environment now (as huggingface_hub reads it at
    import), so a later HF_HUB_CACHE / HF_HOME is honoured."""
    env = os.environ
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if env.get(var):
            return os.path.expanduser(env[var])
    if env.get("HF_HOME"):
        return os.path.join(os.path.expanduser(env["HF_HOME"]), "hub")
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def _offline() -> bool:
    """Whether to read the cache only (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE, read now)."""
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        if os.environ.get(var, "").strip().upper() in {"1", "ON", "YES", "TRUE"}:
            return True
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _card_configs(root: Path, label: str) -> dict[str, dict[str, list[str]]] | None:
    """The README's `configs:` header as {config: {split: [file patterns]}}; None when the
    README is missing or declares none (splits are then read from the file names)."""
    from huggingface_hub.repocard import metadata_load

    readme = root / "README.md"
    if not readme.is_file():
        return None
    try:
        meta = metadata_load(readme) or {}
    except Exception as exc:  # YAML errors of every kind
        raise BenchmarkError(
            f"{label}: README.md's YAML header is unreadable: {str(exc).splitlines()[0]}"
        ) from None
    entries = meta.get("configs")
    if not entries:
        return None
    out: dict[str, dict[str, list[str]]] = {}
    bad = BenchmarkError(
        f"{label}: README.md's `configs:` must list {{config_name, data_files}} entries "
        f"(data_files: a path, a list of paths, or a list of {{split, path}})"
    )
    if not isinstance(entries, list):
        raise bad
    for entry in entries:
        if not isinstance(entry, dict):
            raise bad
        name = str(entry.get("config_name") or "default")
        prefix = f"{str(entry['data_dir']).strip('/')}/" if entry.get("data_dir") else ""
        files = entry.get("data_files")
        if files is None and prefix:
            files = "**"
        splits: dict[str, list[str]] = {}
        if isinstance(files, str):
            splits["train"] = [files]
        elif isinstance(files, list) and all(isinstance(f, str) for f in files):
            splits["train"] = list(files)
        elif isinstance(files, list) and all(isinstance(f, dict) for f in files):
            for item in files:
                paths = item.get("path")
                paths = [paths] if isinstance(paths, str) else paths
                if not isinstance(paths, list) or not item.get("split"):
                    raise bad
                splits.setdefault(str(item["split"]), []).extend(map(str, paths))
        else:
            raise bad
        out[name] = {s: [prefix + p for p in ps] for s, ps in splits.items()}
    return out


def _infer_splits(root: Path) -> dict[str, list[str]]:
    """Without declared configs: each data file's name up to its first '.' or shard suffix
    is its split (BeIR qrels repos: train.tsv, dev.tsv, test.tsv)."""
    splits: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or any(s.startswith(".") for s in rel.parts):
            continue
        if not any(path.name.endswith(s + c) for s in _DATA_SUFFIXES for c in _COMPRESSED):
            continue
        stem = re.sub(r"-\d{5}-of-\d{5}$", "", path.name.split(".")[0])
        splits.setdefault(stem, []).append(rel.as_posix())
    return splits


# ---------------------------------------------------------------- rows


def _rows(src: _Source, config: str, split: str) -> tuple[list[str], Iterator[dict], str]:
    """(column names, rows, where) of one config's split, streamed by `datasets` from the
    files in place."""
    try:
        import datasets
    except ImportError as exc:  # a core dependency; a broken install still gets one line
        raise ImportError(
            "reading Hugging Face datasets needs `datasets`: pip install datasets"
        ) from exc
    where = f"{src.label} config '{config}' split '{split}'"
    files = src.files(config, split)
    kinds = {_kind(p) for p in files}
    if len(kinds) != 1 or None in kinds:
        raise BenchmarkError(
            f"{where}: cannot read files {', '.join(p.name for p in files[:3])} together; "
            f"a split must be parquet, JSON lines or CSV/TSV files of one kind"
        )
    kind = kinds.pop()
    kwargs: dict[str, Any] = {}
    if kind in ("csv", "tsv"):
        sep = "\t" if kind == "tsv" else ","
        header = _header(files[0], sep)
        # ids stay text ('007' is not 7): every CSV column is read as a string
        feats = {c: datasets.Value("string") for c in header}
        kwargs = {"sep": sep, "features": datasets.Features(feats), "keep_default_na": False}
    builder = "json" if kind == "json" else "csv" if kind in ("csv", "tsv") else "parquet"
    try:
        ds = datasets.load_dataset(
            builder,
            data_files={"rows": [str(p) for p in files]},
            split="rows",
            streaming=True,
            **kwargs,
        )
        columns = ds.column_names
    except Exception as exc:  # pyarrow / pandas / datasets errors on a damaged file
        raise BenchmarkError(f"{where}: cannot read {files[0].name}: {_line(exc)}") from None
    rows = _guarded(ds, where)
    if columns is None:  # JSON lines declare no schema: the first row's keys
        first = next(rows, None)
        columns = list(first) if first is not None else []
        rows = itertools.chain([first] if first is not None else [], rows)
    return list(columns), rows, where


def _kind(path: Path) -> str | None:
    name = path.name
    for c in _COMPRESSED[1:]:
        name = name.removesuffix(c)
    kinds = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv", ".tsv": "tsv"}
    return kinds.get(Path(name).suffix)


def _header(path: Path, sep: str) -> list[str]:
    import fsspec

    with fsspec.open(str(path), "rt", compression="infer", encoding="utf-8") as fh:
        return fh.readline().rstrip("\r\n").split(sep)


def _guarded(rows: Any, where: str) -> Iterator[dict]:
    """The rows, with a read failure part-way through as one error line: `datasets` logs
    its own ERROR lines about it first (twice: its handler and ours), so its logger is
    silenced while the rows are read (set once: setLevel clears every logger's cache), and
    ours says what failed."""
    quiet = logging.getLogger("datasets")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL + 1)
    try:  # an error of the caller's own code is never thrown into this generator
        yield from rows
    except Exception as exc:
        raise BenchmarkError(f"{where}: cannot read a row: {_line(exc)}") from None
    finally:
        quiet.setLevel(level)


def _line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _pick_config(
    src: _Source, role: str, spec: _Spec, *, look_for: tuple = (), only_one: bool = False
) -> str:
    """The config that holds `role` (corpus, queries, qrels): as set, else the first name of
    `look_for` (default: the role's usual names) the repo has, else (`only_one`) its only
    config."""
    names = src.config_names
    chosen = spec.configs.get(role)
    if chosen is not None:
        if chosen not in names:
            raise ConfigError(
                f"{src.label} has no config '{chosen}' (corpus.configs.{role})"
                f"{did_you_mean(chosen, names)}; its configs: {', '.join(names)}"
            )
        return chosen
    look_for = look_for or _CONFIGS[role]
    for name in look_for:
        if name in names:
            return name
    if only_one and len(names) == 1:
        return names[0]
    raise ConfigError(
        f"{src.label} has no '{look_for[0]}' config for the {role} ({spec.layout} layout); "
        f"its configs: {', '.join(names)}; set corpus.configs.{role}=<one of them>"
    )


def _pick_split(src: _Source, config: str, split: str) -> str:
    """A corpus or queries config's split: its only one, else corpus.split, else the one
    named after the config (BeIR: corpus/corpus, queries/queries)."""
    splits = list(src.splits(config))
    if len(splits) == 1:
        return splits[0]
    for name in (split, config):
        if name in splits:
            return name
    raise BenchmarkError(
        f"{src.label} config '{config}' has no split '{split}'; its splits: "
        f"{', '.join(splits)} (set corpus.split)"
    )


def _answerable(value: Any) -> Any:
    """A string column's answerable ('true', 'no', 'partial') as the record reads it."""
    said = value.strip().lower() if isinstance(value, str) else None
    if said in ("true", "yes"):
        return True
    if said in ("false", "no"):
        return False
    return "partial" if said == "partial" else value


def _labels(value: Any) -> Any:
    """A labels column as {chunk id: label}: a struct (its null members dropped: a parquet
    struct holds every key of every row; none left: no labels) or a list of [chunk id, label]
    pairs."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not None} or None
    if isinstance(value, list) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        return {str(k): v for k, v in value}
    return value


def _corpus(spec: _Spec, src: _Source, config: str, split: str) -> dict[str, Chunk]:
    """The corpus config's rows as chunks (beir and redqa layouts)."""
    found, rows, where = _rows(src, config, split)
    cid_col = spec.column("chunk_id", found, where)
    text_col = spec.column("content", found, where)
    title_col = spec.column("title", found, where)
    date_col = spec.column("chunk_date", found, where)
    corpus: dict[str, Chunk] = {}
    for i, row in enumerate(rows):
        cid = readers.text_id(row.get(cid_col))
        if cid is None:
            raise BenchmarkError(f"{where} row {i}: missing or blank '{cid_col}'")
        text = row.get(text_col)
        if not isinstance(text, str):
            raise BenchmarkError(
                f"{where} row {i}: chunk '{cid}' needs a string '{text_col}' "
                f"(found {type(text).__name__})"
            )
        if cid in corpus:
            raise BenchmarkError(f"{where} row {i}: duplicate chunk id '{cid}'")
        title = row.get(title_col) if title_col else None
        when = readers.parse_date(
            row.get(date_col) if date_col else None, f"{where} row {i}: chunk '{cid}': 'date'"
        )
        corpus[cid] = Chunk(cid, text, str(title or ""), date=when)
    if not corpus:
        raise BenchmarkError(f"{where}: the corpus is empty")
    return corpus


def _record(spec: _Spec, row: Mapping[str, Any], cols: Mapping[str, str | None]) -> dict:
    """A query row as the RedQA-style record `query_record` reads."""
    rec: dict[str, Any] = {}
    for role in ("gold_chunk_groups", "group_present", "answer", "answers", "date"):
        if cols.get(role):
            rec[role] = row.get(cols[role])
    if cols.get("answerable"):
        rec["answerable"] = _answerable(row.get(cols["answerable"]))
    if cols.get("labels"):
        rec["labels"] = _labels(row.get(cols["labels"]))
    meta = row.get(cols["metadata"]) if cols.get("metadata") else None
    extra = {f: row.get(f) for f in cols.get("fields") or ()}
    if extra and (meta is None or isinstance(meta, dict)):
        meta = {**(meta or {}), **extra}  # field columns join the metadata object's fields
    if meta is not None:
        rec["metadata"] = meta
    return rec


_QUERY_ROLES = ("query_id", "question", "answerable", "answer", "answers", "date", "metadata")


def _query_columns(spec: _Spec, found: list[str], where: str, roles: tuple) -> dict:
    cols: dict[str, Any] = {r: spec.column(r, found, where) for r in roles}
    cols["fields"] = spec.field_columns(found, where)
    return cols


def _query_id(row: Mapping[str, Any], column: str, where: str, i: int) -> str:
    qid = readers.text_id(row.get(column))
    if qid is None:
        raise BenchmarkError(f"{where} row {i}: needs a non-empty '{column}' (the query id)")
    return qid


# ---------------------------------------------------------------- layouts


def _load_beir(spec: _Spec, main: _Source, split: str, cfg: Mapping[str, Any]) -> Benchmark:
    """corpus + queries configs, and the qrels config of this repo or of `<repo>-qrels`."""
    corpus_cfg = _pick_config(main, "corpus", spec)
    queries_cfg = _pick_config(main, "queries", spec)
    qrels_src = _qrels_source(spec, main, cfg)
    qrels_cfg = _pick_config(qrels_src, "qrels", spec, only_one=True)
    qrels_splits = list(qrels_src.splits(qrels_cfg))
    if split not in qrels_splits:
        raise BenchmarkError(
            f"{qrels_src.label} config '{qrels_cfg}' has no split '{split}'; splits: "
            f"{', '.join(qrels_splits) or 'none'} (set corpus.split)"
        )
    corpus = _corpus(spec, main, corpus_cfg, _pick_split(main, corpus_cfg, split))

    found, rows, where = _rows(main, queries_cfg, _pick_split(main, queries_cfg, split))
    cols = _query_columns(spec, found, where, _QUERY_ROLES)
    texts: dict[str, str] = {}
    records: dict[str, tuple[str, dict]] = {}
    for i, row in enumerate(rows):
        qid = _query_id(row, cols["query_id"], where, i)
        text = row.get(cols["question"])
        at = f"{where} row {i}: query '{qid}'"
        if not isinstance(text, str) or not text.strip():
            raise BenchmarkError(f"{at} has no text ('{cols['question']}')")
        if qid in texts:
            raise BenchmarkError(f"{at}: duplicate query id; ids must be unique")
        texts[qid] = text
        records[qid] = (at, _record(spec, row, cols))

    judgments, qwhere = _qrels(spec, qrels_src, qrels_cfg, split, texts)
    metadata = _metadata(spec, main, split, {"corpus": corpus_cfg, "queries": queries_cfg})
    metadata["configs"]["qrels"] = qrels_cfg
    checksum = main.identity()
    if qrels_src is not main:
        metadata["qrels_dataset"] = qrels_src.repo
        metadata["qrels_revision"] = qrels_src.revision
        metadata["qrels_commit"] = qrels_src.commit
        checksum += "+" + qrels_src.identity()
    metadata["queries_in_config"] = len(texts)
    return judged_benchmark(
        _name(cfg, main), main.source, qwhere, corpus, texts, records, judgments, checksum, metadata
    )


def _qrels_source(spec: _Spec, main: _Source, cfg: Mapping[str, Any]) -> _Source:
    """This repo when it has a qrels config (mteb/<name>), else corpus.qrels_dataset or
    `<dataset>-qrels` (BeIR/<name>-qrels), at corpus.qrels_revision."""
    other = cfg.get("qrels_dataset")
    if not other:
        chosen = spec.configs.get("qrels")
        names = main.config_names
        if (chosen in names) if chosen else any(n in names for n in _CONFIGS["qrels"]):
            return main
        other = main.repo.rstrip("/") + "-qrels"
        if main.local and not Path(other).expanduser().is_dir():
            raise BenchmarkError(
                f"{main.label} has no qrels config (configs: {', '.join(names)}) and there is "
                f"no folder {other}; set corpus.configs.qrels or corpus.qrels_dataset"
            )
    if other == main.repo:
        return main
    revision = cfg.get("qrels_revision")
    if not revision and not main.local:
        given = str(main.revision)
        revision = given if not _COMMIT.fullmatch(given) else "main"
        if revision == "main" and given != "main":
            log.info(
                f"{other}: corpus.qrels_revision is not set; reading its main branch (the "
                f"commit is recorded); pin it with corpus.qrels_revision=<commit>"
            )
    return _open(str(other), revision, "corpus.qrels_revision", local=main.local)


def _qrels(
    spec: _Spec, src: _Source, config: str, split: str, texts: Mapping[str, str]
) -> tuple[readers.QrelsCollector, str]:
    """The checked judgments (graded, or named labels) and where they were read, as the BEIR
    loader reads qrels/*.tsv: one judgment per (query, chunk)."""
    found, rows, where = _rows(src, config, split)
    q_col = spec.column("qrels_query_id", found, where)
    c_col = spec.column("qrels_chunk_id", found, where)
    s_col = spec.column("score", found, where)
    judgments = readers.QrelsCollector()
    for i, row in enumerate(rows):
        qid, cid = readers.text_id(row.get(q_col)), readers.text_id(row.get(c_col))
        at = f"{where} row {i}"
        if qid is None or cid is None:
            raise BenchmarkError(f"{at}: missing or blank '{q_col if qid is None else c_col}'")
        if qid not in texts:
            raise BenchmarkError(f"{at}: query '{qid}' is not in the queries config")
        judgments.add(at, f"row {i}", qid, cid, row.get(s_col))
    judgments.check(where)
    return judgments, where


def _load_rows(spec: _Spec, main: _Source, split: str, cfg: Mapping[str, Any]) -> Benchmark:
    """redqa (queries + corpus configs) and garage (one config, passages inline)."""
    garage = spec.layout == "garage"
    look_for = _GARAGE_CONFIGS if garage else ()
    queries_cfg = _pick_config(main, "queries", spec, look_for=look_for, only_one=garage)
    configs = {"queries": queries_cfg}
    corpus: dict[str, Chunk] = {}
    if not garage:
        configs["corpus"] = _pick_config(main, "corpus", spec)
        corpus_split = _pick_split(main, configs["corpus"], split)
        corpus = _corpus(spec, main, configs["corpus"], corpus_split)

    found, rows, where = _rows(main, queries_cfg, _pick_split(main, queries_cfg, split))
    roles = _QUERY_ROLES + (
        ("passages",) if garage else ("gold_chunk_groups", "group_present", "labels")
    )
    cols = _query_columns(spec, found, where, roles)
    passages = _Passages(spec, where) if garage else None
    queries: list[Query] = []
    for i, row in enumerate(rows):
        qid = _query_id(row, cols["query_id"], where, i)
        rec = {"query_id": qid, "question": row.get(cols["question"]), **_record(spec, row, cols)}
        if passages is not None:
            rec["gold_chunk_groups"] = []
            rec["labels"] = passages.add(qid, i, row.get(cols["passages"]), row) or None
        at = f"{where} row {i}: query '{qid}'"
        queries.append(readers.query_record(at, rec))
    if not queries:
        raise BenchmarkError(f"{where}: no queries; a benchmark needs at least one")
    if passages is not None:
        corpus = passages.corpus
        if not corpus:
            raise BenchmarkError(f"{where}: no passages; the corpus is empty")
        if passages.hashed:
            log.info(
                f"{where}: the passages have no id key; each is named by its text's SHA-256 "
                f"(p + 16 hex digits); set corpus.columns.chunk_id to read ids"
            )
    readers._check_unique(where, tuple(queries))
    metadata = _metadata(spec, main, split, configs)
    metadata.update(readers.absent_notes(where, tuple(queries), corpus))
    return Benchmark(
        name=_name(cfg, main),
        corpus=corpus,
        queries=tuple(queries),
        checksum=main.identity(),
        source=main.source,
        metadata=metadata,
    )


class _Passages:
    """GaRAGe rows: each question's passages join one corpus (an id met twice must carry the
    same passage) and their labels become the question's labels."""

    def __init__(self, spec: _Spec, where: str):
        self.spec, self.where = spec, where
        self.corpus: dict[str, Chunk] = {}
        self.first: dict[str, str] = {}  # chunk id -> the query that brought it first
        self.keys: dict[str, str | None] | None = None
        self.parallel: str | None = None  # a row column of labels beside the passages
        self.hashed = 0

    def _columns(self, passage: Mapping[str, Any], row: Mapping[str, Any]) -> None:
        found = list(passage)
        where = f"{self.where}: the passages"
        self.keys = {
            r: self.spec.column(r, found, where, keys="keys")
            for r in ("content", "title", "chunk_date")
        }
        # Without an id key passages are named by their text (the published GaRAGe has none).
        id_key = self.spec.columns.get("chunk_id")
        if id_key is None:
            id_key = _ROLES["chunk_id"]["garage"] if _ROLES["chunk_id"]["garage"] in found else ""
        self.keys["chunk_id"] = id_key and self.spec.column("chunk_id", found, where, keys="keys")
        # A label key in each passage, or a row column of labels parallel to the passages
        # (GaRAGe's evidence_correct).
        label = self.spec.columns.get("label")
        name = _ROLES["label"]["garage"] if label is None else label
        self.keys["label"] = name if name and name in found else None
        self.parallel = name if name and not self.keys["label"] and name in row else None
        if label and not self.keys["label"] and not self.parallel:
            self.spec.column("label", found, where, keys="keys")  # raises, naming the keys

    def add(self, qid: str, i: int, raw: Any, row: Mapping[str, Any]) -> dict[str, str]:
        at = f"{self.where} row {i}: query '{qid}'"
        if raw is None:
            raw = []
        if not isinstance(raw, list) or not all(isinstance(p, dict) for p in raw):
            raise BenchmarkError(
                f"{at}: the passages must be a list of objects (found {raw!r:.80})"
            )
        if raw and self.keys is None:
            self._columns(raw[0], row)
        parallel = row.get(self.parallel) if raw and self.parallel else None
        if parallel is not None and (not isinstance(parallel, list) or len(parallel) != len(raw)):
            raise BenchmarkError(
                f"{at}: '{self.parallel}' must list one label per passage ({len(raw)})"
            )
        labels: dict[str, str] = {}
        for n, passage in enumerate(raw):
            keys = self.keys or {}
            text = passage.get(keys["content"])
            if not isinstance(text, str):
                raise BenchmarkError(
                    f"{at}: passage {n} needs a string '{keys['content']}' "
                    f"(found {type(text).__name__})"
                )
            if keys["chunk_id"]:
                cid = readers.text_id(passage.get(keys["chunk_id"]))
                if cid is None:
                    raise BenchmarkError(f"{at}: passage {n} has no '{keys['chunk_id']}'")
            else:
                cid = "p" + hashlib.sha256(text.encode()).hexdigest()[:16]
                self.hashed += 1
            title = passage.get(keys["title"]) if keys["title"] else None
            when = readers.parse_date(
                passage.get(keys["chunk_date"]) if keys["chunk_date"] else None,
                f"{at}: passage '{cid}': 'date'",
            )
            chunk = Chunk(cid, text, str(title or ""), date=when)
            seen = self.corpus.get(cid)
            if seen is None:
                self.corpus[cid] = chunk
                self.first[cid] = qid
            elif seen != chunk:
                what = "text" if seen.text != chunk.text else "date or title"
                raise BenchmarkError(
                    f"{at}: passage '{cid}' differs in {what} from the passage of that id "
                    f"under query '{self.first[cid]}'; an id names one passage"
                )
            label = (
                parallel[n]
                if parallel is not None
                else (passage.get(keys["label"]) if keys["label"] else None)
            )
            if label is not None and label != "":
                if cid in labels and labels[cid] != label:
                    raise BenchmarkError(
                        f"{at}: passage '{cid}' is labelled both {labels[cid]} and {label}"
                    )
                labels[cid] = label
        return labels


def _metadata(spec: _Spec, main: _Source, split: str, configs: dict[str, str]) -> dict:
    return {
        "format": "hf",
        "dataset": main.repo,
        "revision": main.revision,
        "commit": main.commit,
        "configs": dict(configs),
        "layout": spec.layout,
        "split": split,
    }


def _name(cfg: Mapping[str, Any], main: _Source) -> str:
    if cfg.get("name"):
        return str(cfg["name"])
    return main.root.name if main.local else main.repo.replace("/", "-")
