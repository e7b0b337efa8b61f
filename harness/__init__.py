"""Retrieval evaluation harness: redundancy-aware and trec_eval metrics, stratified reports."""

__version__ = "0.1.0"

import warnings as _warnings

# conf/hydra/launcher/{joblib,submitit_*}.yaml spell out the launcher plugins' settings under
# the plugins' own names (so `hydra/launcher=joblib` picks ours); Hydra 1.3 then warns on
# every job that the file matches a ConfigStore schema of the same name. It is intended.
_warnings.filterwarnings(
    "ignore", message=r"\s*'hydra/launcher/\w+' is validated against ConfigStore schema"
)
