"""`python -m harness.diagnose`: see harness.cli.diagnose (this module only starts it)."""

from harness.cli.diagnose import main

if __name__ == "__main__":
    raise SystemExit(main())
