"""The worked example of docs/extending.md: "local-gaussian", declared in tests/example_scheme only (its
aggregator, its mechanism, its wiring row), runs through floras link, train, calibrate and a matched
sweep without any other file knowing it; half-registered schemes are refused with what is missing."""

import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import example_scheme  # noqa: E402,F401  (registers local-gaussian in phy, privacy and scenarios)

from phy.schemes import register_scheme, scheme_spec, unregister_scheme  # noqa: E402
from scenarios.cli.main import main  # noqa: E402
from scenarios.config import load_scenario, scenario_from_dict  # noqa: E402
from scenarios.config.schemes import register_wiring, unregister_wiring, wiring  # noqa: E402

DIGITS = Path(__file__).resolve().parents[1] / "scenarios" / "base" / "digits_mlp.toml"
LOCAL = {"phy.scheme": "local-gaussian", "phy.normalization": "clip", "phy.clip_norm": 1.0,
         "partition.clients": 20, "training.clients_per_round": 5, "training.batch_size": 10, "run.rounds": 2}


def test_link_measures_the_noise_the_model_predicts(tmp_path):
    """x_k ~ N(0, I_d), clip R = 100 (no clipping at d = 100), C = √d: the sum's noise is (R/C)·Σ_k n_k, so
    NMSE ≈ K·σ_l²·(R/C)²·d / E‖Σx‖² with E[1/χ²_d] = 1/(d − 2): σ_l²·(R/C)²·d/(d − 2) (model units)."""
    d, K, R, sigma, rounds = 100, 6, 100.0, 0.05, 400
    out = tmp_path / "link.json"
    assert main(["link", "--scheme", "local-gaussian", "ideal", "--K", str(K), "--d", str(d), "--rounds", str(rounds),
                 "--normalization", "clip", "--clip-norm", str(R), "--set", f"phy.local-gaussian.local_std={sigma}",
                 "--json", str(out)]) == 0
    s = json.loads(out.read_text())["schemes"]["local-gaussian"]
    predicted = sigma**2 * (R / math.sqrt(d)) ** 2 * d / (d - 2)
    # per-round NMSE: a ratio of two χ²-like sums with ~d degrees of freedom: relative std ≈ √(4/d) = 0.2
    se = 0.2 * predicted / math.sqrt(rounds)
    assert abs(s["nmse"]["mean"] - predicted) <= 4 * se
    assert s["channel_uses"]["mean"] == d * 32  # d·L, the nominal analog cost (L = 32)


def test_train_writes_a_finite_epsilon_column(tmp_path):
    toml = tmp_path / "local.toml"
    toml.write_text(DIGITS.read_text())
    out = tmp_path / "run"
    args = ["train", str(toml), "--out", str(out), "--no-progress"]
    for key, value in {**LOCAL, "phy.local-gaussian.local_std": 0.5}.items():
        args += ["--set", f"{key}={json.dumps(value)}"]
    assert main(args) == 0
    rows = (out / "metrics.csv").read_text().strip().splitlines()
    header, last = rows[0].split(","), rows[-1].split(",")
    eps = float(last[header.index("epsilon")])
    assert (out / "DONE").exists() and len(rows) == 3 and math.isfinite(eps) and eps > 0
    cfg = json.loads((out / "config.json").read_text())["config"]
    assert cfg["phy"]["local-gaussian"] == {"local_std": 0.5}


def test_calibrate_equals_the_gaussian_mechanism_at_the_same_noise(capsys):
    """Without client sampling (K = M) one local-gaussian round is the Gaussian mechanism with noise
    multiplier z = √K·σ_l/(2C) (S = 2R replace-one, noise std √K·σ_l·R/C): its calibrated σ_l must be
    2C·z*/√K with z* the central Gaussian's calibrated multiplier — two different events and code paths."""
    common = ["--target-epsilon", "8", "--K", "20", "--M", "20", "--rounds", "50", "--json", "-"]
    assert main(["calibrate", "--scheme", "local-gaussian", *common]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(["calibrate", "--scheme", "central-gaussian", *common]) == 0
    central = json.loads(capsys.readouterr().out)
    assert local["parameter"] == "local-gaussian.local_std" and local["achieved_epsilon"] <= 8.0
    C = 1.0  # √(d·P) at d = 1
    assert local["value"] == pytest.approx(2 * C * central["value"] / math.sqrt(20), rel=2e-4)
    assert local["threat_model"] == wiring("local-gaussian").threat_model


def test_matched_sweep_calibrates_and_runs_it(tmp_path, capsys):
    sweep = tmp_path / "m.toml"
    sweep.write_text(f'''name = "m"
base = "{DIGITS.as_posix()}"
seeds = [0]
[overrides]
{chr(10).join(f'"{k}" = {json.dumps(v)}' for k, v in LOCAL.items() if k != "phy.scheme")}
[grid]
"privacy.target_epsilon" = [8, "inf"]
[[cases]]
label = "local"
"phy.scheme" = "local-gaussian"
''')
    root = tmp_path / "results"
    assert main(["matched", str(sweep), "--workers", "0", "--out", str(root), "--no-progress"]) == 0
    runs = sorted((root / "m").glob("*_seed0_*"))
    assert len(runs) == 2 and all((r / "DONE").exists() for r in runs)
    for r in runs:
        cfg = json.loads((r / "config.json").read_text())["config"]
        cal = cfg["privacy"]["calibrated"]
        if cfg["privacy"]["target_epsilon"] == "inf":
            assert cfg["phy"]["local-gaussian"]["local_std"] == 0.0 and cal["achieved_epsilon"] == "inf"
        else:
            assert cal["parameter"] == "local-gaussian.local_std" and cal["achieved_epsilon"] <= 8.0
            assert cfg["phy"]["local-gaussian"]["local_std"] == cal["value"]
    record = json.loads((root / "m" / "matched.json").read_text())
    assert {p["threat_model"] for p in record["points"]} == {wiring("local-gaussian").threat_model}


def test_a_scheme_registered_in_phy_only_is_refused_naming_what_is_missing():
    register_scheme(replace(scheme_spec("local-gaussian"), name="phy-only"))
    try:
        with pytest.raises(ValueError, match=r"'phy-only' is registered in phy .* but has no wiring row in scenarios"):
            load_scenario(DIGITS, {**LOCAL, "phy.scheme": "phy-only"})
    finally:
        unregister_scheme("phy-only")


def test_a_wiring_row_whose_mechanism_privacy_lacks_is_refused():
    row = wiring("local-gaussian")
    register_wiring(replace(row, mechanism="no-such-mechanism"), replace=True)
    try:
        with pytest.raises(ValueError, match=r"privacy mechanism 'no-such-mechanism' is not registered in privacy"):
            scenario_from_dict({"phy": {"scheme": "local-gaussian", "normalization": "clip", "clip_norm": 1.0}})
    finally:
        register_wiring(row, replace=True)


def test_a_row_without_a_phy_scheme_is_not_a_scheme():
    register_wiring(replace(wiring("local-gaussian"), scheme="wiring-only"))
    try:
        with pytest.raises(ValueError, match=r"scheme must be one of .*\(got 'wiring-only'\)"):
            scenario_from_dict({"phy": {"scheme": "wiring-only"}})
    finally:
        unregister_wiring("wiring-only")
