"""compare's settings are checked once, for the command line and the API alike."""

import math
import re

import pytest

from harness.cli.compare import _options, _parser
from harness.core.errors import ConfigError, HarnessError
from harness.report.compare import Options, check_options

GOOD = dict(metrics=None, max_drop=1.0, alpha=0.05, min_queries=30, permutations=10, bootstrap=0,
            seed=0)  # fmt: skip


@pytest.mark.parametrize(
    "key, value, says",
    [
        ("alpha", 1.0, "must be between 0 and 1"),
        ("max_drop", math.inf, "must be a finite number >= 0 points"),
        ("max_drop", math.nan, "must be a finite number >= 0 points"),
        ("min_queries", 0, "must be an integer >= 1"),
        ("seed", -1, "must be an integer >= 0"),
        ("permutations", 0, "must be an integer in [1, 1000000]"),
        ("bootstrap", -1, "must be an integer in [0, 1000000] (0: no CIs;"),
        ("bootstrap", 10**7, "must be an integer in [0, 1000000]"),
        ("bootstrap", 1, "is 1: a 95% interval needs at least 40 resamples"),
        ("bootstrap", 39, "is 39: a 95% interval needs at least 40 resamples"),
    ],
)
def test_the_api_and_the_command_line_refuse_the_same_settings(key, value, says):
    opts = Options(**{**GOOD, key: value})
    with pytest.raises(ConfigError, match=rf"^{key} {re.escape(says)}"):
        check_options(opts)
    flag = "--" + key.replace("_", "-")
    with pytest.raises(ConfigError, match=rf"^{flag} {re.escape(says)}"):
        _options(_parser().parse_args(["a", "b", flag, str(value)]))


def test_bootstrap_zero_is_no_ci_on_both_roads():
    assert check_options(Options(**GOOD)).bootstrap == 0
    assert check_options(Options(**{**GOOD, "bootstrap": 40})).bootstrap == 40
    assert _options(_parser().parse_args(["a", "b", "--bootstrap", "0"])).bootstrap == 0


def test_metrics_as_one_string_are_comma_separated_names_as_on_the_command_line():
    opts = check_options(Options(**{**GOOD, "metrics": "coverage@10, perfrecall@10"}))
    assert opts.metrics == ["coverage@10", "perfrecall@10"]
    cli = _options(_parser().parse_args(["a", "b", "--metric", "coverage@10, perfrecall@10"]))
    assert cli.metrics == opts.metrics


def test_winrate_resamples_are_checked_on_every_run():
    with pytest.raises(ConfigError, match=r"^--resamples must be an integer >= 1, got 0$"):
        _options(_parser().parse_args(["a", "b", "--resamples", "0"]))


def test_numpy_numbers_are_settings_too():
    import numpy as np

    opts = Options(**{**GOOD, "alpha": np.float32(0.05), "seed": np.int64(3)})
    assert check_options(opts).seed == 3


def test_out_replaces_only_a_report_compare_wrote(tmp_path):
    from harness.cli.compare import _write_report

    out = tmp_path / "report.md"
    out.touch()  # an empty file (mktemp): taken
    _write_report(str(out), "# Retrieval comparison: demo\n\nfirst\n")
    _write_report(str(out), "# Win rate of a over b: demo\n\nsecond\n")  # its own: replaced
    assert out.read_text().endswith("second\n")
    out.write_text("my notes\n")
    with pytest.raises(HarnessError, match="exists and is not a report compare wrote"):
        _write_report(str(out), "# Retrieval comparison: demo\n")
    assert out.read_text() == "my notes\n"
