"""`python -m harness.encode` is `harness encode` (harness.cli.encode)."""

import sys

from harness.cli.main import main

if __name__ == "__main__":
    main(["encode", *sys.argv[1:]])
