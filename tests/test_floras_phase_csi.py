"""FLORAS with phase CSIT from an estimate (model §5.1, "Imperfect CSI"; phy.floras_link.FlorasLink.gains): client k
pre-rotates by the phase of ĥ_k = h_k + e_k, e_k ~ CN(0, σ_e²·β_eff,k), so its gain is g_k = Re(h_k·ĥ_k*)/|ĥ_k|.
Predictions from the estimation model: given ĥ, h = ĥ/(1 + σ_e²) + w with w ~ CN(0, σ_e²/(1 + σ_e²)) independent
(the MMSE decomposition of jointly Gaussian h, ĥ), so g = |ĥ|/(1 + σ_e²) + Re(w·ĥ*/|ĥ|) with |ĥ|² ~ Exp(1 + σ_e²):
E[g] = (√π/2)/√(1 + σ_e²), E[g²] = (1 + σ_e²/2)/(1 + σ_e²), and (E[Φ(−a·X)] = ½(1 − aς/√(1 + a²ς²)) for a Rayleigh X
of scale ς, here a²ς² = 1/σ_e²) P(g < 0) = ½(1 − 1/√(1 + σ_e²))."""

from __future__ import annotations

import math
from dataclasses import replace

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


def test_the_audit_refuses_the_t1_game_and_measures_t2():
    """The T1 game's likelihood ratio takes the gains exact: refused with an estimate; the T2 measurements run on the
    estimated-phase gains (tests/test_audit_blocks.py) and report the estimated-phase P_D."""
    from scenarios.audit.experiment import measure_t2, run_audit

    link = _link(0.1)
    with pytest.raises(ValueError, match=r"^csi_error: floras audit's T1 game takes FLORAS's phase CSIT exact"):
        run_audit(link.config, threat="T1", K=20, d=10, trials=4, rounds=2, seed=0, key=KEY)
    res = measure_t2(link.config, K=20, d=10, rounds=2, seed=0, key=KEY, persistence=(0.0,))
    assert 0.0 < res["detection"]["detection_probability_theory"] < 1.0


def test_the_runs_accountant_keeps_epsilon_and_bounds_the_link_over_the_estimated_gains():
    """ε (the idealised release) is the same with and without the estimation error; ε_link is derived over the gain
    law of the estimate's phase: finite where exact phase CSIT's is, at least ε, growing with σ_e² (more gains near 0,
    heavier factors: at 60 dB, K = 4, T = 3, 0.48 exact against 73 and 587), and its text names the law."""
    from test_floras_cell_privacy import _accountant  # noqa: E402

    from privacy.link_epsilon import floras_link_epsilon

    exact = _accountant({"floras": {"N": 8, "csit": "phase"}, "snr_db": 60.0})
    links = {e: floras_link_epsilon(_accountant({"floras": {"N": 8, "csit": "phase"}, "csi_error": e, "snr_db": 60.0}),
                                    rounds=3) for e in (0.01, 0.1)}
    est = _accountant({"floras": {"N": 8, "csit": "phase"}, "csi_error": 0.1, "snr_db": 60.0})
    assert est.epsilon(rounds=3) == exact.epsilon(rounds=3)
    base = floras_link_epsilon(exact, rounds=3)[0]
    assert est.epsilon(rounds=3) <= base < links[0.01][0] < links[0.1][0] < math.inf
    assert "σ_e² = 0.1: g = |h|·cos(∠h − ∠ĥ)" in links[0.1][1]["assumptions"][0]


# ---------------------------------------------------------------- the link bound's gain law (privacy/link.py)
@pytest.mark.parametrize("err", [1e-3, 0.1, 2.0])
def test_the_gain_density_is_the_links_own_gains(err):
    """privacy.gain_laws.estimated_phase_density (the closed-form convolution of model §5.1) integrates to 1, has
    E g² = (1 + σ_e²/2)/(1 + σ_e²), and its CDF matches the link's own |g| (FlorasLink.gains, 3 000 rounds of 20
    clients) by Kolmogorov–Smirnov at α = 10⁻³. Caught: τ² = σ_e²/λ instead of σ_e²/(2λ), the Rayleigh scale
    1 instead of 1/λ, the folding of negative gains dropped."""
    from scipy import integrate, stats

    from privacy.gain_laws import estimated_phase_density

    f = estimated_phase_density(err)
    assert integrate.quad(f, 0, np.inf)[0] == pytest.approx(1.0, abs=1e-9)
    assert integrate.quad(lambda r: r * r * f(r), 0, np.inf)[0] == pytest.approx((1 + err / 2) / (1 + err), rel=1e-8)
    g = np.abs(np.concatenate([_link(err).gains(t) for t in range(3000)]))
    cdf = np.vectorize(lambda x: integrate.quad(f, 0, x)[0])
    assert stats.kstest(g[:20000], cdf).pvalue > 1e-3


