"""Build the leaderboard's tables from results/ and write them in every requested format."""

from __future__ import annotations

import csv
import io
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from harness.core.errors import HarnessError, did_you_mean
from harness.core.files import sha256_of

log = logging.getLogger("harness.report")

FORMATS = ("all", "markdown", "latex", "csv", "html")


TABLES = (
    *("all", "table3", "hops", "fields", "strata", "deflection", "protocols", "utility", "rag"),
    "reproduction",
)


# The packaged example: shown only when named (--corpus demo) or when it is all there is.
DEMO = "demo"


def _check_k(board, corpora: list[str], k: int, asked: bool) -> None:
    """Refuse a cutoff no cell holds when it was asked for: the tables of means would be '-'
    (and an earlier leaderboard's plots replaced by none); the default one is a note (the
    tables in RARE's Table 4 shape show the cells' own K)."""
    held = {
        int(name.rsplit("@", 1)[1])
        for c in corpora
        for cell in board.cells[c].values()
        for name in cell.values
        if "@" in name and name.rsplit("@", 1)[1].isdigit()
    }
    if held and k not in held:
        said = (
            f"--k {k}: no cell holds a metric at K={k} (their cutoffs: "
            f"{', '.join(map(str, sorted(held)))}); choose one of those, or rerun the cells "
            f"with metrics.k=[{','.join(map(str, sorted(held | {k})))}] (their stored runs are "
            "rescored, not retrieved again)"
        )
        if asked:
            raise HarnessError(said)
        board.notes.append(said.replace(f"--k {k}: ", "the default --k 10: ", 1))


def _corpora(board, wanted: Sequence[str] | None) -> list[str]:
    if not wanted:
        real = [c for c in board.corpora if c != DEMO]
        if real and len(real) < len(board.corpora):
            board.notes.append(f"the packaged demo corpus is left out; --corpus {DEMO} shows it")
        return real or board.corpora
    for c in wanted:
        if c not in board.cells:
            hint = did_you_mean(c, board.corpora)
            raise HarnessError(
                f"no cells for corpus '{c}' under {board.results_dir}{hint}; "
                f"corpora with results: {', '.join(board.corpora)}"
            )
    return list(dict.fromkeys(wanted))


def build(args):
    """Read results/ and build the requested tables; returns (board, corpora, tables, fails)."""
    from harness.report.leaderboard.collect import collect
    from harness.report.leaderboard.protocol_metrics import protocols_table
    from harness.report.leaderboard.protocols import deflection_table
    from harness.report.leaderboard.rag import GARAGE, RARE, shaped_table
    from harness.report.leaderboard.strata import strata_table
    from harness.report.leaderboard.tables import (
        Options,
        Significance,
        fields,
        hops,
        reproduction,
        table3,
    )
    from harness.report.leaderboard.utility import UTILITY

    asked = args.k is not None  # a cutoff no cell holds is refused only when asked for
    args.k = 10 if args.k is None else args.k
    if args.k < 1:
        raise HarnessError(f"--k must be a positive integer, got {args.k}")
    if not 0 < args.alpha < 1:
        raise HarnessError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if not 0 <= args.tolerance < float("inf"):  # NaN would fail every reproduction
        raise HarnessError(f"--tolerance must be a finite number >= 0 points, got {args.tolerance}")
    if not 1 <= args.permutations <= 1_000_000:
        raise HarnessError(f"--permutations must be between 1 and 1000000, got {args.permutations}")
    board = collect(Path(args.results))
    corpora = _corpora(board, args.corpus)
    _check_k(board, corpora, args.k, asked)
    opts = Options(
        k=args.k, alpha=args.alpha, tolerance=args.tolerance, permutations=args.permutations
    )
    sig = None if args.no_significance else Significance(board, opts)
    tables, fails = [], 0
    if args.table in ("all", "table3"):
        tables.append(table3(board, corpora, opts, sig))
    per_corpus = {  # table name -> the tables of one corpus, in the order shown
        "hops": lambda c: [hops(board, c, opts, sig)],
        "fields": lambda c: fields(board, c, opts, sig),
        "strata": lambda c: [strata_table(board, c, opts)],
        "deflection": lambda c: [deflection_table(board, c, opts)],
        "protocols": lambda c: [protocols_table(board, c, opts, sig)],
        "utility": lambda c: [shaped_table(board, c, UTILITY, sig)],
        "rag": lambda c: [shaped_table(board, c, shape, sig) for shape in (RARE, GARAGE)],
    }
    for name, made in per_corpus.items():
        if args.table in ("all", name):
            tables += [t for c in corpora for t in made(c) if t is not None]
    if args.table in ("all", "reproduction"):
        rep, fails = reproduction(board, corpora, opts)
        tables.append(rep)
    return board, corpora, tables, fails


