"""`python -m harness.leaderboard` is `harness leaderboard` (harness.cli.leaderboard)."""

import sys

from harness.cli.main import main

if __name__ == "__main__":
    main(["leaderboard", *sys.argv[1:]])
