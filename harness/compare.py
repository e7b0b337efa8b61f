"""`python -m harness.compare`: see harness.cli.compare (this module only starts it)."""

import sys

from harness.cli.compare import main

if __name__ == "__main__":
    sys.exit(main())
