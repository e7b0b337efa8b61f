"""`python -m harness ...`: see harness.cli.run (this module only starts it)."""

from harness.cli.run import main

if __name__ == "__main__":
    main()