def test_the_density_tends_to_the_exact_laws_and_its_ratio_to_r_decreases():
    """σ_e² → 0: the Rayleigh density 2r·e^{−r²} (phase CSIT); σ_e² → ∞: |N(0, ½)| (no CSIT); and f(r)/r is
    decreasing for every σ_e² (derived in model §5.1: what the cell grid's weight (β_up/β) needs)."""
    from privacy.gain_laws import estimated_phase_density, gain_density

    r = np.linspace(0.05, 4.0, 400)
    np.testing.assert_allclose(estimated_phase_density(1e-8)(r), [gain_density("phase")(x) for x in r], rtol=1e-3)
    np.testing.assert_allclose(estimated_phase_density(1e6)(r), [gain_density("none")(x) for x in r], rtol=1e-3)
    rr = np.linspace(1e-3, 6.0, 20001)
    for err in (1e-4, 0.01, 0.3, 3.0):
        q = estimated_phase_density(err)(rr) / rr
        assert np.all(np.diff(q) < 0)


@pytest.mark.parametrize("err, c_max", [(0.1, 1.5), (0.5, 3.0)])
def test_the_exceed_probability_matches_a_monte_carlo_of_the_factor(err, c_max):
    """P(|c| > c_max), c = u/(u + n), u = g·√(L·SNR), g = |h|·cos(∠h − ∠ĥ), n ~ N(0, 1), against 2·10⁶ draws
    (5 binomial standard deviations); at 30 dB at least 5 times the exact phase's; and with a cell of 600 distinct gains (above the exact mean's 512) the grid's
    bound is at least the exact mean of its two halves and within 2 % of it. Caught: the Rayleigh law of exact phase
    CSIT kept (P 5 to 20 times smaller at 30 dB)."""
    from privacy.link import LinkModel, exceed_probability

    rng, n, snr_db, L = np.random.default_rng(5), 2_000_000, 5.0, 4
    h = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2)
    hh = h + math.sqrt(err / 2) * (rng.standard_normal(n) + 1j * rng.standard_normal(n))
    u = np.real(h * hh.conj()) / np.abs(hh) * math.sqrt(L * 10 ** (snr_db / 10))
    mc = np.mean(np.abs(u / (u + rng.standard_normal(n))) > c_max)
    p = exceed_probability(c_max, LinkModel(snr_db, L=L, csit="phase", csi_error=err))
    assert abs(p - mc) < 5 * math.sqrt(p * (1 - p) / n), (p, mc)
    # at high SNR the tail is the gains near 0: a density 2r at 0 (exact phase) against f(0) > 0, P ∝ 1/a² against 1/a
    hi = LinkModel(30.0, L=32, csit="phase")
    assert exceed_probability(5.0, replace(hi, csi_error=err)) > 5 * exceed_probability(5.0, hi)
    betas = tuple(np.logspace(-1, 1, 600))
    grid = exceed_probability(c_max, LinkModel(snr_db, L=L, csit="phase", csi_error=err, gain_scales=betas))
    halves = [exceed_probability(c_max, LinkModel(snr_db, L=L, csit="phase", csi_error=err, gain_scales=b))
              for b in (betas[:300], betas[300:])]
    exact = 0.5 * sum(halves)
    assert exact <= grid <= 1.02 * exact


