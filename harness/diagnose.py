"""`python -m harness.diagnose` is `harness diagnose` (harness.cli.diagnose)."""

import sys

from harness.cli.main import main

if __name__ == "__main__":
    main(["diagnose", *sys.argv[1:]])
