"""`python -m harness.encode`: see harness.cli.encode (this module only starts it)."""

from harness.cli.encode import main

if __name__ == "__main__":
    main()
