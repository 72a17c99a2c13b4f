"""``floras link --scheme sqsgd``: JSON fields, the two estimators' bias, and bad inputs (model §9.3)."""

import json
import math

import pytest

from scenarios.cli.main import main

COMMON = ["link", "--scheme", "sqsgd", "--K", "4", "--d", "40", "--rounds", "60", "--seed", "3", "--snr-db", "10",
          "--normalization", "clip", "--clip-norm", "6.3", "--sq-levels", "64", "--sq-ratio", "0.5",
          "--epsilon0", "2000"]


@pytest.mark.parametrize("estimator,expected", [("unbiased", 0.0), ("sparse", -0.5)])
def test_link_json_and_the_estimators_bias(tmp_path, capsys, estimator, expected):
    out = tmp_path / "link.json"
    assert main(COMMON + ["--sq-estimator", estimator, "--json", str(out)]) == 0
    assert "sqsgd" in capsys.readouterr().out
    s = json.loads(out.read_text())["schemes"]["sqsgd"]
    assert {"nmse", "bias", "m", "bits", "channel_uses"} <= set(s)
    # d̃ = 20, n = 32 coordinates of log2(64) = 6 bits, plus the 32-bit seed and 32-bit norm
    assert s["bits"] == 32 * 6 + 64
    assert s["m"] == pytest.approx(1.0, abs=1e-12)  # ε₀ = 2000 ≫ n·ln K_q: the cap keeps only u = v
    assert s["channel_uses"]["mean"] > 0
    # E[x̂] = x (unbiased) or (d̃/d)·x (sparse): the bias along the sum within 4 standard errors
    assert abs(s["bias_along_sum"] - expected) <= 4 * s["bias_along_sum_se"]
    assert s["bias_along_sum_se"] < 0.1  # the test can tell the two estimators apart


@pytest.mark.parametrize("flag,value,message", [
    ("--sq-levels", "1", "sqsgd.levels must be an integer ≥ 2"),
    ("--sq-ratio", "1.5", "sqsgd.ratio must be a number in (0, 1]"),
    ("--epsilon0", "0", "sqsgd.epsilon0 must be a finite number > 0"),
    ("--epsilon0", "inf", "sqsgd.epsilon0 must be a finite number > 0"),
    ("--kappa", "40", "sqsgd.kappa must be an integer in [-32, 31]"),
])
def test_bad_inputs_exit_2_with_one_line(capsys, flag, value, message):
    argv = list(COMMON)
    if flag in argv:
        i = argv.index(flag)
        argv[i + 1] = value
    else:
        argv += [flag, value]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("floras: error: ") and message in err and "\n" not in err
