"""Sweep files and tuning records under the tightest accountant that read against other files' rows: each must change
only what its header says (a drift between the files would compare unlike runs). Pure reads of the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.experiments.matched import tuned_for
from scenarios.experiments.sweep_file import load_sweep

ROOT = Path(__file__).resolve().parents[1]
MATCHED = ROOT / "docs" / "figures" / "matched"


def _sweep(name: str):
    return load_sweep(ROOT / "scenarios" / f"{name}.toml")


def test_tuning_under_tightest_moves_only_central_gaussians_eta():
    """docs/figures/matched/tune_tightest.json (matched_tightest.toml's cases tuned under tightest at ε = 8): every
    case but central Gaussian keeps its η of tune_combined.json (tuned under RDP noise), and each choice is the grid's
    best and interior."""
    whole = _sweep("matched_tightest")
    combined = json.loads((MATCHED / "tune_combined.json").read_text())["choices"]
    tightest = json.loads((MATCHED / "tune_tightest.json").read_text())["choices"]
    assert set(tightest) == {p.label for p in whole.points}
    changed = {label for label in tightest if tightest[label]["lr"] != combined[label]["lr"]}
    assert changed == {"central-gaussian"}
    for label, choice in tightest.items():
        lrs = [g["lr"] for g in choice["grid"]]
        best = max(choice["grid"], key=lambda g: g["validation_accuracy"])
        assert choice["lr"] == best["lr"] and min(lrs) < choice["lr"] < max(lrs) and not choice["at_edge"], label


def test_antenna_snr_sweep_is_the_20_db_sweep_at_other_snrs():
    """scenarios/cell_antennas_tightest_snr.toml: the capped FLORAS and analog Gaussian cases of
    cell_antennas_tightest.toml, override for override, with phy.snr_db ∈ {0, 10} the only change."""
    snr, ref = _sweep("cell_antennas_tightest_snr"), _sweep("cell_antennas_tightest")
    assert snr.base == ref.base and snr.seeds == ref.seeds == (0, 1, 2)
    theirs = {p.label: p for p in ref.points}
    labels = {"floras-none-capped", "floras-none-capped-nr2", "floras-none-capped-nr4", "floras-none-capped-nr8",
              "analog-gaussian", "analog-gaussian-nr2", "analog-gaussian-nr4", "analog-gaussian-nr8"}
    assert {p.label for p in snr.points} == labels and len(snr.points) == 2 * len(labels)
    seen = set()
    for point in snr.points:
        mine = snr.run_overrides(point, 1)
        seen.add((point.label, mine["phy.snr_db"]))
        assert mine == {**ref.run_overrides(theirs[point.label], 1), "phy.snr_db": mine["phy.snr_db"]}, point.label
    assert seen == {(label, s) for label in labels for s in (0.0, 10.0)}


def test_antenna_radius_sweep_is_the_0_db_sweep_in_other_cells():
    """scenarios/cell_antennas_tightest_radius.toml: the 0 dB points of cell_antennas_tightest_snr.toml (N_r = 1, 2, 4,
    8), override for override, with phy.cell_radius ∈ {100, 1000} m the only change (250 m is that sweep's)."""
    radius, snr = _sweep("cell_antennas_tightest_radius"), _sweep("cell_antennas_tightest_snr")
    assert radius.base == snr.base and radius.seeds == snr.seeds == (0, 1, 2)
    theirs = {p.label: p for p in snr.points if p.grid["phy.snr_db"] == 0.0}
    assert {p.label for p in radius.points} == set(theirs) and len(radius.points) == 2 * len(theirs) == 16
    seen = set()
    for point in radius.points:
        mine = radius.run_overrides(point, 2)
        seen.add((point.label, mine["phy.cell_radius"]))
        assert mine == {**snr.run_overrides(theirs[point.label], 2), "phy.cell_radius": mine["phy.cell_radius"]}
    assert seen == {(label, r) for label in theirs for r in (100.0, 1000.0)}


def test_antenna_sweep_reads_against_the_cell_antenna_sweep_and_its_tuning_file_holds_its_cases():
    """scenarios/cell_antennas_tightest.toml: analog Gaussian's points are cell_antennas.toml's of the same N_r with
    the accountant the only change; the FLORAS cases differ from one another only in rx_antennas (and the capped
    receiver); cell_antennas_tightest_tune.toml's cases are the sweep's N_r > 1 FLORAS cases, override for override."""
    sweep, cell, tune = _sweep("cell_antennas_tightest"), _sweep("cell_antennas"), _sweep("cell_antennas_tightest_tune")
    assert sweep.base == cell.base == tune.base and sweep.seeds == cell.seeds == (0, 1, 2)
    ref = {int(p.overrides["phy.rx_antennas"]): p for p in cell.points if p.label == "analog-gaussian"}
    points = {p.label: p for p in sweep.points}
    assert set(points) == {"floras-none", "floras-none-nr2", "floras-none-nr4", "floras-none-capped",
                           "floras-none-capped-nr2", "floras-none-capped-nr4", "floras-none-inverse-variance",
                           "floras-none-inverse-variance-nr2", "floras-none-inverse-variance-nr4",
                           "floras-none-capped-nr8", "analog-gaussian", "analog-gaussian-nr2", "analog-gaussian-nr4",
                           "analog-gaussian-nr8"}
    for label, n_rx in (("analog-gaussian", 1), ("analog-gaussian-nr2", 2), ("analog-gaussian-nr4", 4)):
        mine = {k: v for k, v in sweep.run_overrides(points[label], 0).items() if k != "phy.rx_antennas"}
        want = {k: v for k, v in cell.run_overrides(ref[n_rx], 0).items() if k != "phy.rx_antennas"}
        assert mine == {**want, "privacy.accountant": "tightest"}, label
        assert int(points[label].overrides.get("phy.rx_antennas", 1)) == n_rx
    analog4 = sweep.run_overrides(points["analog-gaussian-nr4"], 0)  # no N_r = 8 in cell_antennas.toml
    assert sweep.run_overrides(points["analog-gaussian-nr8"], 0) == {**analog4, "phy.rx_antennas": 8}
    plain, capped = sweep.run_overrides(points["floras-none"], 0), sweep.run_overrides(points["floras-none-capped"], 0)
    assert capped == {**plain, "phy.floras.receiver": "capped", "phy.floras.receiver_cap": 4.0}
    inverse = sweep.run_overrides(points["floras-none-inverse-variance"], 0)
    assert inverse == {**plain, "phy.floras.receiver": "inverse-variance"}
    (twin,) = [p for p in tune.points if p.label == "floras-none-inverse-variance"]
    assert tune.run_overrides(twin, 0) == inverse
    for ref, suffix, antennas in ((plain, "", (2, 4)), (capped, "-capped", (2, 4, 8)),
                                  (inverse, "-inverse-variance", (2, 4))):
        for n_rx in antennas:
            label = f"floras-none{suffix}-nr{n_rx}"
            assert sweep.run_overrides(points[label], 0) == {**ref, "phy.rx_antennas": n_rx}
            (twin,) = [p for p in tune.points if p.label == label]
            assert tune.run_overrides(twin, 0) == sweep.run_overrides(points[label], 0)
    assert {p.label for p in tune.points} == {"floras-none-nr2", "floras-none-nr4", "floras-none-capped-nr2",
                                              "floras-none-capped-nr4", "floras-none-inverse-variance",
                                              "floras-none-inverse-variance-nr2", "floras-none-inverse-variance-nr4",
                                              "floras-none-capped-nr8"}
    # the tuned record the header names gives FLORAS with antennas its own choice (no prefix fallback to N_r = 1)
    record = json.loads((ROOT / "docs" / "figures" / "cell" / "tune_antennas_tightest.json").read_text())["choices"]
    tuned = {label: c["lr"] for label, c in record.items()}
    assert {"floras-none-nr2", "floras-none-nr4", "floras-none-capped-nr2", "floras-none-capped-nr4",
            "floras-none-capped-nr8", "floras-none-inverse-variance", "floras-none-inverse-variance-nr2",
            "floras-none-inverse-variance-nr4"} <= set(tuned)
    for label in points:
        assert tuned_for(label, tuned) is not None, label


def test_central_gaussian_rerun_differs_from_its_matched_point_only_in_the_tuned_eta():
    """scenarios/matched_tightest_central.toml: its runs are matched_tightest.toml's central-gaussian runs of the same
    ε and seed, with only the learning rate changed (the tuned record it names gives 0.01, the RDP-tuned one 0.03)."""
    central, whole = _sweep("matched_tightest_central"), _sweep("matched_tightest")
    assert central.base == whole.base and central.seeds == whole.seeds
    mine = {p.grid["privacy.target_epsilon"]: p for p in central.points}
    ref = {p.grid["privacy.target_epsilon"]: p for p in whole.points if p.label == "central-gaussian"}
    assert set(mine) == set(ref) == {1, 2, 4, 8, 16} and {p.label for p in central.points} == {"central-gaussian"}
    for eps, point in mine.items():
        for seed in central.seeds:
            a, b = central.run_overrides(point, seed), whole.run_overrides(ref[eps], seed)
            assert {k: v for k, v in a.items() if k != "training.lr"} == {k: v for k, v in b.items() if k != "training.lr"}
    tightest = json.loads((MATCHED / "tune_tightest.json").read_text())["choices"]
    combined = json.loads((MATCHED / "tune_combined.json").read_text())["choices"]
    assert tuned_for("central-gaussian", {k: c["lr"] for k, c in tightest.items()}) == 0.01
    assert tuned_for("central-gaussian", {k: c["lr"] for k, c in combined.items()}) == 0.03


def test_zero_db_tuning_file_holds_the_snr_sweeps_capped_floras_points_at_zero_db():
    """scenarios/cell_antennas_tightest_tune_0db.toml: its cases are cell_antennas_tightest_snr.toml's capped FLORAS
    points at 0 dB (N_r = 1, 2, 4, 8), override for override, one seed; no analog Gaussian case."""
    snr, tune = _sweep("cell_antennas_tightest_snr"), _sweep("cell_antennas_tightest_tune_0db")
    assert tune.base == snr.base and tune.seeds == (0,)
    at0 = {p.label: p for p in snr.points if float(p.grid["phy.snr_db"]) == 0.0 and p.label.startswith("floras")}
    assert set(at0) == {"floras-none-capped", "floras-none-capped-nr2", "floras-none-capped-nr4", "floras-none-capped-nr8"}
    assert sorted(p.label for p in tune.points) == sorted(at0)
    for point in tune.points:
        assert tune.run_overrides(point, 0) == snr.run_overrides(at0[point.label], 0), point.label


@pytest.mark.parametrize("radius", [100, 1000])
def test_radius_tuning_files_hold_the_radius_sweeps_capped_floras_points(radius):
    """scenarios/cell_antennas_tightest_tune_r100.toml and _r1000.toml: their cases are cell_antennas_tightest_radius.toml's
    capped FLORAS points at that radius (N_r = 1, 2, 4, 8), override for override, one seed; no analog Gaussian case."""
    whole, tune = _sweep("cell_antennas_tightest_radius"), _sweep(f"cell_antennas_tightest_tune_r{radius}")
    assert tune.base == whole.base and tune.seeds == (0,)
    mine = {p.label: p for p in whole.points
            if float(p.grid["phy.cell_radius"]) == float(radius) and p.label.startswith("floras")}
    assert set(mine) == {"floras-none-capped", "floras-none-capped-nr2", "floras-none-capped-nr4", "floras-none-capped-nr8"}
    assert sorted(p.label for p in tune.points) == sorted(mine)
    for point in tune.points:
        assert tune.run_overrides(point, 0) == whole.run_overrides(mine[point.label], 0), point.label


def test_radius_tunings_chose_the_250_m_eta_but_for_one_antenna_at_100_m():
    """docs/figures/cell/tune_antennas_tightest_r100.json and _r1000.json (the radius tuning files' records): at 1000 m
    every choice is the 20 dB record's; at 100 m every one but one antenna's (0.01 against 0.03); all inside the grid.
    cell_antennas_tightest_r100_retuned.toml runs that point at its own η, override for override the radius sweep's."""
    cell = ROOT / "docs" / "figures" / "cell"
    at20 = json.loads((cell / "tune_antennas_tightest.json").read_text())["choices"]
    labels = {"floras-none-capped", "floras-none-capped-nr2", "floras-none-capped-nr4", "floras-none-capped-nr8"}
    moved = {}
    for radius in (100, 1000):
        rec = json.loads((cell / f"tune_antennas_tightest_r{radius}.json").read_text())
        assert rec["at_snr_db"] == 0.0 and rec["sweep"] == f"cell_antennas_tightest_tune_r{radius}_tune"
        assert set(rec["choices"]) == labels
        for label, choice in rec["choices"].items():
            assert not choice["at_edge"] and [g["lr"] for g in choice["grid"]] == [0.003, 0.01, 0.03, 0.1], label
            if choice["lr"] != at20[label]["lr"]:
                moved[(radius, label)] = (at20[label]["lr"], choice["lr"])
    assert moved == {(100, "floras-none-capped"): (0.03, 0.01)}
    whole, again = _sweep("cell_antennas_tightest_radius"), _sweep("cell_antennas_tightest_r100_retuned")
    assert again.seeds == whole.seeds == (0, 1, 2) and again.base == whole.base
    (point,) = again.points
    mine = next(p for p in whole.points if p.label == point.label == "floras-none-capped"
                and float(p.grid["phy.cell_radius"]) == 100.0)
    for seed in again.seeds:
        assert again.run_overrides(point, seed) == whole.run_overrides(mine, seed)


def test_zero_db_tuning_chose_the_20_db_eta_for_every_capped_case():
    """docs/figures/cell/tune_antennas_tightest_0db.json (the 0 dB tuning file's record): every case's choice is the
    20 dB record's and inside the grid, so cell_antennas_tightest_snr.toml's 0 dB points run at their tuned η."""
    cell = ROOT / "docs" / "figures" / "cell"
    at0 = json.loads((cell / "tune_antennas_tightest_0db.json").read_text())
    at20 = json.loads((cell / "tune_antennas_tightest.json").read_text())["choices"]
    assert at0["at_snr_db"] == 0.0 and at0["sweep"] == "cell_antennas_tightest_tune_0db_tune"
    assert set(at0["choices"]) == {"floras-none-capped", "floras-none-capped-nr2", "floras-none-capped-nr4",
                                   "floras-none-capped-nr8"}
    for label, choice in at0["choices"].items():
        assert choice["lr"] == at20[label]["lr"] and not choice["at_edge"], label
        assert [g["lr"] for g in choice["grid"]] == [0.003, 0.01, 0.03, 0.1], label
