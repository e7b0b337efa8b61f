"""Where the Hydra config tree lives, its schema, and the checks run on command-line overrides."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import OverrideType
from omegaconf import DictConfig

from harness.core.confs import APPENDED, register
from harness.core.errors import ConfigError, did_you_mean, unknown_name
from harness.core.paths import conf_dir, group_options

GROUPS = ("retriever", "corpus", "metrics", "extractor", "experiment", "utility", "rag")


# Hydra's own flags that take a value; and those after which no job runs, or that point
# Hydra at another config (the check below composes this package's config, so it stands aside).
_VALUE_FLAGS = {"--cfg", "-c", "--package", "-p"}
_UNCHECKED_FLAGS = {
    *("--help", "-h", "--hydra-help", "--version", "--shell-completion", "-sc", "--info", "-i"),
    *("--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd"),
    "--experimental-rerun",
}


_RUN_FLAGS = {"-m", "--multirun", "--run", "-r", "--resolve"}
HYDRA_FLAGS = frozenset({*_VALUE_FLAGS, *_UNCHECKED_FLAGS, *_RUN_FLAGS})


def check_flags(argv: Sequence[str], own: Sequence[str] = ()) -> None:
    """Every `-x`/`--name` argument is one of Hydra's flags or the command's own (`own`);
    anything else is one ConfigError with a did-you-mean (settings are key=value)."""
    known = sorted({*HYDRA_FLAGS, *own})
    skip_next = False
    for arg in argv:
        if skip_next:
            skip_next = False
            continue
        flag = arg.split("=", 1)[0]
        if not arg.startswith("-") or flag in known:
            skip_next = arg in _VALUE_FLAGS
            continue
        ours = ", ".join(f for f in known if f in own or f in ("--help", "-m", "--cfg"))
        hint = did_you_mean(flag, known)
        if not hint and not flag.startswith("--"):
            hint = did_you_mean("-" + flag, known)  # -full for --full
        raise ConfigError(
            f"unknown flag '{flag}'{hint}; flags: {ours} (Hydra's: --hydra-help); "
            "settings are key=value, e.g. retriever=bm25"
        )


def override_args(argv: Sequence[str]) -> list[str] | None:
    """The override arguments among Hydra's command line; None when they are not to be checked."""
    out: list[str] = []
    skip_next = False
    for arg in argv:
        if skip_next:
            skip_next = False
        elif arg.split("=")[0] in _UNCHECKED_FLAGS:
            return None
        elif arg in _VALUE_FLAGS:
            skip_next = True
        elif not arg.startswith("-"):
            out.append(arg)
    return out


_PREFIX = {OverrideType.ADD: "+", OverrideType.FORCE_ADD: "++", OverrideType.DEL: "~"}


def check_overrides(argv: Sequence[str]) -> None:
    """Fail early with one clear line on a bad override: an unknown group choice or key
    (with a did-you-mean), or a value of the wrong type. Sweeps are checked on every
    combination of group choices (up to 64) and on the first value of every other key."""
    args = override_args(argv)
    if args is None:
        return
    try:
        parsed = OverridesParser.create().parse_overrides(args)
    except Exception as exc:  # Hydra's grammar errors
        said = _one_line(exc)
        if "Unknown function" in said:  # a metric name with parentheses, read as a call
            parts = (p.strip().rstrip(".") for p in said.split(";"))
            kept: list[str] = []
            for p in parts:
                if p and not p.startswith(("Available", "See ")) and not any(p in k for k in kept):
                    kept.append(p)
            said = (
                f"{'; '.join(kept)}; a value with parentheses goes in quotes, "
                """e.g. 'metrics.names=["P(rel=2)@10",AP]'"""
            )
        if "LexerNoViableAlt" in said:  # a character Hydra's grammar reserves, unquoted
            bad = next((a for a in args if not _parses(a)), None)
            if bad is not None and "=" in bad and not {"'", '"'} & set(bad):
                key, value = bad.split("=", 1)
                raise ConfigError(
                    f"cannot parse '{bad}': Hydra reads characters such as ~ ( ) [ ] {{ }} , "
                    f"in a value as syntax; quote the value: '{key}=\"{value}\"'"
                ) from None
        raise ConfigError(f"cannot parse the overrides: {said}") from None
    groups, others = [], []
    for o in parsed:
        key = o.key_or_group
        if key == "hydra/launcher" and o.type != OverrideType.DEL:
            options = sorted({"basic", *group_options("hydra/launcher")})
            choice = o.get_value_element_as_str()
            if choice not in options:
                raise unknown_name("hydra/launcher", choice, options, f"fix '{o.input_line}'")
        if key.split(".")[0].split("/")[0] == "hydra":
            continue
        values = list(o.sweep_string_iterator()) if o.is_sweep_override() else None
        if key in GROUPS and o.type != OverrideType.DEL:
            options = group_options(key)
            for choice in values or [o.get_value_element_as_str()]:
                if choice not in options:
                    raise unknown_name(
                        key,
                        choice,
                        options,
                        f"add conf/{key}/{choice}.yaml or fix '{o.input_line}'",
                    )
        prefix = _PREFIX.get(o.type, "")
        if key in GROUPS:  # every choice of a group sweep: a key may fit only some of them
            groups.append([f"{prefix}{key}={v}" for v in values] if values else [o.input_line])
        else:
            others.append((o, f"{prefix}{key}={values[0]}" if values else o.input_line))
    multirun = {"-m", "--multirun"} & set(argv) or any(
        o.key_or_group == "hydra.mode" for o in parsed
    )
    swept = None if multirun else next((o for o in parsed if o.is_sweep_override()), None)
    register()
    if swept is not None:  # Hydra's own answer is six lines and exit 1
        key = swept.key_or_group
        listed = ",".join(swept.sweep_string_iterator())
        raise ConfigError(
            f"'{swept.input_line}' gives several values, a sweep: add -m (--multirun) to run "
            "one job per value"
            + (f", or write a list in brackets: {key}=[{listed}]" if _is_list(key, groups) else "")
        )
    combos = list(itertools.islice(itertools.product(*groups), _MAX_COMBOS))
    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        for combo in combos:
            _check_combo(list(combo), others, sweep=len(combos) > 1)


