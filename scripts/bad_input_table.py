"""Write docs/bad-input.md: every bad input the two test campaigns try (tests/e2e/
test_bad_input.py through subprocesses, tests/e2e/test_bad_input_inprocess.py in process),
with the error line a user sees, as the tests observe it. Run it after adding a case:

    python scripts/bad_input_table.py

It runs both campaigns with HARNESS_CASE_LOG set (each passing case writes what went in and
the message it got), so a case that fails is missing from the table and the script says so."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGNS = ["tests/e2e/test_bad_input.py", "tests/e2e/test_bad_input_inprocess.py"]
ORDER = ["python -m harness", "harness", "harness run", "python -m harness.stratify",
         "harness stratify", "python -m harness.diagnose", "harness diagnose", "harness encode",
         "python -m harness.compare", "harness compare", "python -m harness.leaderboard",
         "harness leaderboard", "harness trec_eval", "harness.api"]  # fmt: skip
HEAD = """# Bad input: every case tried, and what the user sees

Each row is a case the test suite runs (`tests/e2e/test_bad_input.py` as subprocesses,
`tests/e2e/test_bad_input_inprocess.py` in process). A command case passes only with exit
status 2, exactly one `error:` line on stderr naming the offending thing, no traceback and
the working folder unchanged; an API case only when it raises a `HarnessError` subclass
with a one-line message and writes nothing. The last column is the line the test saw (cut at
{cut} characters). None of the cases is silent, a traceback or noise.

Written by `python scripts/bad_input_table.py` from the tests' own observations;
`test_the_table_in_the_docs_lists_every_case` fails when a case is missing here.

{n} cases: {counts}.

| # | entry point | case | input | what the user sees |
|---|---|---|---|---|
"""
CUT = 200


# a test's temporary folder (pytest numbers them per run): shown as <tmp> so the table is the
# same from run to run
TMP = re.compile(r"/tmp/pytest-of-[^/]+/pytest-\d+/[^/\s]+")


def _cell(text: str, cut: int) -> str:
    text = TMP.sub("<tmp>", " ".join(str(text).split()))
    if len(text) > cut:
        text = text[: cut - 1] + "…"
    return text.replace("|", "\\|").replace("`", "'")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "cases.jsonl"
        env = {**os.environ, "HARNESS_CASE_LOG": str(log)}
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CAMPAIGNS]
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
        try:
            code = proc.wait()
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    if code != 0:
        print(f"some cases failed (pytest exit {code}); they are left out", file=sys.stderr)
    rank = {e: i for i, e in enumerate(ORDER)}
    records.sort(key=lambda r: (rank.get(r["entry"], len(ORDER)), r["entry"], r["id"]))
    counts: dict[str, int] = {}
    for r in records:
        counts[r["entry"]] = counts.get(r["entry"], 0) + 1
    said = ", ".join(f"{e} {n}" for e, n in counts.items())
    lines = [HEAD.format(cut=CUT, n=len(records), counts=said)]
    for i, r in enumerate(records, start=1):
        given = " ".join(r["args"])
        if r["files"]:
            given += f" (files: {', '.join(r['files'])})"
        row = [
            str(i),
            f"`{r['entry']}`",
            f"`{r['id']}`",
            _cell(given, 100),
            _cell(r["message"], CUT),
        ]
        lines.append("| " + " | ".join(row) + " |\n")
    (ROOT / "docs" / "bad-input.md").write_text("".join(lines), encoding="utf-8")
    print(f"docs/bad-input.md: {len(records)} cases")
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
