"""How a run tells of semantic strata it does not have: never built, a hint that report=full
prints; built for other settings only (strata.resolution=2 where γ = 1 was built), a note that
every report prints, fresh or shown from disk. Run in this process (harness.cli.main)."""

from __future__ import annotations

import pytest

from harness.cli.main import main

HINT = "no semantic strata for 'demo' yet; build them once with: python -m harness.stratify"


def _cli(capsys, *args: str) -> tuple[str, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["run", "stats.bootstrap=0", *args])
    out = capsys.readouterr()
    assert stop.value.code == 0, out.err
    return out.out, out.err


def test_strata_never_built_and_built_for_other_settings(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out, err = _cli(capsys)
    assert "semantic strata" not in out + err  # the short report leaves the hint out
    out, _ = _cli(capsys, "report=full")
    assert f"({HINT} corpus=demo)" in out
    # strata built at γ = 1 (only the file's name is looked at); runs at γ = 2
    built = tmp_path / "results" / "strata" / "demo" / "offline_minilm_g1.json"
    built.parent.mkdir(parents=True)
    built.write_text("{}", encoding="utf-8")
    built.with_suffix(".report.json").write_text("{}", encoding="utf-8")  # not a strata file
    note = (
        "note: no semantic strata for 'demo' with these settings (offline_minilm_g2.json); "
        "results/strata/demo holds offline_minilm_g1.json; build them with: python -m "
        "harness.stratify corpus=demo strata.resolution=2"
    )
    for force in ("false", "true"):  # shown from disk, then computed again
        out, err = _cli(capsys, "strata.resolution=2", f"force={force}")
        assert ("is up to date" in err) is (force == "false")
        assert note in err.splitlines(), err
        assert HINT not in out
