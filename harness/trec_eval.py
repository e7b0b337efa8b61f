"""`python -m harness.trec_eval` is `harness trec_eval` (harness.cli.trec_eval)."""

import sys

from harness.cli.main import main

if __name__ == "__main__":
    main(["trec_eval", *sys.argv[1:]])
