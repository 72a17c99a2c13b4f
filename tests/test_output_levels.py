"""Terminal output levels: without --verbose no line of `floras train` / `sweep` / `calibrate` is
longer than 200 characters; --verbose prints the full ε assumptions; warnings come once."""

from __future__ import annotations

import json

from scenarios.config import keys as keys_module
from scenarios.cli.main import main
from scenarios.cli.output import MAX_LINE

from small_scenario import small_scenario  # noqa: E402  (tests/small_scenario.py)

SWEEP = """
name = "tiny"
base = "base.toml"
seeds = [0, 1]
[overrides]
"run.rounds" = 2
[grid]
"phy.scheme" = ["floras", "ideal"]
"""


def _long_lines(*texts: str) -> list[str]:
    return [line for text in texts for line in text.splitlines() if len(line) > MAX_LINE]


def test_train_prints_one_privacy_line_and_verbose_the_assumptions(tmp_path, capsys):
    scenario = tmp_path / "small.toml"
    scenario.write_text(small_scenario(2))
    out = tmp_path / "run"
    assert main(["train", str(scenario), "--out", str(out), "--no-progress"]) == 0
    cap = capsys.readouterr()
    assert not _long_lines(cap.out, cap.err), _long_lines(cap.out, cap.err)
    privacy = [line for line in cap.out.splitlines() if line.startswith("privacy: ε = ")]
    assert len(privacy) == 1 and "threat model T1" in privacy[0] and str(out / "config.json") in privacy[0]
    assert "epsilon assumptions:" not in cap.out
    assumptions = json.loads((out / "config.json").read_text())["epsilon_assumptions"]
    assert len(assumptions) > MAX_LINE  # the file keeps everything

    assert main(["train", str(scenario), "--out", str(tmp_path / "verbose"), "--no-progress", "--verbose"]) == 0
    text = capsys.readouterr().out
    assert f"epsilon assumptions: {assumptions}" in text


def test_sweep_is_short_without_verbose_and_warns_once(tmp_path, capfd, monkeypatch):
    monkeypatch.delenv("FLORAS_SIMULATION_KEY_WARNED", raising=False)
    monkeypatch.setattr(keys_module, "_warned", False)
    (tmp_path / "base.toml").write_text(small_scenario(2))
    (tmp_path / "sweep.toml").write_text(SWEEP)
    args = ["sweep", str(tmp_path / "sweep.toml"), "--workers", "1", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    cap = capfd.readouterr()  # file descriptors: the worker process's stderr too
    assert not _long_lines(cap.out, cap.err), _long_lines(cap.out, cap.err)
    assert "4 run(s) finished" in cap.out
    assert "ε assumptions (all grid points)" not in cap.out
    assert "privacy: ε in the table above, δ 1e-05, threat model T1" in cap.out
    assert str(tmp_path / "a" / "tiny" / "summary.csv") in cap.out
    assert (cap.out + cap.err).count("simulation-only permutation key") == 1


def test_sweep_verbose_prints_the_assumptions(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FLORAS_SIMULATION_KEY_WARNED", "1")
    (tmp_path / "base.toml").write_text(small_scenario(2))
    (tmp_path / "sweep.toml").write_text(SWEEP)
    assert main(["sweep", str(tmp_path / "sweep.toml"), "--workers", "0", "--no-progress", "--verbose",
                 "--out", str(tmp_path / "v")]) == 0
    assert "ε assumptions (all grid points):" in capsys.readouterr().out


def test_calibrate_is_short_and_verbose_names_the_accountant_once(capsys):
    args = ["calibrate", "--scheme", "central-gaussian", "--target-epsilon", "8", "--rounds", "50"]
    assert main(args) == 0
    cap = capsys.readouterr()
    assert not _long_lines(cap.out, cap.err), _long_lines(cap.out, cap.err)
    assert len(cap.out.splitlines()) == 2 and "accountant rdp" in cap.out
    assert main([*args, "--verbose"]) == 0
    text = capsys.readouterr().out
    assert "  - " in text and "neighbouring relation" in text
    assert sum(line.lstrip(" -").startswith("accountant:") for line in text.splitlines()) == 1
    assert sum(line.lstrip(" -").startswith("threat model:") for line in text.splitlines()) == 1
