"""Calibrations kept on disk between commands (scenarios/store/calibrations.py).

A second command with the same code reads an answer instead of calibrating (compute_calibration made to fail proves
it was not called), with the record and its assumption lines intact; an infeasible target is stored and raised again;
another code fingerprint, a damaged file or the store turned off all calibrate afresh; a directory that cannot be
written costs the store, not the run; `floras matched`'s prefetch says how many keys came from the store.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.config import targets
from scenarios.config.calibration import InfeasibleTarget
from scenarios.config.loading import build_scenario_file
from scenarios.config.targets import clear_calibration_cache, resolve_privacy_target
from scenarios.experiments.calibrate_points import prefetch_calibrations
from scenarios.experiments.sweep_file import load_sweep
from scenarios.store import calibrations
from test_calibrate_points import _sweep  # central Gaussian and channel inversion, ε = 4, 8, two SNRs

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "scenarios" / "base" / "digits_mlp.toml"
OVERRIDES = {"partition.clients": 100, "training.clients_per_round": 20, "run.rounds": 4, "phy.normalization": "clip",
             "phy.clip_norm": 1.0, "phy.scheme": "central-gaussian"}


@pytest.fixture
def store(tmp_path, monkeypatch):
    where = tmp_path / "calibrations"
    monkeypatch.setenv(calibrations.ENV, str(where))
    monkeypatch.setattr(calibrations, "_warned", set())
    clear_calibration_cache()
    yield where
    clear_calibration_cache()


def _config(eps):
    return build_scenario_file(DIGITS, {**OVERRIDES, "privacy.target_epsilon": eps})


def _no_compute(monkeypatch):
    def fail(request):
        raise AssertionError("calibrated although the store holds the answer")
    monkeypatch.setattr(targets, "compute_calibration", fail)


def test_a_second_command_reads_the_stored_calibration(store, monkeypatch):
    first = resolve_privacy_target(_config(4.0))
    files = list(store.glob("*.json"))
    assert len(files) == 1 and not list(store.glob(".tmp-*"))
    data = json.loads(files[0].read_text())
    assert data["fingerprint"] == calibrations.code_fingerprint() and data["answer"]["kind"] == "calibration"
    clear_calibration_cache()  # a new process: nothing in memory
    _no_compute(monkeypatch)
    second = resolve_privacy_target(_config(4.0))
    assert second.phy.to_dict() == first.phy.to_dict()
    assert second.privacy.calibrated == first.privacy.calibrated
    answer = calibrations.load(tuple(data["request"]))
    assert answer.assumptions and answer.achieved_epsilon <= 4.0
    with pytest.raises(AssertionError, match="calibrated although"):  # another target is another request
        resolve_privacy_target(_config(8.0))


def test_an_infeasible_target_is_stored_and_raised_again(store, monkeypatch):
    cfg = build_scenario_file(DIGITS, {**OVERRIDES, "phy.scheme": "channel-inversion", "privacy.target_epsilon": 8.0})
    with pytest.raises(InfeasibleTarget) as first:
        resolve_privacy_target(cfg)
    assert json.loads(next(store.glob("*.json")).read_text())["answer"]["kind"] == "infeasible"
    clear_calibration_cache()
    _no_compute(monkeypatch)
    with pytest.raises(InfeasibleTarget) as again:
        resolve_privacy_target(cfg)
    assert str(again.value) == str(first.value)


def test_other_code_a_damaged_file_or_the_store_off_calibrate_afresh(store, monkeypatch, capsys):
    value = resolve_privacy_target(_config(4.0)).phy.to_dict()
    path = next(store.glob("*.json"))
    calls = []
    compute = targets.compute_calibration
    monkeypatch.setattr(targets, "compute_calibration", lambda r: calls.append(r) or compute(r))

    clear_calibration_cache()
    path.write_text(path.read_text()[:40])  # truncated
    assert resolve_privacy_target(_config(4.0)).phy.to_dict() == value and len(calls) == 1
    assert "ignoring" in capsys.readouterr().err
    assert json.loads(path.read_text())["answer"]["kind"] == "calibration"  # rewritten whole

    clear_calibration_cache()
    data = json.loads(path.read_text())
    data["request"][1] = 5.0  # a file that holds another request under this name
    path.write_text(json.dumps(data))
    resolve_privacy_target(_config(4.0))
    assert len(calls) == 2

    clear_calibration_cache()
    monkeypatch.setattr(calibrations, "code_fingerprint", lambda: "other code")
    resolve_privacy_target(_config(4.0))
    assert len(calls) == 3 and len(list(store.glob("*.json"))) == 2  # another name; the old file is not read

    clear_calibration_cache()
    monkeypatch.setenv(calibrations.ENV, "off")
    assert calibrations.cache_dir() is None
    resolve_privacy_target(_config(4.0))
    assert len(calls) == 4 and len(list(store.glob("*.json"))) == 2


def test_a_directory_that_cannot_be_written_costs_the_store_not_the_run(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(calibrations.ENV, str(blocker / "calibrations"))  # under a file: mkdir fails
    monkeypatch.setattr(calibrations, "_warned", set())
    clear_calibration_cache()
    try:
        assert resolve_privacy_target(_config(4.0)).privacy.calibrated["achieved_epsilon"] <= 4.0
    finally:
        clear_calibration_cache()
    err = capsys.readouterr().err
    assert err.count("cannot write") == 1 and "not kept between commands" in err


def test_the_prefetch_says_how_many_keys_came_from_the_store(store, tmp_path):
    path = _sweep(tmp_path)  # central Gaussian at ε = 4, 8 (two keys), channel inversion at both (two infeasible)
    lines = []
    assert prefetch_calibrations([load_sweep(path)], echo=lines.append) == 4
    assert not any("calibration store" in line for line in lines)
    clear_calibration_cache()
    lines.clear()
    assert prefetch_calibrations([load_sweep(path)], echo=lines.append) == 0
    assert lines == [f"floras matched: 4 noise key(s) read from the calibration store {store} (computed by an earlier "
                     "command with this code; FLORAS_CALIBRATION_CACHE=off calibrates afresh)"]
