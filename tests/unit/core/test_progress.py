"""Progress where no terminal watches: note lines at the interval, with rate and ETA."""

import logging

from harness.core.progress import Progress


def test_log_lines_off_a_terminal(monkeypatch, caplog):
    monkeypatch.setenv("HARNESS_PROGRESS_S", "0")
    caplog.set_level(logging.INFO, logger="harness")
    with Progress(3, "encoding demo", "text") as bar:
        bar.update(1)
        bar.update(1)
        bar.update(1)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("encoding demo: 1/3 texts (33%), ") and "ETA" in lines[0]
    assert lines[-1].startswith("encoding demo: 3/3 texts (100%)") and "took" in lines[-1]
    assert len(lines) == 3  # two under way, one at the end


def test_quiet_within_the_interval(monkeypatch, caplog):
    monkeypatch.setenv("HARNESS_PROGRESS_S", "3600")
    caplog.set_level(logging.INFO, logger="harness")
    with Progress(5, "x") as bar:
        bar.update(5)
    assert caplog.records == []


def test_disabled_and_empty_say_nothing(monkeypatch, caplog):
    monkeypatch.setenv("HARNESS_PROGRESS_S", "0")
    caplog.set_level(logging.INFO, logger="harness")
    with Progress(5, "x", enabled=False) as bar:
        bar.update(2)
    with Progress(0, "y") as bar:
        pass
    assert caplog.records == []
