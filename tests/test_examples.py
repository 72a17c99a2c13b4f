"""The scripts in examples/ run as a user runs them (a subprocess from the checkout) and print what they promise."""

from __future__ import annotations

import csv
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(script: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(ROOT / "examples" / script), *args], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_link_snr_study_prints_a_row_per_snr_and_scheme_and_writes_them(tmp_path):
    path = tmp_path / "nmse.csv"
    text = _run("link_snr_study.py", "--snr-db", "0", "20", "--d", "20", "--rounds", "3", "--out", str(path))
    rows = [line.split() for line in text.splitlines() if line.split()[:1] in (["0"], ["20"])]
    assert [(r[0], r[1]) for r in rows] == [(s, n) for s in ("0", "20") for n in ("floras", "channel-inversion", "ideal")]
    with path.open() as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 6
    ci = {float(r["snr_db"]): float(r["nmse_db"]) for r in table if r["scheme"] == "channel-inversion"}
    assert ci[20.0] < ci[0.0]  # more SNR, less error
    for r in table:
        assert math.isclose(float(r["nmse_db"]), 10 * math.log10(float(r["nmse_mean"])), rel_tol=1e-9)


def test_equal_epsilon_calibrates_both_schemes_to_the_target(tmp_path):
    text = _run("equal_epsilon.py", "--rounds", "2", "--out", str(tmp_path))
    rows = {line.split()[0]: line.split() for line in text.splitlines()
            if line.split()[:1] in (["floras"], ["central-gaussian"]) and len(line.split()) == 6}
    assert set(rows) == {"floras", "central-gaussian"}
    for scheme, cells in rows.items():
        accuracy, eps = float(cells[4]), float(cells[5])
        assert 0.0 <= accuracy <= 1.0
        assert math.isfinite(eps) and eps <= 8.0 + 1e-6, (scheme, eps)
    assert float(rows["floras"][3]) < 0  # C below full power √(d·P)
    assert (tmp_path / "floras" / "metrics.csv").exists() and (tmp_path / "central-gaussian" / "metrics.csv").exists()
