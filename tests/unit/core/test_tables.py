"""The one table renderer: a cell with a line break or a pipe stays within its row."""

from harness.core.tables import markdown, text


def test_a_line_break_in_a_label_stays_on_its_row():
    assert text(["topic", "n"], [["tax\nfinance", "3"]]) == [
        "topic        n",
        "-----------  -",
        "tax finance  3",
    ]
    lines = markdown(["a\r\nb", "n"], [["x|\ny", "1"]])
    assert lines == ["| a b   | n |", "|:------|--:|", "| x\\| y | 1 |"]
