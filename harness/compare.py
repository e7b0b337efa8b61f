"""`python -m harness.compare` is `harness compare` (harness.cli.compare)."""

import sys

from harness.cli.main import main

if __name__ == "__main__":
    main(["compare", *sys.argv[1:]])
