"""An encoder object wrapped for dense retrieval: its settings are checked, not taken for true."""

import pytest

from harness.core.errors import ConfigError
from retrievers.object_encoder import ObjectEncoder


class _Enc:
    def encode(self, texts):
        return [[1.0, 0.0] for _ in texts]


@pytest.mark.parametrize("bad", ["sometimes", 1, None])
def test_normalize_must_be_true_or_false(bad):
    with pytest.raises(ConfigError, match=f"normalize must be true or false, got {bad!r}"):
        ObjectEncoder(_Enc(), name="e", normalize=bad)
    assert ObjectEncoder(_Enc(), name="e", normalize=False).normalize is False