def long_csv(board, corpora: list[str]) -> str:
    """Every number of every cell and stratum, one per line, with the published value when
    there is one: the tidy form for pandas and spreadsheets."""
    from harness.report.leaderboard.collect import AUTHORS_SUFFIX

    published = {
        (r.corpus, r.retriever, r.metric): r
        for r in board.references
        if r.source == "rare-paper-table3" or r.metric in ("group_ndcg@10", "group_mrr@10")
    }
    # an authors'-setup cell (`<model>-rare`) carries its model's published number too
    published |= {
        (c, r + AUTHORS_SUFFIX, m): ref
        for (c, r, m), ref in published.items()
        if r + AUTHORS_SUFFIX in board.cells.get(c, {})
    }
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "corpus",
            "retriever",
            "stratification",
            "label",
            "n",
            "metric",
            "value",
            "ci_low",
            "ci_high",
            "published",
            "published_source",
            "checksum",
            "stale",
        ]
    )
    for c in corpora:
        for name, e in sorted(board.cells[c].items()):
            res = e.doc.get("results") or {}
            strata = [("overall", "", res.get("overall"))]
            for strat, by in res.items():
                if strat != "overall" and isinstance(by, dict):
                    strata += [(strat, lab, s) for lab, s in by.items()]
            for strat, lab, s in strata:
                if not isinstance(s, dict):
                    continue
                for m, v in (s.get("mean") or {}).items():
                    ci = (s.get("ci") or {}).get(m) or [None, None]
                    ref = published.get((c, name, m)) if strat == "overall" else None
                    w.writerow(
                        [
                            c,
                            name,
                            strat,
                            lab,
                            s.get("n"),
                            m,
                            _f(v),
                            _f(ci[0]),
                            _f(ci[1]),
                            "" if ref is None else f"{ref.value / 100:.4f}",
                            "" if ref is None else ref.source,
                            e.checksum,
                            int(e.stale),
                        ]
                    )
    return buf.getvalue()


def _f(x) -> str:
    return "" if x is None else repr(float(x))


MANIFEST = ".written"  # in --out: what leaderboards wrote there, with digests
_FORMAT = 2  # the manifest's layout: {"format": 2, "files": {name: digest or [digests]}}


def _manifest(out: Path) -> tuple[dict[str, set[str]], bool]:
    """The files leaderboards wrote under `out`, each with the digests it may hold (empty
    when none are listed), and whether the list is an earlier version's: a flat
    {name: digest} that partial runs did not keep up to date."""
    import json

    try:
        doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, False
    if not isinstance(doc, dict):
        return {}, False
    if doc.get("format") != _FORMAT:
        return {str(k): {str(v)} for k, v in doc.items()}, True
    files = doc.get("files") if isinstance(doc.get("files"), dict) else {}
    return {str(k): set(v if isinstance(v, list) else [v]) for k, v in files.items()}, False


def _write_manifest(out: Path, files: dict[str, set[str]]) -> None:
    import json

    from harness.core.files import write_text_atomic

    listed = {k: min(v) if len(v) == 1 else sorted(v) for k, v in sorted(files.items())}
    doc = {"format": _FORMAT, "files": listed}
    write_text_atomic(out / MANIFEST, json.dumps(doc, indent=0, sort_keys=True) + "\n")


def _check_ours(
    out: Path, new: dict[str, str], listed: dict[str, set[str]], earlier: bool
) -> dict[str, set[str]]:
    """Refuse to replace a file under `out` that no leaderboard wrote, or that was edited
    since (its digest is not listed), unless it already holds the new bytes; a file an
    earlier version listed (whose partial runs did not list theirs) is taken, with a note.
    Returns the list to write before anything moves: every digest each file may hold while
    the files are moved in (an interrupted run leaves nothing the next one refuses).
    `listed`, `earlier`: the manifest as `_manifest` read it; `new`: name -> new digest."""
    pending = {k: set(v) for k, v in listed.items()}
    taken = []
    for name, digest in new.items():
        final = out / name
        if final.exists() or final.is_symlink():
            held = sha256_of(final) if final.is_file() and not final.is_symlink() else None
            if held is None or held not in (listed.get(name, set()) | {digest}):
                if held is None or not earlier:
                    raise HarnessError(
                        f"{final} was not written by a leaderboard, or was edited since; move "
                        "it away, or give another --out (nothing was written)"
                    )
                taken.append(name)
            pending.setdefault(name, set()).add(held)
        pending.setdefault(name, set()).add(digest)
    if taken:
        log.info(
            f"{len(taken)} file(s) under {out} an earlier version's leaderboard did not list "
            f"are replaced ({', '.join(taken[:5])}{', ...' if len(taken) > 5 else ''}); from now "
            "on a file edited there is kept"
        )
    return pending


