"""Metric families: group (RARE) metrics, and the registry that parses metric names."""
