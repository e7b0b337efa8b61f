"""`python -m harness.trec_eval` (and `harness trec_eval`): trec_eval 10.0's command line,
printing what trec_eval prints (metrics.trec_eval computes). Files are read as
trec_eval reads them: white space between fields, `#` comment lines, fields after a run
line's tag ignored; a document listed twice for one query in the run or the qrels is an
error, as it is there."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.cli.common import ArgumentParser, command
from harness.core.errors import BenchmarkError, HarnessError
from harness.core.files import missing


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="python -m harness.trec_eval",
        description="Evaluate a TREC run against TREC qrels as trec_eval 10.0 does, with the "
        "same output (measure, query, value); without -m, trec_eval's official measures.",
        epilog="Example: python -m harness.trec_eval -q -m ndcg_cut.10 -m map qrels.txt run.trec",
    )
    p.add_argument("-q", action="store_true", help="also print each query's values")
    p.add_argument(
        "-c",
        action="store_true",
        help="score every query of the qrels: one the run lacks as an empty ranking",
    )
    p.add_argument("-n", action="store_true", help="no summary (the 'all' lines)")
    p.add_argument("-M", type=int, metavar="N", help="read at most N documents per query")
    p.add_argument("-l", type=int, default=1, metavar="N", help="lowest relevant grade (1)")
    p.add_argument("-J", action="store_true", help="score only the judged documents")
    p.add_argument(
        "-N", type=int, default=0, metavar="N", help="documents in the collection (utility)"
    )
    p.add_argument(
        "--v9",
        action="store_true",
        help="trec_eval 9.0.8's rules (pytrec_eval's): iprec_at_recall's cut-off "
        "(long)(p*R + 0.9), queries the run lacks left out",
    )
    p.add_argument(
        "-m",
        action="append",
        default=[],
        metavar="MEASURE",
        help="a measure, with parameters as trec_eval takes them (P.5,10); repeatable; "
        "nicknames: official (the default), set, all_trec",
    )
    p.add_argument("qrels", type=Path, help="TREC qrels: qid iter docno rel")
    p.add_argument("run", type=Path, help="TREC run: qid Q0 docno rank score tag")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return command(_main, argv)


def _main(argv: Sequence[str] | None) -> int:
    from harness.core.run import Run
    from harness.data.beir import trec_qrels
    from metrics import trec_eval

    args = _parser().parse_args(argv)
    if args.l < 1:
        raise HarnessError(f"-l must be a grade of 1 or more, got {args.l}")
    if args.M is not None and args.M < 1:
        raise HarnessError(f"-M must be a positive number of documents, got {args.M}")
    asked = trec_eval.requested(args.m)
    try:
        qrels = trec_qrels(args.qrels)
    except BenchmarkError as exc:
        if _fields(args.qrels) >= 6 and _fields(args.run) == 4:  # a run, then qrels
            raise BenchmarkError(
                f"{exc}; {args.qrels} reads like a run and {args.run} like qrels: trec_eval "
                "takes the qrels first (harness trec_eval QRELS RUN)"
            ) from None
        raise
    if not args.run.is_file():
        raise HarnessError(missing(args.run, "run file"))
    run = Run.from_trec(args.run)
    options = trec_eval.Options(
        level=args.l,
        complete=args.c,
        max_ret=args.M,
        judged_only=args.J,
        docs_in_collection=args.N,
        version=9 if args.v9 else 10,
    )
    report = trec_eval.evaluate(qrels, run, asked, runid=_runid(args.run), options=options)
    sys.stdout.write(report.lines(queries=args.q, summary=not args.n))
    return 0


def _fields(path: Path) -> int:
    """How many fields the first line of `path` that is not blank or a comment has (0: none,
    or unreadable)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.split() and not line.startswith("#"):
                    return len(line.split())
    except OSError:
        pass
    return 0


def _runid(path: Path) -> str:
    """The tag of the run file's last line, which trec_eval reports as its runid."""
    from harness.core.run.files import GZIP

    with open(path, "rb") as f:
        packed = f.read(2) == GZIP
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - (1 << 16)))
        tail = f.read()
    if packed:  # a gzipped run: its last lines, decompressed (read whole, as the run was)
        import gzip

        with gzip.open(path, "rb") as z:
            tail = z.read()[-(1 << 16) :]
    tail = tail.decode("utf-8", "replace").splitlines()
    for line in reversed(tail):
        fields = line.split()
        if len(fields) >= 6 and not fields[0].startswith("#"):
            return fields[5]
    return ""
