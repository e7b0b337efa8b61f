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


def test_a_long_part_still_gets_a_line_every_interval(monkeypatch, caplog):
    """One part (a cache shard) outlasting the interval: the heartbeat says the work is
    alive and how long the current part has been running, without any update."""
    import threading

    monkeypatch.setenv("HARNESS_PROGRESS_S", "0.05")
    caplog.set_level(logging.INFO, logger="harness")
    seen = threading.Event()

    class Watch(logging.Handler):
        def emit(self, record):
            if "the current part running for" in record.getMessage():
                seen.set()

    watch = Watch()
    logging.getLogger("harness").addHandler(watch)
    try:
        with Progress(4, "encoding corpus", "text") as bar:
            bar.update(1)
            assert seen.wait(60)  # a generous bound: a heartbeat comes while nothing updates
    finally:
        logging.getLogger("harness").removeHandler(watch)
    beat = next(r.getMessage() for r in caplog.records if "current part" in r.getMessage())
    assert beat.startswith("encoding corpus: 1/4 texts (25%)")
    assert bar._beat is None  # the heartbeat thread ended with the work


def test_an_interval_that_is_not_a_number_is_said(monkeypatch, caplog):
    monkeypatch.setenv("HARNESS_PROGRESS_S", "abc")
    caplog.set_level(logging.INFO, logger="harness")
    with Progress(5, "x") as bar:
        assert bar.interval == 30.0
    assert [r.getMessage() for r in caplog.records] == [
        "HARNESS_PROGRESS_S='abc' is not a number of seconds; a line every 30 s"
    ]
