"""FLORAS with phase CSIT from an estimate (model §5.1, "Imperfect CSI"; phy.floras_link.FlorasLink.gains): client k
pre-rotates by the phase of ĥ_k = h_k + e_k, e_k ~ CN(0, σ_e²·β_eff,k), so its gain is g_k = Re(h_k·ĥ_k*)/|ĥ_k|.
Predictions from the estimation model: given ĥ, h = ĥ/(1 + σ_e²) + w with w ~ CN(0, σ_e²/(1 + σ_e²)) independent
(the MMSE decomposition of jointly Gaussian h, ĥ), so g = |ĥ|/(1 + σ_e²) + Re(w·ĥ*/|ĥ|) with |ĥ|² ~ Exp(1 + σ_e²):
E[g] = (√π/2)/√(1 + σ_e²), E[g²] = (1 + σ_e²/2)/(1 + σ_e²), and (E[Φ(−a·X)] = ½(1 − aς/√(1 + a²ς²)) for a Rayleigh X
of scale ς, here a²ς² = 1/σ_e²) P(g < 0) = ½(1 − 1/√(1 + σ_e²))."""

from __future__ import annotations

import math

import numpy as np
import pytest

from phy.config import PhyConfig
from phy.floras_link import FlorasLink

KEY = bytes(range(32))


def _link(err: float, path: str = "auto", *, N: int = 32, snr_db: float = 20.0):
    cfg = PhyConfig.make(scheme="floras", L=32, snr_db=snr_db, normalization="clip", clip_norm=1.0, csi_error=err,
                         floras={"N": N, "csit": "phase", "path": path})
    return FlorasLink(cfg, K=20, seed=3, key=KEY)


@pytest.mark.parametrize("err", [0.05, 0.5])
def test_the_gains_have_the_estimation_models_moments(err):
    """4 000 rounds of 20 clients: the mean and mean square of g and the fraction of negative gains (a phase error
    beyond 90°) against the formulas (5 standard errors). Caught: the gain of the estimate |ĥ| instead of the true
    channel's projection (never negative), the error not scaled by σ_e² (or by 2 per component)."""
    link = _link(err)
    g = np.concatenate([link.gains(t) for t in range(4000)])
    n = g.size
    assert abs(g.mean() - math.sqrt(math.pi) / 2 / math.sqrt(1 + err)) < 5 * g.std() / math.sqrt(n)
    assert abs((g * g).mean() - (1 + err / 2) / (1 + err)) < 5 * (g * g).std() / math.sqrt(n)
    p = 0.5 * (1 - 1 / math.sqrt(1 + err))
    assert abs((g < 0).mean() - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_perfect_csi_is_todays_link_and_the_ratio_receiver_stays_unbiased():
    """σ_e² = 0 gives |h| bit for bit. With σ_e² = 0.1, N = K (no inactive sequence) and 80 dB the gain cancels in
    the ratio b·r_j/r_j^s on every path, so ŝ is the sum to 10⁻³ (a data slot and its reference carrying different
    gains would not cancel: a relative error of order σ_e)."""
    exact, plain = _link(0.0), FlorasLink(PhyConfig.make(scheme="floras", L=32, snr_db=20.0, normalization="clip",
                                                         clip_norm=1.0, floras={"N": 32, "csit": "phase"}),
                                           K=20, seed=3, key=KEY)
    for t in range(5):
        np.testing.assert_array_equal(exact.gains(t), np.abs(plain.channel.draw(t)[:, 0]))
    s = np.random.default_rng(0).standard_normal((20, 200)) * 0.05
    for path in ("fast", "sufficient", "chip"):
        out = _link(0.1, path, N=20, snr_db=80.0).run_round(s, round_index=1)
        err = np.sum((out.s_hat - s.sum(axis=0)) ** 2) / np.sum(s.sum(axis=0) ** 2)
        assert err < 1e-6, (path, err)


def test_the_run_states_no_link_bound_and_the_audit_refuses():
    from scenarios.audit.experiment import measure_t2, run_audit

    link = _link(0.1)
    with pytest.raises(ValueError, match=r"^csi_error: floras audit takes FLORAS's phase CSIT exact"):
        measure_t2(link.config, K=20, d=10, rounds=2, seed=0, key=KEY)
    with pytest.raises(ValueError, match=r"^csi_error: floras audit"):
        run_audit(link.config, threat="T1", K=20, d=10, trials=4, rounds=2, seed=0, key=KEY)


def test_the_runs_accountant_keeps_epsilon_and_states_no_link_bound():
    """ε (the idealised release) is the same with and without the estimation error; ε_link is not stated, with the
    reason, where phase CSIT is exact it is (a number or ∞)."""
    from test_floras_cell_privacy import _accountant  # noqa: E402

    from privacy.link import floras_link_epsilon

    exact = _accountant({"floras": {"N": 8, "csit": "phase"}})
    est = _accountant({"floras": {"N": 8, "csit": "phase"}, "csi_error": 0.1})
    assert est.epsilon(rounds=3) == exact.epsilon(rounds=3)
    eps, info = floras_link_epsilon(est, rounds=3)
    assert eps is None and "phase CSIT from an estimate (csi_error = 0.1)" in info["assumptions"][0]
    assert floras_link_epsilon(exact, rounds=3)[0] is not None
