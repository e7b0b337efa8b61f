"""The Python API's implementation; import it from `harness` (harness.evaluate, ...)."""
