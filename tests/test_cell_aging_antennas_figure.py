"""The antenna-aging figure merges both sweeps from stored results alone (a fake runner writes each run's files):
one curve per (scheme, σ_e², accountant) against N_r, every point in the table with its mean [min, max]."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from scenarios.experiments.sweep import load_sweep, run_sweep

from test_cell_antennas_tightest_figure import HEADER, _uncalibrated  # noqa: F401  (tests/: the fake run files)

ROOT = Path(__file__).resolve().parents[1]


def accuracy(cfg) -> float:
    """A deterministic final accuracy per (scheme, σ_e², accountant, N_r, seed): the value the table must show."""
    phy = cfg.phy
    base = {"floras": 0.4, "analog-gaussian": 0.5, "channel-inversion": 0.8}[phy.scheme]
    generic = -0.05 if cfg.privacy.accountant == "rdp-generic" else 0.0
    return base + generic - phy.csi_error + 0.01 * phy.rx_antennas + 0.002 * cfg.run.seed


def fake_runner(cfg, out_dir, *, resume, progress):
    import json

    out_dir = Path(out_dir)
    eps = "inf" if cfg.phy.scheme == "channel-inversion" else "8.0"
    (out_dir / "config.json").write_text(json.dumps({"config": cfg.to_dict(), "privacy_report": {"assumptions": []}}))
    rows = [HEADER] + [f"{r},1.0,1.0,{accuracy(cfg) * r / cfg.run.rounds!r},0.0,,,{eps},{0.1 * r!r}"
                       for r in range(1, cfg.run.rounds + 1)]
    (out_dir / "metrics.csv").write_text("\n".join(rows) + "\n")
    (out_dir / "DONE").write_text("")
    return {}


def test_both_sweeps_merge_into_curves_against_the_antennas(tmp_path):
    from figures.cell_aging_antennas import STEM, make

    dirs = []
    for name in ("cell_aging_antennas", "cell_aging_antennas_floras"):
        sweep = load_sweep(ROOT / "scenarios" / f"{name}.toml")  # the full grids, validated by the real loader
        sweep = replace(sweep, seeds=(0, 1), points=_uncalibrated(sweep))
        out = tmp_path / "res" / sweep.name
        run_sweep([(sweep, out)], runner=fake_runner, progress=False, echo=None)
        dirs.append(out)
    paths = make(dirs, tmp_path / "fig")
    assert {p.name for p in paths} >= {f"{STEM}.png", f"{STEM}.table.md"}
    rows = [r for r in (tmp_path / "fig" / f"{STEM}.table.md").read_text().splitlines() if r.startswith("| ")][2:]
    assert len(rows) == 12 + 6  # 2 schemes × 2 σ_e² × 3 N_r, and FLORAS × 2 accountants × 3 N_r
    # FLORAS under rdp-generic, N_r = 4: 0.4 − 0.05 + 0.04 (+ 0.002 per seed): 39.1 [39.0, 39.2]
    assert "| floras | 0 | rdp-generic | 4 | 39.1 [39.0, 39.2] | 8 |" in rows
    assert "| floras | 0 | tightest | 1 | 41.1 [41.0, 41.2] | 8 |" in rows
    assert "| analog-gaussian | 0.1 | rdp | 2 | 42.1 [42.0, 42.2] | 8 |" in rows
    assert "| channel-inversion | 0 | rdp | 1 | 81.1 [81.0, 81.2] | inf |" in rows
