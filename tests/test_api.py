"""The Python API (scenarios.api, docs/api.md): each entry point against the module it wraps."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_importing_the_api_loads_no_heavy_library_and_carries_the_version():
    code = ("import sys; from scenarios import api; "
            "print(api.__version__); print(sorted(m for m in ('numpy', 'scipy', 'tensorflow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    version, heavy = out.stdout.splitlines()
    from scenarios.cli.version import __version__

    assert version == __version__ and heavy == "[]" and out.stderr == ""


def test_link_study_is_simulate_link_with_the_simulation_key():
    from phy.assignment import simulation_key
    from phy.config import PhyConfig
    from phy.link_simulation import simulate_link
    from scenarios import api

    got = api.link_study(["floras", "ideal"], K=4, d=20, rounds=3, snr_db=10.0, seed=3, L=8, floras={"N": 6})
    base = PhyConfig.from_dict({"scheme": "ideal", "snr_db": 10.0, "L": 8, "floras": {"N": 6}})
    want = simulate_link(base, schemes=["floras", "ideal"], K=4, d=20, rounds=3, seed=3, key=simulation_key(3))
    assert list(got) == ["floras", "ideal"]
    assert got["floras"]["nmse"] == want["floras"]["nmse"]
    assert got["ideal"]["nmse"]["mean"] < 1e-20 < got["floras"]["nmse"]["mean"]


def test_account_is_the_run_accountant_report():
    from privacy import RunAccountant
    from scenarios import api

    rep = api.account("gaussian", rounds=50, K=10, M=100, clip_norm=1.0, noise_std=2.0)
    want = RunAccountant("gaussian", K=10, M=100, clip_norm=1.0, noise_std=2.0).epsilon(rounds=50)
    assert rep.epsilon == want and rep.delta == 1e-5 and 0 < rep.epsilon < math.inf


def test_calibrate_floras_c_reaches_the_target_and_states_the_back_off():
    from scenarios import api

    cal = api.calibrate({"data": {"name": "digits"}, "phy": {"scheme": "floras", "floras": {"N": 32}}}, 8.0, d=650)
    assert cal["parameter"] == "C"
    assert cal["achieved_epsilon"] <= 8.0
    assert math.isclose(cal["back_off_db"], 20 * math.log10(cal["value"] / math.sqrt(650 * 1.0)))


def test_run_returns_the_metrics_csv_rows(tmp_path):
    from scenarios import api

    rows = api.run(ROOT / "scenarios/examples/digits_quick.toml", out=tmp_path / "r",
                   overrides={"run.rounds": 2, "model.hidden": [8]})
    assert [r["round"] for r in rows] == [1, 2]
    assert 0.0 <= rows[-1]["test_accuracy"] <= 1.0
    assert rows == api.read_run_metrics(tmp_path / "r")