_MAX_COMBOS = 64  # group choices composed and checked before a sweep starts


def _is_list(key: str, groups: list[list[str]]) -> bool:
    """Whether `key` holds a list in the config the group choices (their first) compose."""
    from omegaconf import ListConfig, OmegaConf

    if key in GROUPS:
        return False
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
            cfg = compose(config_name="config", overrides=[g[0] for g in groups])
        return isinstance(OmegaConf.select(cfg, key, throw_on_missing=False), ListConfig)
    except Exception:  # a key that is not there: the check after this one names it
        return False


def _parses(arg: str) -> bool:
    try:
        OverridesParser.create().parse_overrides([arg])
    except Exception:
        return False
    return True


def _check_combo(groups: list[str], others: list, *, sweep: bool) -> None:
    where = f" (with {' '.join(groups)} in this sweep)" if sweep else ""
    try:
        cfg = compose(config_name="config", overrides=groups + [f for _, f in others])
    except Exception as exc:  # OmegaConf validation errors, wrapped by Hydra
        failure = _one_line(exc)
        bare = re.search(r"merging override ([\w.]+)=([^;\[]*?); .*is not a ListConfig", failure)
        if bare:  # a list given bare: metrics.k=10
            failure = f"{failure.rstrip('.')}; {bare[1]} takes a list: {bare[1]}=[{bare[2]}]"
    else:
        _check_flags(cfg, others, where)
        return
    # Only on failure: compose the group choices alone to name an unknown key precisely.
    try:
        base = compose(config_name="config", overrides=groups)
    except Exception:
        raise ConfigError(failure + where) from None
    for o, _ in others:
        if o.type == OverrideType.CHANGE:
            try:
                _check_key(base, o.key_or_group)
            except ConfigError as exc:
                raise ConfigError(f"{exc}{where}") from None
    _check_flags(base, others, where)
    raise ConfigError(failure + where)


def check_added(argv: Sequence[str], own: Sequence[str] = ()) -> None:
    """'+key=value' adds keys to a plug-in's section or a mapping that starts empty, never to
    the schema's own settings: '+retrieval.dept=5' would run at depth 100 and record the
    typo. Read from the arguments themselves, before anything is composed."""
    for arg in argv:
        if arg.startswith("+") and "=" in arg:
            key = arg.lstrip("+").split("=", 1)[0]
            top = key.split(".")[0]  # Hydra's own settings are Hydra's to check
            if "@" not in key and "/" not in key and top not in (*GROUPS, *own, "hydra"):
                _check_schema_key(key)


def flags_fit(cfg: DictConfig, overrides: Sequence[str]) -> bool:
    """Whether every yes/no setting among `overrides` (composed into `cfg`) is true or false;
    if not, check_overrides names the one that is not."""
    args = override_args(overrides)
    try:
        parsed = OverridesParser.create().parse_overrides(args or [])
        _check_flags(cfg, [(o, None) for o in parsed], "")
    except Exception:
        return False
    return True


