"""Bad input to ``floras sweep`` / ``floras matched`` refused in one line before any work: too many
runs, two sweep files with one name, a ``--tuned`` record of the wrong shape, an ``--out`` that is
a file or lies inside the simulator's own source folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.cli.main import main
from test_matched import ci_sweep
from test_sweep_safety import REAL_BASE

pytestmark = pytest.mark.faults
SOURCE = Path(__file__).resolve().parents[1] / "scenarios"


def _sweep(tmp_path: Path, name: str = "one", file: str = "s.toml", seeds: str = "[0]") -> Path:
    (tmp_path / "base.toml").write_text(REAL_BASE)
    path = tmp_path / file
    path.write_text(f'name = "{name}"\nbase = "base.toml"\nseeds = {seeds}\n[grid]\n"phy.snr_db" = [0, 10, 20]\n')
    return path


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_a_sweep_over_the_run_limit_is_refused_naming_the_count(tmp_path, capsys):
    path = _sweep(tmp_path, seeds="[0, 1, 2, 3]")  # 3 points × 4 seeds = 12 runs
    rc = main(["sweep", str(path), "--out", str(tmp_path / "res"), "--workers", "0", "--no-progress", "--max-runs", "10"])
    msg = _error(capsys)
    assert rc == 2 and "hold 12 runs (one 12), more than --max-runs 10" in msg and "--max-runs 12" in msg
    assert not (tmp_path / "res").exists()
    assert main(["sweep", str(path), "--out", str(tmp_path / "res"), "--max-runs", "0"]) == 2
    assert "--max-runs must be an integer ≥ 1" in _error(capsys)
    assert main(["sweep", str(path), "--out", str(tmp_path / "res"), "--no-workers-timeout", "nan"]) == 2
    assert "no-workers-timeout must be a finite number of seconds > 0" in _error(capsys)


def test_two_sweep_files_with_one_name_are_refused_naming_both(tmp_path, capsys):
    a = _sweep(tmp_path, file="a.toml")
    b = _sweep(tmp_path, file="b.toml")
    rc = main(["sweep", str(a), str(b), "--out", str(tmp_path / "res"), "--workers", "0", "--no-progress"])
    msg = _error(capsys)
    assert rc == 2 and f"sweep files {a} and {b} both have name = 'one'" in msg and "<out>/one" in msg
    assert not (tmp_path / "res").exists()
    m = ci_sweep(tmp_path)
    m2 = tmp_path / "ci2.toml"
    m2.write_text(m.read_text())
    assert main(["matched", str(m), str(m2), "--predict-only", "--workers", "0"]) == 2
    assert f"sweep files {m} and {m2} both have name = 'matched'" in _error(capsys)


@pytest.mark.parametrize("record, found", [
    ([1, 2], "a JSON list, not an object"),
    ({"sweep": "x", "lr": 0.1}, "keys ['lr', 'sweep']"),
    ({"choices": [0.1]}, "'choices' of type list"),
    ({"choices": {"floras": 0.1}}, "choices['floras'] = a float"),
    ({"choices": {"floras": {"eta": 0.1}}}, "choices['floras'] = an object with keys ['eta']"),
    ({"choices": {"floras": {"lr": "fast"}}}, "choices['floras']['lr'] = 'fast', not a finite number > 0"),
])
def test_a_tuned_record_of_the_wrong_shape_is_refused_in_one_line(tmp_path, capsys, record, found):
    bad = tmp_path / "tune.json"
    bad.write_text(json.dumps(record))
    rc = main(["matched", str(tmp_path / "never-read.toml"), "--tuned", str(bad), "--predict-only"])
    msg = _error(capsys)
    assert rc == 2 and msg.startswith(f"floras: error: --tuned {bad} must hold an object with 'choices'")
    assert msg.endswith("found " + found)


def test_an_out_that_is_a_file_or_inside_the_source_folder_is_refused(tmp_path, capsys):
    path = _sweep(tmp_path)
    (tmp_path / "afile").write_text("x")
    rc = main(["sweep", str(path), "--out", str(tmp_path / "afile"), "--workers", "0", "--no-progress"])
    msg = _error(capsys)
    assert rc == 4 and f"{tmp_path / 'afile'} exists and is not a directory" in msg
    assert (tmp_path / "afile").read_text() == "x"
    before = sorted(p.name for p in SOURCE.iterdir())
    sneaky = str(tmp_path / ".." / Path(*[".."] * len(tmp_path.parts)) / SOURCE.relative_to("/") / "config" / "..")
    rc = main(["sweep", str(path), "--out", sneaky, "--workers", "0", "--no-progress"])
    msg = _error(capsys)
    assert rc == 4 and "inside the simulator's own source folder" in msg and str(SOURCE) in msg
    rc = main(["matched", str(ci_sweep(tmp_path)), "--out", str(SOURCE), "--workers", "0", "--no-progress"])
    assert rc == 4 and "inside the simulator's own source folder" in _error(capsys)
    link = tmp_path / "link"
    link.symlink_to(SOURCE)
    rc = main(["figures", "--results", str(tmp_path), "--out", str(link / "figs")])
    assert rc == 4 and "inside the simulator's own source folder" in _error(capsys)
    assert sorted(p.name for p in SOURCE.iterdir()) == before


def test_a_folder_holding_the_sweep_with_other_seeds_is_refused_before_any_calibration(tmp_path, capsys, monkeypatch):
    """The identity of a stored sweep (name, file, seeds, grid points) is checked before `floras matched` calibrates
    its targets: calibration takes minutes at population scale and was lost when the refusal came after it."""
    import dataclasses

    import scenarios.experiments.matched as matched
    from scenarios.experiments.sweep_dirs import sweep_manifest
    from scenarios.experiments.sweep_file import load_sweep
    from scenarios.store import atomic_write_json

    path = ci_sweep(tmp_path)
    out = tmp_path / "res" / "matched"
    out.mkdir(parents=True)
    stored = sweep_manifest(dataclasses.replace(load_sweep(path), seeds=(0, 1)))
    atomic_write_json(out / "sweep.json", stored)
    monkeypatch.setattr(matched, "plan_sweep", lambda *a, **k: pytest.fail("calibrated before the folder was checked"))
    rc = main(["matched", str(path), "--out", str(tmp_path / "res"), "--workers", "0", "--no-progress"])
    msg = _error(capsys)
    assert rc != 0 and "holds another sweep ('matched' from 'ci.toml', 8 grid points × 2 seeds)" in msg
    assert json.loads((out / "sweep.json").read_text()) == stored  # untouched


def test_a_folder_holding_a_part_of_the_sweep_passes_the_check_before_calibration(tmp_path, capsys, monkeypatch):
    """A folder holding the same sweep with fewer seeds and grid points is a part of it (the sweep grows in place,
    scenarios/experiments/sweep_dirs.py): the check lets calibration start."""
    import dataclasses

    import scenarios.experiments.matched as matched
    from scenarios.experiments.sweep_dirs import sweep_manifest
    from scenarios.experiments.sweep_file import load_sweep
    from scenarios.store import atomic_write_json

    path = ci_sweep(tmp_path)
    path.write_text(path.read_text().replace("seeds = [0]", "seeds = [0, 1]"))
    out = tmp_path / "res" / "matched"
    out.mkdir(parents=True)
    whole = load_sweep(path)
    part = dataclasses.replace(whole, points=whole.points[:3], seeds=(0,))
    atomic_write_json(out / "sweep.json", sweep_manifest(part))

    calibrated = []

    def plan(*a, **k):
        calibrated.append(True)
        raise KeyboardInterrupt  # stops the command once calibration has started
    monkeypatch.setattr(matched, "plan_sweep", plan)
    rc = main(["matched", str(path), "--out", str(tmp_path / "res"), "--workers", "0", "--no-progress"])
    assert rc != 0 and calibrated and "holds another sweep" not in _error(capsys)
