"""Identical runs across the sweeps of one invocation run once and are copied (scenarios/experiments/identical.py).

Two small sweeps share their 0 dB grid points (same overrides, so the same resolved
configuration and seed). The fake runner counts its calls: every distinct configuration must
run exactly once, the copies must hold the source's files byte for byte and say where they came
from, a rerun must do nothing, and a failing source must fail its copies (retried on a rerun).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from test_sweep import BASE, FakeRunner, fake_loader

from scenarios.experiments.sweep import load_sweep, run_sweep


class Cfg(dict):
    """A loader result that, like the real Scenario, has ``to_dict`` (so it can be compared)."""

    def to_dict(self) -> dict:
        return dict(self)


def loader(base: Path, overrides: dict) -> Cfg:
    return Cfg(fake_loader(base, overrides))


def sweep_text(name: str, snrs: list[int]) -> str:
    return f'''
name = "{name}"
base = "base.toml"
seeds = [0, 1]
[overrides]
"run.rounds" = 3
[grid]
"phy.snr_db" = {snrs}
'''


def two_sweeps(tmp_path: Path):
    (tmp_path / "base.toml").write_text(BASE)
    (tmp_path / "a.toml").write_text(sweep_text("a", [15, 0]))
    (tmp_path / "b.toml").write_text(sweep_text("b", [0, 5]))
    root = tmp_path / "out"
    return [(load_sweep(tmp_path / "a.toml"), root / "a"), (load_sweep(tmp_path / "b.toml"), root / "b")], root


def _files(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run_dir.iterdir()) if p.name != "sweep_run.json"}


def test_identical_points_of_two_sweeps_run_once_and_are_copied(tmp_path):
    jobs, root = two_sweeps(tmp_path)
    runner = FakeRunner()
    lines: list[str] = []
    outcomes = run_sweep(jobs, runner=runner, loader=loader, progress=False, echo=lines.append)
    # 4 distinct SNR values × 2 seeds minus the shared 0 dB: 3 SNRs × 2 seeds = 6 runs, 2 copies
    assert len(runner.calls) == 6
    assert sorted(o.status for o in outcomes) == ["copied"] * 2 + ["done"] * 6
    assert any("2 run(s) identical to another run" in line for line in lines)
    for seed in (0, 1):
        src = root / "a" / jobs[0][0].run_name(jobs[0][0].points[1], seed)  # a: 0 dB
        dst = root / "b" / jobs[1][0].run_name(jobs[1][0].points[0], seed)  # b: 0 dB
        assert _files(dst) == _files(src) and (dst / "DONE").is_file()
        record = json.loads((dst / "sweep_run.json").read_text())
        assert record["sweep"] == "b" and record["seed"] == seed and record["copied_from"] == f"a/{src.name}"
    assert not list(root.glob("*/.*.partial"))
    again = FakeRunner()
    assert {o.status for o in run_sweep(jobs, runner=again, loader=loader, progress=False, echo=None)} == {"skipped"}
    assert again.calls == []


def test_a_finished_identical_run_is_copied_without_running(tmp_path):
    jobs, root = two_sweeps(tmp_path)
    run_sweep(jobs[:1], runner=FakeRunner(), loader=loader, progress=False, echo=None)  # sweep a alone
    runner = FakeRunner()
    outcomes = run_sweep(jobs, runner=runner, loader=loader, progress=False, echo=None)
    assert len(runner.calls) == 2  # only b's 5 dB points; its 0 dB points are copied from a
    assert sorted(o.status for o in outcomes) == ["copied"] * 2 + ["done"] * 2 + ["skipped"] * 4


def test_a_failing_source_fails_its_copies_and_a_rerun_retries(tmp_path):
    jobs, root = two_sweeps(tmp_path)
    failing = FakeRunner(fail_when=lambda cfg: cfg["phy.snr_db"] == 0)
    outcomes = run_sweep(jobs, runner=failing, loader=loader, progress=False, echo=None)
    failed = [o for o in outcomes if o.status == "failed"]
    assert len(failed) == 4 and sum(o.error["type"] == "IdenticalRunFailed" for o in failed) == 2
    assert len(failing.calls) == 6  # the two 0 dB sources ran (and failed); their copies did not run
    retry = FakeRunner()
    outcomes = run_sweep(jobs, runner=retry, loader=loader, progress=False, echo=None)
    assert len(retry.calls) == 2 and sorted(o.status for o in outcomes).count("copied") == 2


def test_configurations_without_to_dict_are_never_merged(tmp_path):
    jobs, root = two_sweeps(tmp_path)
    runner = FakeRunner()
    run_sweep(jobs, runner=runner, loader=fake_loader, progress=False, echo=None)  # plain dicts: no identity
    assert len(runner.calls) == 8


def test_the_seed_is_part_of_the_identity(tmp_path):
    jobs, root = two_sweeps(tmp_path)
    jobs = [(jobs[0][0], jobs[0][1]), (replace(jobs[1][0], seeds=(2,)), jobs[1][1])]
    runner = FakeRunner()
    outcomes = run_sweep(jobs, runner=runner, loader=loader, progress=False, echo=None)
    assert len(runner.calls) == 6 and "copied" not in {o.status for o in outcomes}
