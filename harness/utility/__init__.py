"""Retrieval utility: ΔSePer (Dai et al., ICLR 2025), the gain in a generator's belief in the
reference answers that the retrieved passages bring (docs/utility.md).

`utility_values(bench, run, ks, spec)` gives per-query values for the metric families in
FAMILIES; `UtilitySpec.from_config` checks the `utility` config section."""

from harness.utility.compute import FAMILIES, utility_values
from harness.utility.spec import ModelSpec, UtilitySpec

__all__ = ["FAMILIES", "ModelSpec", "UtilitySpec", "utility_values"]
