"""`python -m harness.stratify`: see harness.cli.stratify (this module only starts it)."""

from harness.cli.stratify import main

if __name__ == "__main__":
    raise SystemExit(main())
