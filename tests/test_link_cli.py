"""``floras link``: summary contents and bad-input handling."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from phy.fading import draw_rayleigh
from scenarios.cli.main import main


def test_link_writes_summary(tmp_path, capsys):
    out = tmp_path / "sub" / "link.json"
    rc = main(["link", "--scheme", "floras", "channel-inversion", "ideal", "--K", "4", "--N", "6", "--L", "8",
               "--d", "64", "--rounds", "30", "--json", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "SNR = P/sigma^2" in printed and "equal resource" in printed
    data = json.loads(out.read_text())
    assert data["parameters"]["K"] == 4 and data["parameters"]["rounds"] == 30
    fl = data["schemes"]["floras"]
    assert set(fl["nmse"]) >= {"mean", "median"}
    inn = fl["inactive_noise"]
    assert inn["cauchy_scale_expected"] == 2  # the fitted scale against N − K: test_independent_predictions.py
    assert list(inn["v_quantiles"]) == ["5", "25", "50", "75", "95"]
    assert isinstance(inn["within_round_excess_kurtosis"], float)
    # admitted = #{k: |h_k|² ≥ g_th} of the keyed fading draw, recomputed here from the draw itself
    admitted = [int(np.sum(np.abs(draw_rayleigh(0, t, K=4)) ** 2 >= 0.01)) for t in range(30)]
    ci = data["schemes"]["channel-inversion"]["admitted"]
    assert (ci["mean"], ci["min"], ci["max"]) == (pytest.approx(np.mean(admitted), rel=1e-12), min(admitted), max(admitted))
    assert data["schemes"]["ideal"]["nmse"]["mean"] < 1e-20
    assert not list(out.parent.glob("*.tmp"))  # atomic write leaves no temporary file


def test_link_is_reproducible(tmp_path):
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for p in paths:
        assert main(["link", "--scheme", "floras", "--K", "3", "--N", "5", "--L", "8", "--d", "16", "--rounds", "5",
                     "--seed", "2", "--json", str(p)]) == 0
    a, b = (json.loads(p.read_text())["schemes"]["floras"] for p in paths)
    assert a["nmse"] == b["nmse"] and a["inactive_noise"] == b["inactive_noise"]


BAD = [
    (["--K", "20", "--N", "10"], "N must be an integer ≥ 20"),
    (["--N", "40", "--L", "32"], "N must be ≤ L"),
    (["--L", "24", "--N", "20"], "L must be a power of two"),
    (["--snr-db", "nan"], "snr_db must be a finite"),
    (["--snr-db", "inf"], "snr_db must be a finite"),
    (["--d", "0"], "d must be an integer ≥ 1"),
    (["--g-th", "0"], "g_th must be a finite number > 0"),
    (["--g-th", "-1"], "g_th must be a finite number > 0"),
    (["--key-hex", "00112233"], "key-hex must be at least 32 hex digits"),
    (["--rounds", "0"], "rounds must be an integer ≥ 1"),
    (["--K", "0"], "K must be an integer ≥ 1"),
    (["--seed", "-1"], "seed must be an integer in [0, 2**63)"),
    (["--chunk-size", "0"], "chunk_size must be an integer ≥ 1"),
    (["--normalization", "clip"], "clip_norm must be set"),
    (["--path", "fast", "--sequences", "pn"], "path must be 'chip' or 'auto'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--scheme", "magic"], "--scheme must be one of {floras, channel-inversion, ideal"),
]


@pytest.mark.parametrize("extra, message", BAD)
def test_bad_input_exits_nonzero_with_one_line(extra, message, capsys):
    rc = main(["link", "--rounds", "1", *extra] if "--rounds" not in extra else ["link", *extra])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert message in err
    assert len(err.splitlines()) == 1


def test_console_command_prints_no_traceback():
    floras = Path(sys.executable).with_name("floras")
    proc = subprocess.run([str(floras), "link", "--key-hex", "abcd"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("floras: error: key-hex")


def test_link_private_baselines_json(tmp_path):
    out = tmp_path / "base.json"
    rc = main(["link", "--scheme", "central-gaussian", "analog-gaussian", "ddgauss", "floras", "--K", "4", "--N", "6",
               "--L", "8", "--d", "100", "--rounds", "5", "--normalization", "clip", "--clip-norm", "12",
               "--noise-multiplier", "0.5", "--local-std", "0.3", "--bits", "12", "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["parameters"]["noise_multiplier"] == 0.5 and data["parameters"]["dd_bits"] == 12
    s = data["schemes"]
    assert s["floras"]["channel_uses"]["mean"] == 101 * 8
    assert s["central-gaussian"]["channel_uses"]["mean"] == 100 * 8
    assert s["central-gaussian"]["threat_model"] == "trusted server; outputs only"
    assert s["analog-gaussian"]["diagnostics_mean"]["noise_std_effective"] >= s["analog-gaussian"]["diagnostics_mean"]["noise_std_target"]
    dd = s["ddgauss"]
    assert dd["d_pad"] == 128 and dd["diagnostics_mean"]["bits_per_client"] == 128 * 12
    assert dd["channel_uses"]["min"] > 0 and dd["nmse"]["mean"] > 0


@pytest.mark.parametrize("extra, message", [
    (["--scheme", "ddgauss"], "normalization must be 'clip' for scheme 'ddgauss' (got 'paper'): its epsilon needs a public clip norm"),
    (["--scheme", "central-gaussian", "--normalization", "clip", "--clip-norm", "1"], "noise_multiplier must be set"),
    (["--scheme", "ddgauss", "--normalization", "clip", "--clip-norm", "1", "--bits", "1"], "ddgauss.bits must be an integer"),
    (["--scheme", "ddgauss", "--normalization", "clip", "--clip-norm", "1", "--beta", "1"], "ddgauss.beta must be"),
])
def test_private_baselines_bad_input(extra, message, capsys):
    assert main(["link", "--rounds", "1", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_json_to_stdout_and_a_key_file_that_is_never_written(tmp_path, capsys, monkeypatch):
    key_hex = "0f1e2d3c4b5a69788796a5b4c3d2e1f00123456789abcdef"
    key_file = tmp_path / "key"
    key_file.write_text(key_hex)
    key_file.chmod(0o600)
    monkeypatch.chdir(tmp_path)
    rc = main(["link", "--scheme", "floras", "--K", "4", "--N", "6", "--L", "8", "--d", "16", "--rounds", "2",
               "--key-file", str(key_file), "--json", "-"])
    assert rc == 0 and not (tmp_path / "-").exists()
    data = json.loads(capsys.readouterr().out)  # only the JSON goes to standard output
    assert data["parameters"]["key"].startswith("user-supplied (--key-file), key id ")
    out = tmp_path / "link.json"
    assert main(["link", "--scheme", "floras", "--K", "4", "--N", "6", "--L", "8", "--d", "16", "--rounds", "2",
                 "--key-file", str(key_file), "--json", str(out)]) == 0
    for needle in (key_hex.encode(), key_hex.upper().encode(), bytes.fromhex(key_hex)):
        assert needle not in out.read_bytes()


def test_several_snrs_give_one_block_each_equal_to_the_single_snr_run(tmp_path, capsys):
    common = ["link", "--scheme", "floras", "channel-inversion", "--K", "3", "--N", "5", "--L", "8", "--d", "16",
              "--rounds", "3"]
    both, one = tmp_path / "both.json", tmp_path / "one.json"
    assert main([*common, "--snr-db", "0", "20", "--json", str(both)]) == 0
    assert capsys.readouterr().out.count("link-level comparison:") == 2  # one table per SNR
    assert main([*common, "--snr-db", "20", "--json", str(one)]) == 0
    data, single = json.loads(both.read_text()), json.loads(one.read_text())
    assert list(data) == ["by_snr"] and list(data["by_snr"]) == ["0.0", "20.0"]
    assert data["by_snr"]["20.0"]["schemes"]["floras"]["nmse"] == single["schemes"]["floras"]["nmse"]
    assert data["by_snr"]["0.0"]["parameters"]["snr_db"] == 0.0 and single["parameters"]["snr_db"] == 20.0
    ci = [data["by_snr"][s]["schemes"]["channel-inversion"]["nmse"]["mean"] for s in ("0.0", "20.0")]
    assert ci[1] < ci[0]


def test_csv_has_a_row_per_snr_and_scheme_with_the_one_round_epsilon(tmp_path):
    import csv
    import math

    from privacy import RunAccountant

    path = tmp_path / "study.csv"
    z = 1.5
    assert main(["link", "--scheme", "central-gaussian", "ideal", "--normalization", "clip", "--clip-norm", "1",
                 "--noise-multiplier", str(z), "--K", "5", "--d", "16", "--rounds", "2", "--snr-db", "0", "10",
                 "--csv", str(path)]) == 0
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["snr_db"], r["scheme"]) for r in rows] == [("0.0", "central-gaussian"), ("0.0", "ideal"),
                                                          ("10.0", "central-gaussian"), ("10.0", "ideal")]
    for r in rows:
        assert math.isclose(float(r["nmse_db"]), 10 * math.log10(float(r["nmse_mean"])), rel_tol=1e-9)
        assert float(r["channel_uses_mean"]) > 0
    # one round, K = M (no sampling amplification), δ = 1e-5; replace-one: sensitivity 2R, noise std z·2R
    want = RunAccountant("gaussian", K=5, M=5, clip_norm=1.0, noise_std=z * 2.0).epsilon(rounds=1)
    assert [float(r["epsilon"]) for r in rows if r["scheme"] == "central-gaussian"] == [pytest.approx(want, rel=1e-9)] * 2
    assert all(r["epsilon"] == "" for r in rows if r["scheme"] == "ideal")  # no privacy noise, no ε
