"""`python -m harness.diagnose`: see harness.cli.diagnose (this module only starts it)."""

import sys

from harness.cli.diagnose import main

if __name__ == "__main__":
    sys.exit(main())