def _check_flags(cfg: DictConfig, others: list, where: str) -> None:
    """A yes/no setting of the schema (force, cache, results.write, ...) takes true or false,
    as the retrievers' own flags do: OmegaConf would read yes, on, 1 or 5 as true."""
    from omegaconf.nodes import BooleanNode

    for o, _ in others:
        if o.type not in (OverrideType.CHANGE, OverrideType.FORCE_ADD):
            continue
        node: Any = cfg
        for part in o.key_or_group.split("."):
            node = (
                node._get_node(part, validate_access=False)
                if isinstance(node, DictConfig)
                else None
            )
            if node is None:
                break
        if not isinstance(node, BooleanNode):
            continue
        values = getattr(o.value(), "list", None) if o.is_sweep_override() else [o.value()]
        for value in values or []:
            # ${...} is resolved later, to a bool or to OmegaConf's own error
            text = isinstance(value, str) and value.startswith("${")
            if not isinstance(value, bool) and value is not None and not text:
                given = o.input_line.split("=", 1)[1] if "=" in o.input_line else value
                raise ConfigError(f"{o.key_or_group} must be true or false, got '{given}'" + where)


def _check_schema_key(dotted: str) -> None:
    from dataclasses import MISSING, fields, is_dataclass

    from harness.core.confs import HarnessConf

    top, _, rest = dotted.partition(".")
    schema = {f.name: f for f in fields(HarnessConf)}
    if top not in schema:
        valid = list(schema)
        raise ConfigError(
            f"unknown config key '{dotted}'{did_you_mean(top, valid)}; keys under the top "
            f"level: {', '.join(valid)}"
        )
    factory = schema[top].default_factory
    section = factory() if rest and factory is not MISSING else None  # a schema section
    if is_dataclass(section):
        key, valid = rest.split(".")[0], [f.name for f in fields(section)]
        if key not in valid:
            raise ConfigError(
                f"unknown config key '{dotted}'{did_you_mean(key, valid)}; keys under {top}: "
                f"{', '.join(valid)}"
            )


def _check_key(cfg: DictConfig, dotted: str) -> None:
    node: Any = cfg
    walked: list[str] = []
    top = dotted.split(".")[0]
    if top in APPENDED and top in cfg.keys() and cfg._get_node(top)._is_none():
        raise ConfigError(
            f"'{dotted}' sets a {top} setting, but this run has no {top} section; add "
            f"+{top}={group_options(top)[0]} before it"
            + (f" (or choose metrics={top})" if top in ("utility", "rag") else "")
        )
    for part in dotted.split("."):
        # keys(), not `in`: OmegaConf's `in` is False for a key whose value is ??? (missing).
        if not isinstance(node, DictConfig) or part not in node.keys():
            where = ".".join(walked)
            valid = list(node.keys()) if isinstance(node, DictConfig) else []
            # only a plug-in's section takes keys of its own (its class's arguments)
            plugin = "_target_" in valid or "target" in valid
            empty = isinstance(node, DictConfig) and not valid and walked  # a mapping to fill
            raise ConfigError(
                f"unknown config key '{dotted}'{did_you_mean(part, valid)}; "
                f"keys under {where or 'the top level'}: {', '.join(map(str, valid)) or 'none'}"
                + (f"; use +{dotted}=... to pass a new argument to the plug-in" if plugin else "")
                + (f"; {where} starts empty: add a key with +{dotted}=..." if empty else "")
                + (_choices_with(where, part) if walked == [top] and top in GROUPS else "")
            )
        node = node._get_node(part)  # the node itself: reading a ??? value would raise
        walked.append(part)


def _choices_with(group: str, key: str) -> str:
    """'; corpus.path belongs to corpus=beir, corpus=redqa: choose one first' when other
    choices of the group have the key this one lacks (those that need it, ???, if any)."""
    from omegaconf import OmegaConf

    having, needing = [], []
    for name in group_options(group):
        cfg = OmegaConf.load(conf_dir() / group / f"{name}.yaml")
        if key in cfg.keys():  # keys(): `in` is False for a ??? value
            having.append(f"{group}={name}")
            if OmegaConf.is_missing(cfg, key):
                needing.append(f"{group}={name}")
    shown = needing or having
    if len(shown) > 4:
        shown = [*shown[:3], f"{len(shown) - 3} more"]
    return f"; {group}.{key} belongs to {', '.join(shown)}: choose one first" if shown else ""


def _one_line(exc: Exception) -> str:
    """Hydra/OmegaConf messages span lines of detail; keep the informative ones, joined."""
    skip = ("full_key", "reference_type", "object_type", "Set the environment variable")
    lines: list[str] = []
    seen: set[int] = set()
    # Under a debugger, coverage or OC_CAUSE=1 OmegaConf links an error to itself as its cause.
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        lines += [ln.strip() for ln in str(exc).splitlines()]
        exc = exc.__cause__
    return "; ".join(dict.fromkeys(ln for ln in lines if ln and not ln.startswith(skip)))
