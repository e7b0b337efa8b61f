"""`python -m harness [VERB] ...`: see harness.cli.main (this module only starts it)."""

from harness.cli.main import main

if __name__ == "__main__":
    main()
