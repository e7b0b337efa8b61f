"""`python -m harness.stratify`: see harness.cli.stratify (this module only starts it)."""

import sys

from harness.cli.stratify import main

if __name__ == "__main__":
    sys.exit(main())
