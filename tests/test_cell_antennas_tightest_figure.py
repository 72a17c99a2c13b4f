"""The antenna figure under the tightest accountant regenerates from stored results alone (a fake runner writes each
run's files): one curve per scheme and receiver against N_r, though each of the sweep's cases holds one N_r."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from scenarios.experiments.sweep import load_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[1]
HEADER = "round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s"


def accuracy(cfg) -> float:
    """A deterministic final accuracy per (scheme, receiver, N_r, seed): the value the table must show."""
    phy = cfg.phy
    base = {"floras": 0.2, "analog-gaussian": 0.5}[phy.scheme]
    capped = 0.3 if phy.scheme == "floras" and phy.of("floras").receiver == "capped" else 0.0
    return base + capped + 0.05 * phy.rx_antennas + 0.01 * cfg.run.seed


def _uncalibrated(sweep):
    """The sweep's points without a target ε (analog Gaussian at a fixed noise multiplier): the runs are fake, so the
    minutes of calibrating FLORAS's PLD per N_r and analog Gaussian's per N_r, SNR and radius would buy nothing."""
    def strip(p):
        over = {k: v for k, v in p.overrides.items() if k != "privacy.target_epsilon"}
        if over["phy.scheme"] == "analog-gaussian":
            over["phy.analog-gaussian.noise_multiplier"] = 1.0
        return replace(p, overrides=over)
    return tuple(strip(p) for p in sweep.points)


def fake_runner(cfg, out_dir, *, resume, progress):
    out_dir = Path(out_dir)
    report = {"assumptions": ["fake accountant for figure tests"], "warnings": [],
              "threat_model": f"T1 (fake, N_r = {cfg.phy.rx_antennas})"}
    (out_dir / "config.json").write_text(json.dumps({"config": cfg.to_dict(), "privacy_report": report}))
    rows = [HEADER] + [f"{r},1.0,1.0,{accuracy(cfg) * r / cfg.run.rounds!r},0.0,,,8.0,{0.1 * r!r}"
                       for r in range(1, cfg.run.rounds + 1)]
    (out_dir / "metrics.csv").write_text("\n".join(rows) + "\n")
    (out_dir / "DONE").write_text("")
    return {}


def test_each_scheme_is_one_curve_against_the_antennas_and_the_table_holds_every_case(tmp_path):
    from figures.cell_antennas_tightest import STEM, curve_of, make

    assert curve_of("floras-none-nr4") == "floras-none" and curve_of("analog-gaussian-nr2") == "analog-gaussian"
    assert curve_of("floras-none-capped") == curve_of("floras-none-capped-nr2") == "floras-none-capped"
    assert curve_of("floras-none") == "floras-none"
    sweep = load_sweep(ROOT / "scenarios" / "cell_antennas_tightest.toml", quick=True)  # validated by the real loader
    points = _uncalibrated(sweep)
    sweep = replace(sweep, seeds=(0, 1), points=points)
    out = tmp_path / "res" / sweep.name
    run_sweep([(sweep, out)], runner=fake_runner, progress=False, echo=None)
    assert len(list(out.glob("*/DONE"))) == 2 * len(sweep.points) == 28
    paths = make(out, tmp_path / "figs")
    assert all(p.stat().st_size > 10_000 for p in paths if p.suffix in (".png", ".pdf"))
    table = (tmp_path / "figs" / f"{STEM}.table.md").read_text().splitlines()
    assert table[2].endswith("| rx_antennas = 1 | rx_antennas = 2 | rx_antennas = 4 | rx_antennas = 8 |")
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ")[1:] for line in table[4:] if line.startswith("| ")}
    assert len(rows) == 4  # FLORAS plain, capped, inverse-variance, analog Gaussian: not twelve one-point rows

    def cell(scheme: float, n_rx: int) -> str:  # mean [min, max] over seeds 0, 1 of accuracy() above, in %
        lo = 100 * (scheme + 0.05 * n_rx)
        return f"{lo + 0.5:.1f} [{lo:.1f}, {lo + 1:.1f}]"

    by_start = {name.split(" [")[0]: cells for name, cells in rows.items()}
    plain = next(c for n, c in by_start.items() if "FLORAS" in n and "capped" not in n and "inverse" not in n)
    inverse = next(c for n, c in by_start.items() if "inverse" in n)
    assert [c.strip(" |") for c in inverse] == [cell(0.2, 1), cell(0.2, 2), cell(0.2, 4), "—"]  # no N_r = 8 case
    capped = next(c for n, c in by_start.items() if "capped" in n)
    analog = next(c for n, c in by_start.items() if "analog" in n)
    assert [c.strip(" |") for c in plain] == [cell(0.2, 1), cell(0.2, 2), cell(0.2, 4), "—"]
    assert [c.strip(" |") for c in analog] == [cell(0.5, 1), cell(0.5, 2), cell(0.5, 4), cell(0.5, 8)]
    assert [c.strip(" |") for c in capped] == [cell(0.5, 1), cell(0.5, 2), cell(0.5, 4), cell(0.5, 8)]
    # each curve's threat model changes with N_r: the table gives it per point
    text = "\n".join(table)
    assert "rx_antennas = 4: T1 (fake, N_r = 4)" in text


def test_an_infeasible_case_is_placed_at_its_own_antenna_count(tmp_path):
    """A case found infeasible has no runs and its N_r only in the sweep's manifest (a case override, not a grid
    value): the table marks it at that N_r, with its reason."""
    import shutil

    from figures.cell_antennas_tightest import STEM, make

    sweep = load_sweep(ROOT / "scenarios" / "cell_antennas_tightest.toml", quick=True)
    points = _uncalibrated(sweep)
    sweep = replace(sweep, seeds=(0,), points=points)
    out = tmp_path / "res" / sweep.name
    run_sweep([(sweep, out)], runner=fake_runner, progress=False, echo=None)
    for run in out.glob("floras-none-capped-nr4_*"):
        shutil.rmtree(run)
    reason = "a reason stated by the calibration (test)"
    (out / "matched.json").write_text(json.dumps({"points": [
        {"slug": "floras-none-capped-nr4", "label": "floras-none-capped-nr4", "grid": {}, "status": "infeasible",
         "reason": reason, "threat_model": "T1"}]}))
    make(out, tmp_path / "figs")
    table = (tmp_path / "figs" / f"{STEM}.table.md").read_text()
    row = next(line for line in table.splitlines() if "capped" in line and line.startswith("| "))
    assert row.split(" | ")[3] == "infeasible (1)" and f"(1) {reason}" in table  # the N_r = 4 column of 1, 2, 4, 8


@pytest.mark.parametrize("sweep_name, stem, header", [
    ("cell_antennas_tightest_snr", "SNR_STEM", "| snr_db = 0 dB | snr_db = 10 dB |"),
    ("cell_antennas_tightest_radius", "RADIUS_STEM", "| cell_radius = 100 m | cell_radius = 1000 m |"),
])
def test_the_snr_and_radius_sweeps_draw_one_curve_per_case_against_their_key(tmp_path, sweep_name, stem, header):
    """scenarios/cell_antennas_tightest_snr.toml and _radius.toml (the directory's name picks the figure): accuracy
    against the SNR or the cell radius, one row per case (each holds one N_r), the cells the fake runner's
    accuracies."""
    import figures.cell_antennas_tightest as module
    from figures.registry import FIGURES

    assert ("cell_antennas_tightest", sweep_name) in FIGURES
    sweep = load_sweep(ROOT / "scenarios" / f"{sweep_name}.toml", quick=True)
    points = _uncalibrated(sweep)
    sweep = replace(sweep, seeds=(0, 1), points=points)
    out = tmp_path / "res" / sweep.name
    run_sweep([(sweep, out)], runner=fake_runner, progress=False, echo=None)
    module.make(out, tmp_path / "figs")
    table = (tmp_path / "figs" / f"{getattr(module, stem)}.table.md").read_text().splitlines()
    assert table[2].endswith(header)
    rows = [line.split(" | ")[1:] for line in table[4:] if line.startswith("| ")]
    antennas = (1, 2, 4, 8)
    assert len(rows) == 2 * len(antennas)
    for scheme, n_rx in ((0.5, n) for n in antennas):  # capped FLORAS and analog Gaussian share accuracy()
        lo = 100 * (scheme + 0.05 * n_rx)
        want = f"{lo + 0.5:.1f} [{lo:.1f}, {lo + 1:.1f}]"
        assert sum(all(c.strip(" |") == want for c in r) for r in rows) == 2, (n_rx, rows)
