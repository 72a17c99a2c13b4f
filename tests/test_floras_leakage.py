"""FLORAS's release given the pilots with chip-timing offsets (phy/floras_leakage.py; model §5.1, §7.2).

Given the pilots, ŝ^i = Σ_k [C_k·s_k^i + D_k·s_k^{i−1}] + ν^i with ν^i ~ N(0, σ_n²·‖A c‖²): checked against the
simulator's own chip-level round (the delayed chip stream of phy/floras_link.py), with updates 30 noise standard
deviations large so that a wrong weight (Ã replaced by A, the inter-slot term left out, a gain missing) leaves a
residual far above the noise; and without offsets against the model's factor c_k = g_k·b/r^s_{π(k)}.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from phy.config import PhyConfig
from phy.floras_leakage import release_given_pilots
from phy.schemes import make_aggregator

K, N, L, SNR_DB = 10, 16, 16, 10.0


def _link(tau: float, sequences: str = "walsh-hadamard", path: str = "chip", **phy):
    cfg = PhyConfig.make(scheme="floras", L=L, snr_db=SNR_DB, timing_offset=tau,
                         floras={"N": N, "path": path, "sequences": sequences}, **phy)
    return make_aggregator(cfg, K=K, d=1, seed=0, key=bytes(16)).link


@pytest.mark.parametrize("tau,sequences", [(0.0, "walsh-hadamard"), (0.5, "walsh-hadamard"), (0.99, "pn")])
def test_the_round_is_the_weighted_sum_plus_gaussian_noise_given_the_pilots(tau, sequences):
    link = _link(tau, sequences)
    d = 4000
    s = 30.0 * np.random.default_rng(1).standard_normal((K, d))  # 30 × the receiver noise's std per chip
    for t in (0, 3):
        rel = release_given_pilots(link, t)
        prev = np.hstack([np.full((K, 1), link.b), s[:, :-1]])  # s^0 = b, the pilot before slot 1
        resid = link.run_round(s, round_index=t).s_hat - (rel.C @ s + rel.D @ prev)
        # sample mean and variance of d i.i.d. N(0, Var ν): 5 standard errors each
        assert abs(resid.mean()) < 5.0 * math.sqrt(rel.noise_var / d), (tau, t)
        assert abs(resid.var() / rel.noise_var - 1.0) < 5.0 * math.sqrt(2.0 / d), (tau, t)
        if tau > 0:
            assert np.max(np.abs(rel.D)) > 0.05  # the inter-slot term is there and the check above saw it


def test_without_offsets_the_weights_are_the_models_factors_and_the_noise_its_variance():
    link = _link(0.0)
    sigma2_chip = 1.0 / 10.0 ** (SNR_DB / 10.0) / L  # P = 1: σ² = P/SNR over L chips
    for t in range(5):
        rnd = link.run_round(np.zeros((K, 1)), round_index=t)
        rel = release_given_pilots(link, t)
        np.testing.assert_allclose(rel.C, rnd.gains * 1.0 / rnd.r_ref[rnd.active], rtol=1e-12)
        assert np.all(rel.D == 0.0)
        assert rel.noise_var == pytest.approx(sigma2_chip * float(np.sum(rnd.r_ref ** -2.0)), rel=1e-12)
        assert rel.V == pytest.approx(rnd.V, rel=1e-12)
        assert np.array_equal(rel.active, rnd.active)
        # Λ_k ≤ c_k²/V: the whole noise variance is at least the inactive part of §6.1
        assert np.all(rel.loss <= rel.C**2 / rel.V * (1.0 + 1e-12))


def test_several_antennas_and_coherence_blocks_are_refused_naming_the_key():
    with pytest.raises(ValueError, match="rx_antennas = 2"):
        release_given_pilots(_link(0.0, path="auto", rx_antennas=2), 0)
    with pytest.raises(ValueError, match="coherence_symbols = 64"):
        release_given_pilots(_link(0.0, path="auto", coherence_symbols=64), 0)


def test_chip_rounds_with_offsets_carry_the_loss_and_floras_link_reports_it(tmp_path, capsys):
    """A chip-path round with offsets and γ > 0 carries Λ_k (the release_given_pilots of its own pilots); without
    offsets it carries none. `floras link` reports the median and 99th percentile of γ²·Λ over every client and round
    in its table and the 50/90/99 % quantiles in its JSON, beside the synchronous χ²₁ reference."""
    import json

    from scenarios.cli.main import main

    link = _link(0.2)
    for t in range(3):
        rnd = link.run_round(np.zeros((K, 5)), round_index=t)
        np.testing.assert_allclose(rnd.pilot_loss, release_given_pilots(link, t).loss, rtol=1e-12)
    assert _link(0.0).run_round(np.zeros((K, 5)), round_index=0).pilot_loss is None

    args = ["link", "--K", str(K), "--N", str(N), "--L", str(L), "--d", "20", "--rounds", "30", "--seed", "0",
            "--scheme", "floras", "--snr-db", "30", "--path", "chip"]
    assert main([*args, "--set", "phy.timing_offset=0.2", "--json", str(tmp_path / "t.json")]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("floras "))
    assert "loss given pilots gamma^2*Lambda median=" in row and "(synchronous 0.455, 6.63)" in row
    text = json.dumps(json.loads((tmp_path / "t.json").read_text()))
    assert '"loss_given_pilots"' in text and '"values": 300' in text  # K = 10 clients × 30 rounds
    assert main([*args, "--json", str(tmp_path / "s.json")]) == 0
    assert "loss given pilots" not in capsys.readouterr().out
    assert '"loss_given_pilots"' not in (tmp_path / "s.json").read_text()
