"""`python -m harness.trec_eval`: see harness.cli.trec_eval (this module only starts it)."""

from harness.cli.trec_eval import main

if __name__ == "__main__":
    raise SystemExit(main())
