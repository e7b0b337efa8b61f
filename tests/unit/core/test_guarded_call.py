"""A plug-in's exception as one error line naming what was called."""

from functools import partial

import pytest

from harness.core.errors import HarnessError, guarded_call


class Plug:
    def encode(self, texts):
        raise ValueError("first\nsecond")

    @classmethod
    def build(cls, texts):
        raise RuntimeError()


def _boom(texts, size):
    raise KeyError(texts)


@pytest.mark.parametrize(
    "method, says",
    [
        (Plug().encode, "the encoder (Plug.encode) failed: ValueError: first second"),
        (Plug.build, "the encoder (Plug.build) failed: RuntimeError"),
        (partial(_boom, size=8), "the encoder (partial) failed: KeyError: 'x'"),
        (_boom, "the encoder (_boom) failed: TypeError"),
    ],
)
def test_the_line_names_the_callable_and_the_exception(method, says):
    with pytest.raises(HarnessError) as got:
        guarded_call("the encoder", method, "x")
    assert str(got.value).startswith(says) and "\n" not in str(got.value)
    assert got.value.__cause__ is not None  # the original stays chained
