"""Errors that point to the fix: "did you mean" for unknown scenario keys, the missing noise
multiplier, and FLORAS calibration with γ = N − K = 0 (phy.floras.N = K)."""

from __future__ import annotations

import pytest

from scenarios.cli.main import main
from scenarios.config import apply_overrides, scenario_from_dict


def test_unknown_key_in_a_table_suggests_the_known_one():
    with pytest.raises(ValueError, match=r"unknown key privacy\.epsilon \(did you mean privacy\.target_epsilon\?\)"):
        scenario_from_dict({"privacy": {"epsilon": 8.0}})
    with pytest.raises(ValueError, match=r"did you mean training\.clients_per_round\?"):
        scenario_from_dict({"training": {"client_per_round": 5}})
    with pytest.raises(ValueError, match=r"unknown table \[trainig\] \(did you mean training\?\)"):
        scenario_from_dict({"trainig": {"lr": 0.1}})


def test_unknown_override_suggests_the_known_one():
    with pytest.raises(ValueError, match=r"unknown key privacy\.epsilon \(did you mean privacy\.target_epsilon\?\)"):
        apply_overrides({}, {"privacy.epsilon": 8})
    with pytest.raises(ValueError, match=r"unknown key phy\.snr \(did you mean phy\.snr_db\?\)"):
        apply_overrides({}, {"phy.snr": 3})


def test_cli_set_unknown_key_suggests(tmp_path, capsys):
    scenario = tmp_path / "s.toml"
    scenario.write_text('[data]\nname = "digits"\n')
    assert main(["train", str(scenario), "--out", str(tmp_path / "run"), "--set", "privacy.epsilon=8"]) == 2
    assert "did you mean privacy.target_epsilon?" in capsys.readouterr().err


def test_missing_noise_multiplier_names_target_epsilon_and_calibrate():
    with pytest.raises(ValueError, match=r"phy\.central-gaussian\.noise_multiplier must be set") as info:
        scenario_from_dict({"phy": {"scheme": "central-gaussian", "normalization": "clip", "clip_norm": 1.0}})
    assert "privacy.target_epsilon" in str(info.value) and "floras calibrate" in str(info.value)


def test_floras_calibration_with_gamma_zero_says_raise_N(capsys):
    rc = main(["calibrate", "--scheme", "floras", "--K", "20", "--N", "20", "--L", "32", "--d", "100",
               "--target-epsilon", "8", "--rounds", "10"])
    err = capsys.readouterr().err
    text = " ".join(err.split())
    assert rc == 1 and "phy.floras.N = 20 leaves the scheme without privacy noise" in text and "change phy.floras.N" in text
    assert all(len(line) <= 200 for line in err.splitlines())
