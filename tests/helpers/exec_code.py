"""`python -m tests.helpers.exec_code CODE`: run CODE in a fresh interpreter (for tests of
import-time state, which the test process itself has already changed)."""

import sys

if __name__ == "__main__":
    exec(compile(sys.argv[1], "<test code>", "exec"), {"__name__": "__test__"})