def _forget_earlier(
    out: Path,
    files: list[Path],
    full: bool,
    before: dict[str, set[str]] | None = None,
    digests: dict[str, str] | None = None,
) -> None:
    """List this run's files in the manifest (a partial run, --table or --format, adds them
    to what is listed). After a full leaderboard (every table, every format), remove what
    the previous one wrote under `out` and this one did not (the tables of a corpus no longer
    shown): only a file `before` (the list as the run found it) names, still holding what was
    written (a file the user replaced or added is never touched), inside `out` and not
    through a link. `digests`: name -> digest of `files`, when the caller has them."""
    before = _manifest(out)[0] if before is None else before
    names = [f.relative_to(out).as_posix() for f in files]
    digests = digests or {n: sha256_of(f) for n, f in zip(names, files)}
    now = {n: {digests[n]} for n in names}
    _write_manifest(out, now if full else {**before, **now})
    if not full:
        return
    root, written = out.resolve(), {(f.stat().st_dev, f.stat().st_ino) for f in files}
    gone = []
    for name in sorted(set(before) - set(now)):
        path = out / name
        try:
            if path.is_symlink() or root not in path.resolve().parents or not path.is_file():
                continue
            if (path.stat().st_dev, path.stat().st_ino) in written:  # this run's (case folds)
                continue
            if sha256_of(path) not in before[name]:  # changed since: not ours to remove
                continue
            path.unlink()
            gone.append(name)
            if path.parent != out and not any(path.parent.iterdir()):
                path.parent.rmdir()  # an emptied plots/
        except OSError:
            continue
    if gone:
        log.info(
            f"removed {len(gone)} file(s) an earlier leaderboard wrote under {out} and this one "
            f"does not ({', '.join(gone[:5])}{', ...' if len(gone) > 5 else ''})"
        )


def write(args, board, corpora, tables) -> list[Path]:
    """Write the requested formats under --out: all of them into a staging folder beside it,
    then each moved into place. A failure (a full disk) leaves --out as it was, with no partial
    file and no staging folder."""
    import shutil
    import tempfile

    from harness.core.files import make_dirs, new_dirs, remove_empty, write_text_atomic
    from harness.report.leaderboard import render as R

    out = Path(args.out)
    made = new_dirs(out.parent)
    make_dirs(out.parent, "--out")
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    staged: list[Path] = []

    def put(name: str, text: str) -> None:
        write_text_atomic(stage / name, text)
        staged.append(stage / name)

    try:
        fmt = args.format
        for t in tables:
            if fmt in ("all", "markdown"):
                put(f"{t.key}.md", R.markdown(t, ci=getattr(args, "ci", False)))
            if fmt in ("all", "latex"):
                put(f"{t.key}.tex", R.latex(t, ci=getattr(args, "ci", False)))
            if fmt in ("all", "csv"):
                put(f"{t.key}.csv", R.csv_text(t))
        if fmt in ("all", "csv"):
            put("leaderboard.csv", long_csv(board, corpora))
        if fmt in ("all", "html"):
            from harness.report.leaderboard.html import page
            from harness.report.leaderboard.plots import all_plots

            plots = all_plots(board, corpora, stage / "plots", args.k)
            staged += plots
            put("index.html", page(board, corpora, tables, plots))
        before, earlier = _manifest(out)
        new = {p.relative_to(stage).as_posix(): sha256_of(p) for p in staged}
        pending = _check_ours(out, new, before, earlier)
        make_dirs(out, "--out")
        _write_manifest(out, pending)  # before any file moves in
        files = []
        for path in staged:
            final = out / path.relative_to(stage)
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, final)
            files.append(final)
        _forget_earlier(out, files, fmt == "all" and args.table == "all", before, new)
        return files
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        remove_empty(made)  # the parents --out needed, if nothing went in
