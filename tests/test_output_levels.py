"""Terminal output levels: without --verbose no line of `floras train` / `sweep` / `calibrate` is
longer than 200 characters; --verbose prints the full ε assumptions; warnings come once."""

from __future__ import annotations

import json
import re
import time

import pytest

from scenarios.config import keys as keys_module
from scenarios.cli.main import main
from scenarios.cli.output import MAX_LINE

from small_scenario import small_scenario  # noqa: E402  (tests/small_scenario.py)
from test_matched import mini_sweep, narrow_floras_range, rigged_runner  # noqa: E402, F401  (tests/test_matched.py)

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
    began = time.perf_counter()
    assert main(["train", str(scenario), "--out", str(out), "--no-progress"]) == 0
    command_s = time.perf_counter() - began
    cap = capsys.readouterr()
    assert not _long_lines(cap.out, cap.err), _long_lines(cap.out, cap.err)
    # units: accuracy in percent with one decimal on the terminal, the fraction in metrics.csv
    last = (out / "metrics.csv").read_text().strip().splitlines()
    fraction = float(dict(zip(last[0].split(","), last[-1].split(",")))["test_accuracy"])
    assert 0.0 <= fraction <= 1.0 and f"test accuracy {100 * fraction:.1f} %" in cap.out
    # time: the whole command (this process started before it), split into parts that add up
    (line,) = [x for x in cap.out.splitlines() if x.startswith("time: ")]
    numbers = [float(v) for v in re.findall(r"([0-9]+\.[0-9]) s", line)]
    total, parts = numbers[0], numbers[1:]
    assert total >= command_s - 0.05 and len(parts) == 4 and sum(parts) == pytest.approx(total, abs=0.25)
    timing = json.loads((out / "config.json").read_text())["timing"]
    assert parts[1] == pytest.approx(timing["setup_s"], abs=0.051) and parts[2] == pytest.approx(timing["tracing_s"], abs=0.051)
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


def test_tune_prints_the_predicted_time_first_and_the_next_command_last(tmp_path, capsys, narrow_floras_range):
    """The mini matched sweep (digits, K = 20 of M = 100, B = 10; cases floras-none and ideal) tuned over
    η ∈ {0.03, 0.3} with seeds 0, 1 at 2 rounds: 2 cases × 2 η × 2 seeds = 8 runs, each predicted at the
    timing table's digits overhead + 2 rounds × its scheme's seconds per round (model-independent numbers
    read from the table, not from the code under test), spread over 2 workers plus one worker start."""
    import shlex

    from scenarios.cli import tune
    from scenarios.experiments.matched_timing import MEASURED_LOAD, RUN_OVERHEAD_S, SECONDS_PER_ROUND, WORKER_START_S

    sweep_file = str(mini_sweep(tmp_path))
    from scenarios.cli.main import build_parser

    args = build_parser().parse_args(["tune", sweep_file, "--workers", "0", "--out", str(tmp_path / "res"), "--no-progress",
                                      "--lr-grid", "0.03,0.3", "--tune-rounds", "2", "--tune-seeds", "0,1",
                                      "--validation-fraction", "0.2"])
    per_run = {s: RUN_OVERHEAD_S["digits"] + 2 * SECONDS_PER_ROUND["digits"][s] for s in ("floras", "ideal")}
    total = 4 * per_run["floras"] + 4 * per_run["ideal"]
    # --workers 0 runs in this process (the fake runner): the prediction is for one worker
    assert tune.run(args, runner=rigged_runner) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == (f"floras tune: predicted {total:.0f} s of run time, about {total + WORKER_START_S:.0f} s wall "
                        f"on 1 worker(s) (timing table at load {MEASURED_LOAD})")
    record = tmp_path / "res" / "matched_tune" / "tune.json"
    assert record.is_file()
    assert lines[-1] == "next: " + " ".join(shlex.quote(p) for p in ["floras", "matched", sweep_file, "--out",
                                                                      str(tmp_path / "res"), "--tuned", str(record)])
    from scenarios.experiments.sweep_file import load_sweep
    from scenarios.experiments.tune import tune_sweep

    grid, _ = tune_sweep(load_sweep(sweep_file), lr_grid=[0.03, 0.3], at_epsilon=8, at_snr_db=20.0, seeds=(0, 1), rounds=2)
    assert tune.predicted_seconds(grid, workers=2) == (pytest.approx(total), pytest.approx(total / 2 + WORKER_START_S), 0)
