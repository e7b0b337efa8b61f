"""Benchmark data shipped with the package (the offline ``demo`` benchmark)."""
