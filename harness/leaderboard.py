"""`python -m harness.leaderboard`: see harness.cli.leaderboard (this module only starts it)."""

from harness.cli.leaderboard import main

if __name__ == "__main__":
    raise SystemExit(main())
