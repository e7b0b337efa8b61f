"""`python -m harness.compare`: see harness.cli.compare (this module only starts it)."""

from harness.cli.compare import main

if __name__ == "__main__":
    raise SystemExit(main())