def test_a_link_model_refuses_what_is_not_derived():
    from privacy.link import LinkModel

    for kw in (dict(csit="none"), dict(csit="phase", rician_k=3.0), dict(csit="none", antennas=2)):
        with pytest.raises(ValueError, match=r"csi_error = 0.1 is derived for phase CSIT over Rayleigh gains"):
            LinkModel(20.0, csi_error=0.1, **kw)
    with pytest.raises(ValueError, match=r"csi_error must be a finite number ≥ 0"):
        LinkModel(20.0, csit="phase", csi_error=-1.0)


# ---------------------------------------------------------------- a pilot and an estimate per coherence block
def test_per_block_pilots_pre_rotate_every_block_by_its_own_estimate():
    """With floras.pilots = "per-block" and B blocks, block m's gain is |h_{k,m}|·cos(∠h_{k,m} − ∠ĥ_{k,m}),
    ĥ = h + √(σ_e²/2)·(z₀ + j·z₁) from the [2, K, B] normals of (seed, "csi-error", t) (the channel inversion
    stream): recomputed here from the link's channel draw. Caught: one estimate for the whole update, the true
    phase kept in blocks m ≥ 1, the error drawn per block from another stream."""
    from phy.link_channel import LinkChannel
    from phy.randomness import stream

    err, K, d, n_c, t = 0.2, 6, 60, 10, 4
    cfg = PhyConfig.make(scheme="floras", L=32, snr_db=30.0, normalization="clip", clip_norm=1.0, csi_error=err,
                         coherence_symbols=n_c, floras={"N": 8, "csit": "phase", "pilots": "per-block"})
    cfg.validate(K=K, d=d)
    link = FlorasLink(cfg, K=K, seed=5, key=KEY)
    B = d // (n_c - 1) + (d % (n_c - 1) > 0)  # a pilot slot per block: ⌈d/(n_c − 1)⌉ blocks (model §5.1)
    rnd = link.run_round(np.zeros((K, d)), round_index=t)
    assert rnd.gain_blocks.shape == (K, B)
    h = LinkChannel(cfg, K=K, seed=5).draw(t, n_blocks=B)
    z = stream(5, "csi-error", t).standard_normal((2, K, B))
    h_hat = h + math.sqrt(err / 2) * (z[0] + 1j * z[1])
    want = np.abs(h) * np.cos(np.angle(h) - np.angle(h_hat))
    np.testing.assert_allclose(rnd.gain_blocks, want, rtol=1e-12, atol=1e-14)
    assert np.any(want < 0) or np.all(np.abs(want - np.abs(h)) > 0)  # not the exact phase's |h|


def test_per_block_pilots_take_the_estimated_gain_law_and_a_stale_pilot_is_refused():
    """The link model accepts σ_e² with B blocks (a pilot per block): ε_link over the estimate's gain law, at least the
    one-block value (the union over T·K·B factors) and above exact phase CSIT's at the same B. A stale pilot with an
    estimated phase is refused in the model and in the configuration, with the key to change."""
    from privacy.link import LinkModel
    from privacy.link_epsilon import floras_link_epsilon
    from test_floras_cell_privacy import _accountant  # noqa: E402

    with pytest.raises(ValueError, match=r"csi_error = 0.1 is derived for phase CSIT over Rayleigh gains, one antenna "
                                         r"and a pilot per block \(.*stale = True\)"):
        LinkModel(20.0, csit="phase", csi_error=0.1, blocks=3, stale=(1.0, 0.9, 0.8))
    LinkModel(20.0, csit="phase", csi_error=0.1, blocks=3)
    phy = {"floras": {"N": 8, "csit": "phase", "pilots": "per-block"}, "snr_db": 60.0, "coherence_symbols": 11}
    one = floras_link_epsilon(_accountant({"floras": {"N": 8, "csit": "phase"}, "csi_error": 0.01, "snr_db": 60.0}),
                              rounds=3)[0]
    exact = floras_link_epsilon(_accountant(phy), rounds=3)[0]
    est = floras_link_epsilon(_accountant({**phy, "csi_error": 0.01}), rounds=3)[0]
    assert one <= est < math.inf and exact < est
    stale = {**phy, "floras": {**phy["floras"], "pilots": "stale"}, "csi_error": 0.01}
    with pytest.raises(ValueError, match=r"csi_error: FLORAS's phase CSIT from an estimate is modelled with a pilot"):
        PhyConfig.make(scheme="floras", **stale).validate(K=4, d=40)
