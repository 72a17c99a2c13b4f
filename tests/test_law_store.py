"""The law store (scenarios/store/laws.py): FLORAS's law given the pilots is drawn once per link and code, and read
back by later processes bit for bit; a file that does not match is ignored, never trusted."""

from __future__ import annotations

import json

import numpy as np
import pytest


def _config(tau: float = 0.3):
    from scenarios.config import scenario_from_dict

    return scenario_from_dict({"partition": {"clients": 10}, "training": {"clients_per_round": 4},
                               "phy": {"scheme": "floras", "snr_db": 20.0, "C": 0.05, "L": 8, "timing_offset": tau,
                                       "floras": {"N": 8, "path": "chip"}},
                               "privacy": {"delta": 1e-5, "accountant": "pld"}, "run": {"rounds": 1, "seed": 0}},
                              resolve=False)


@pytest.fixture
def store(tmp_path, monkeypatch):
    from scenarios.config import floras_timing

    monkeypatch.setenv("FLORAS_CALIBRATION_CACHE", str(tmp_path))
    floras_timing._law.cache_clear()  # a fresh process: nothing in memory
    yield tmp_path / "laws"
    floras_timing._law.cache_clear()


def test_a_stored_law_is_read_back_without_drawing_it(store, monkeypatch):
    from phy import floras_timing_law
    from scenarios.config import floras_timing

    first = floras_timing.timing_law(_config(), draws=40_000)
    files = list(store.glob("*.json"))
    assert len(files) == 1
    record = json.loads(files[0].read_text())
    assert record["request"]["draws"] == 40_000 and record["request"]["timing_offset"] == 0.3
    assert "key" not in json.dumps(record).lower()  # nothing of the permutation key

    floras_timing._law.cache_clear()

    def never(*args, **kwargs):
        raise AssertionError("the stored law was drawn again")

    monkeypatch.setattr(floras_timing_law, "loss_counts", never)
    again = floras_timing.timing_law(_config(), draws=40_000)
    for a, b in zip(first[:2], again[:2]):
        np.testing.assert_array_equal(a, b)
    assert first[2] == again[2]
    # another link (τ_max) or another number of draws is not that law
    with pytest.raises(AssertionError, match="drawn again"):
        floras_timing.timing_law(_config(0.2), draws=40_000)
    with pytest.raises(AssertionError, match="drawn again"):
        floras_timing.timing_law(_config(), draws=50_000)


def test_a_file_that_does_not_match_is_ignored_and_redrawn(store, capsys):
    from scenarios.config import floras_timing

    first = floras_timing.timing_law(_config(), draws=30_000)
    path = next(store.glob("*.json"))
    record = json.loads(path.read_text())
    record["counts"][0] = 30_001  # edited: more exceedances than draws at the first threshold
    path.write_text(json.dumps(record))
    floras_timing._law.cache_clear()
    again = floras_timing.timing_law(_config(), draws=30_000)
    assert "law store: ignoring" in capsys.readouterr().err
    np.testing.assert_array_equal(first[1], again[1])
    assert json.loads(path.read_text())["counts"][0] <= 30_000  # overwritten by the redrawn law
    # a truncated file too
    path.write_text(path.read_text()[:40])
    floras_timing._law.cache_clear()
    np.testing.assert_array_equal(floras_timing.timing_law(_config(), draws=30_000)[1], first[1])


def test_the_store_is_off_with_the_calibration_store(tmp_path, monkeypatch):
    from scenarios.store import laws

    monkeypatch.setenv("FLORAS_CALIBRATION_CACHE", "off")
    assert laws.laws_dir() is None
    assert laws.save_counts({"draws": 1}, np.zeros(1), np.zeros(1, dtype=np.int64)) is None
    assert laws.load_counts({"draws": 1}, np.zeros(1)) is None
