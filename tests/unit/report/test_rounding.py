"""One mean summed in two orders differs in its last bit (0.53125 and 0.5312500000000001);
every renderer prints both the same, not 53.12 beside 53.13: the terminal table and the
population estimate, the leaderboard's Markdown, LaTeX and HTML numbers and intervals."""

from harness.report.leaderboard.html import _cell
from harness.report.leaderboard.render import interval, number
from harness.report.leaderboard.tables import Value
from harness.report.semantic import _population_lines
from harness.report.terminal import display

EXACT = 0.53125  # 17/32: 53.125 % rounds half to even, to 53.12
SUMMED = 0.5312500000000001  # the same mean, weighted and summed over clusters


def test_the_terminal_prints_both_the_same():
    assert display("coverage@10", EXACT) == display("coverage@10", SUMMED) == "53.12"
    assert display("coverage@10", EXACT - SUMMED, signed=True) == "+0.00"  # not -0.00
    assert display("coverage@10", -0.00004, signed=True) == "+0.00"
    assert display("coverage@10", -0.00006, signed=True) == "-0.01"


def test_the_population_estimate_matches_the_plain_mean():
    estimate = {
        "plain": EXACT, "weighted": SUMMED, "bounds": [SUMMED, SUMMED], "uncovered": 0.0,
        "bias": EXACT - SUMMED,
    }  # fmt: skip
    pop = {"n_clusters_with_mass": 3, "estimate": {"coverage@10": estimate}}
    row = _population_lines({"population": pop}, ["coverage@10"])[-1].split()
    assert row == ["coverage@10", "53.12", "53.12", "53.12–53.12", "0.0%", "+0.00"]


def test_the_leaderboard_prints_both_the_same():
    exact, summed = (
        Value(100 * EXACT, ci=(12.25, 60.0)),
        Value(100 * SUMMED, ci=(12.250000000000002, 60.0)),
    )
    assert number(exact) == number(summed) == "53.12"
    assert interval(exact) == interval(summed) == "[12.2, 60.0]"
    assert interval(summed, "--") == "12.2--60.0"
    assert (
        _cell(summed)
        == _cell(exact)
        == ('<td class="num">53.12 <span class="ci">[12.2, 60.0]</span></td>')
    )
