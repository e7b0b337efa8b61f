"""Hydra configuration tree; installed as ``harness.conf``."""
