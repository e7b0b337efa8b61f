"""`python -m harness.stratify` is `harness stratify` (harness.cli.stratify)."""

import sys

from harness.cli.main import main

if __name__ == "__main__":
    main(["stratify", *sys.argv[1:]])
