"""The line of sight's Doppler over blocks in time (``phy.los_doppler``, model §5.1, phy/coherence.py).

h_{k,m} = √(κ/(κ+1))·e^{j(φ_k + ψ·b_m)} + √(1/(κ+1))·h̃_{k,m} with ψ = f_S/f_D·x, x = 2π·doppler·n_c, and b_m block
m's index in time, so (derived) E[h_m·h*_{m'}] = κ/(κ+1)·e^{jψ·(b_m − b_m')} + E[h̃_m·h̃*_{m'}]/(κ+1). The predictions
take x from the raw configuration, f_S/f_D = 0.7 from TR 38.901 §7.7.2 (or the configured value), κ and the taps
from the standard's profile (checked in tests/test_tdl.py) and J₀ from scipy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import j0

from phy.channels.tdl import los_k_factor, tdl_profile
from phy.coherence import draw_blocks
from phy.config import PhyConfig
from phy.link_channel import LinkChannel


def _mc_check(h: np.ndarray, R: np.ndarray) -> None:
    """Sample correlation of h [n, B] against R: E|h_i·h_k*|² ≤ E|h|⁴ = (2 + 4κ + κ²)/(κ + 1)² ≤ 2, so the mean's
    error has std ≤ √(2/n); 5 standard deviations."""
    n, B = h.shape
    for i in range(B):
        for k in range(i + 1):
            got = np.mean(h[:, i] * np.conj(h[:, k]))
            assert abs(got - R[i, k]) < 5 * math.sqrt(2.0 / n), (i, k, got, R[i, k])


def _draw(cfg: PhyConfig, *, K: int, B: int, rounds: int, seed: int = 3) -> np.ndarray:
    link = LinkChannel(cfg, K=K, seed=seed)
    return np.concatenate([link.draw(t, n_blocks=B) for t in range(rounds)])


def test_tdl_d_time_blocks_rotate_the_specular_part_at_0_7_of_the_maximum_doppler():
    """TDL-D over subcarriers with B_t = 3 time blocks each; the default f_S/f_D is the standard's 0.7. Plausible bugs
    caught: the specular phase held over the update (|1 − e^{j1.4}|·κ/(κ+1) = 1.15 off at one time block), the
    opposite rotation, the rotation indexed by block j instead of its time block j mod B_t, ψ = x (f_S = f_D)."""
    n_c, doppler, B_t, B, df, ds = 10, 2.0 / (20.0 * math.pi), 3, 6, 1e6, 100e-9  # x = 2π·doppler·n_c = 2.0
    cfg = PhyConfig.make(scheme="channel-inversion", coherence_symbols=n_c, fading_correlation="tdl", tdl_model="D",
                         delay_spread=ds, subcarrier_spacing=df, tdl_time_blocks=B_t, doppler=doppler)
    cfg.validate(K=4, d=100)
    h = _draw(cfg, K=5000, B=B, rounds=8)
    kappa, (tau, p) = los_k_factor("D"), tdl_profile("D", ds)
    x, psi = 2.0, 0.7 * 2.0
    m, b = np.arange(B) // B_t, np.arange(B) % B_t
    lag_b = b[:, None] - b[None, :]
    freq = np.exp(-2j * math.pi * df * (m[:, None] - m[None, :])[..., None] * tau) @ p
    R = (kappa * np.exp(1j * psi * lag_b) + j0(x * np.abs(lag_b)) * freq) / (kappa + 1.0)
    assert np.mean(np.abs(h) ** 2) == pytest.approx(1.0, abs=5 * math.sqrt(2.0 / h.size))
    _mc_check(h, R)
    info = LinkChannel(cfg, K=4, seed=0).describe()["fading"]
    assert info["los_doppler"] == 0.7 and info["los_phase_step"] == pytest.approx(psi, rel=1e-12)


def test_rician_jakes_exact_blocks_rotate_at_the_configured_ratio():
    """``rician_k`` with "jakes-exact" aging and an explicit f_S/f_D = −0.5 (the client moving away from the line
    of sight): E[h_m·h*_{m'}] = κ/(κ+1)·e^{−j0.5·x·(m − m')} + J₀(x·|m − m'|)/(κ+1)."""
    kappa, n_c, doppler, B = 3.0, 8, 0.01, 5
    x = 2.0 * math.pi * doppler * n_c
    cfg = PhyConfig.make(scheme="channel-inversion", coherence_symbols=n_c, fading_correlation="jakes-exact",
                         doppler=doppler, rician_k=kappa, los_doppler=-0.5)
    cfg.validate(K=4, d=100)
    h = _draw(cfg, K=5000, B=B, rounds=8, seed=5)
    lag = np.arange(B)[:, None] - np.arange(B)[None, :]
    R = (kappa * np.exp(-0.5j * x * lag) + j0(x * np.abs(lag))) / (kappa + 1.0)
    _mc_check(h, R)


def test_zero_ratio_is_the_constant_line_of_sight_and_one_time_block_is_unchanged():
    """f_S/f_D = 0 gives draw_blocks's constant specular phase bit for bit; TDL-D with B_t = 1 (no blocks in time)
    draws exactly what it drew before the option; block 0 never rotates."""
    kw = dict(coherence_symbols=10, fading_correlation="tdl", tdl_model="D", delay_spread=100e-9,
              subcarrier_spacing=60e3, doppler=0.01)
    kappa = los_k_factor("D")
    frozen = LinkChannel(PhyConfig.make(scheme="channel-inversion", tdl_time_blocks=4, los_doppler=0.0, **kw),
                         K=30, seed=9).draw(4, n_blocks=16)
    x = 2.0 * math.pi * 0.01 * 10
    same = draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", rician_k=kappa, tdl=("D", 100e-9, 60e3, 4, x))
    assert np.array_equal(frozen, same)
    moving = LinkChannel(PhyConfig.make(scheme="channel-inversion", tdl_time_blocks=4, **kw), K=30, seed=9).draw(4, n_blocks=16)
    np.testing.assert_allclose(moving[:, ::4], frozen[:, ::4], rtol=0, atol=1e-15)  # time block 0 of every subcarrier
    assert np.max(np.abs(moving - frozen)) > 0.1
    static = LinkChannel(PhyConfig.make(scheme="channel-inversion", **kw), K=30, seed=9).draw(4, n_blocks=16)
    assert np.array_equal(static, draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", rician_k=kappa,
                                              tdl=("D", 100e-9, 60e3, 1, x)))


@pytest.mark.parametrize("bad, match", [
    ({"los_doppler": 1.5}, r"los_doppler must be ≤ 1"),
    ({"los_doppler": float("nan")}, r"los_doppler must be a finite number"),
    ({"los_doppler": 0.5, "rician_k": 0.0}, r"los_doppler: the link has no line of sight"),
    ({"los_doppler": 0.5, "fading_correlation": "iid"}, r"los_doppler: the line of sight rotates only over blocks in time"),
    ({"los_doppler": 0.5, "fading_correlation": "tdl", "tdl_model": "D", "rician_k": 0.0},
     r"los_doppler: the line of sight rotates only over blocks in time"),
])
def test_los_doppler_out_of_range_or_unused_is_refused_by_name(bad, match):
    kw = {"coherence_symbols": 11, "fading_correlation": "jakes-exact", "doppler": 0.01, "rician_k": 2.0, **bad}
    with pytest.raises(ValueError, match=match) as info:
        PhyConfig.make(scheme="channel-inversion", **kw).validate(K=4, d=100)
    assert "\n" not in str(info.value)


def _sampled_moments(c: complex, kappa: float, g: float, rot: complex, n: int, seed: int):
    """The model of phy/csit_aging.py's Rician law drawn directly: h_0 = A·e^{jφ} + s_0, h_m = A·e^{jφ}·rot + c·s_0 +
    e, over |h_0|² ≥ g; returns the samples of w = Re(h_m/h_0)."""
    rng = np.random.default_rng(seed)
    s2 = 1.0 / (kappa + 1.0)
    A = math.sqrt(kappa * s2)

    def cn(var):
        return math.sqrt(var / 2.0) * (rng.standard_normal(n) + 1j * rng.standard_normal(n))

    phi = rng.uniform(0.0, 2.0 * math.pi, n)
    s0 = cn(s2)
    h0 = A * np.exp(1j * phi) + s0
    hm = A * np.exp(1j * phi) * rot + c * s0 + cn(s2 * (1.0 - abs(c) ** 2))
    return np.real(hm / h0)[np.abs(h0) ** 2 >= g]


@pytest.mark.parametrize("c, kappa, g, rot", [
    (0.6 * np.exp(0.4j), 3.0, 0.05, np.exp(1.1j)),
    (0.3 * np.exp(-2.0j), 7.9, 0.01, np.exp(-2.5j)),  # TDL-D's κ, the line of sight turned past π/2
    (0.9, 1.0, 0.3, 1.0),                              # no Doppler on the line of sight
])
def test_stale_weight_moments_match_the_rician_model_sampled_directly(c, kappa, g, rot):
    """phy.csit_aging.stale_weight_moments (model §5.1, derived) against 10⁶ direct draws: 5 standard errors of the
    sample. Plausible bugs caught: β without the A factor, the e-term's σ²(1 − |c|²) taken as (1 − |c|²), M_1 with the
    wrong sign (conjugate), the truncation's P(admitted) forgotten."""
    from phy.csit_aging import stale_weight_moments

    w = _sampled_moments(c, kappa, g, rot, 1_000_000, seed=11)
    mean, mse = stale_weight_moments(c, kappa=kappa, g_th=g, rotation=rot)
    assert abs(w.mean() - mean) < 5 * w.std() / math.sqrt(w.size), (w.mean(), mean)
    e2 = (w - 1.0) ** 2
    assert abs(e2.mean() - mse) < 5 * e2.std() / math.sqrt(e2.size), (e2.mean(), mse)


def test_stale_weight_moments_are_the_rayleigh_law_without_a_line_of_sight():
    """κ = 0: (Re c − 1)² + (1 − |c|²)·e^g·E₁(g)/2 and mean Re c (model §5.1's aging law)."""
    from scipy.special import exp1

    from phy.csit_aging import stale_weight_moments

    c, g = 0.5 * np.exp(0.7j), 0.02
    mean, mse = stale_weight_moments(c, kappa=0.0, g_th=g)
    assert mean == pytest.approx(c.real, rel=1e-12)
    assert mse == pytest.approx((c.real - 1) ** 2 + (1 - abs(c) ** 2) * math.exp(g) * exp1(g) / 2, rel=1e-12)
    # and the quadrature branch tends to it as κ → 0
    assert stale_weight_moments(c, kappa=1e-9, g_th=g)[1] == pytest.approx(mse, rel=1e-6)


def test_link_stale_weights_with_a_rotating_line_of_sight_follow_the_rician_law():
    """Channel inversion with block 0's CSIT over TDL-D time blocks (perfect CSI, 90 dB): the weights w_{k,j} of the
    admitted clients have the mean and mean squared error of stale_weight_moments with c_j = J₀(x·b)·R_f(m) (the
    scattered taps) and rotation e^{j·0.7·x·b}, x = 2π·doppler·n_c from the raw configuration. A line of sight held
    over the update (rotation 1) predicts a mean weight of 0.99 instead of −0.19 at time block 2 of subcarrier 0."""
    from phy.channel_inversion import ChannelInversionLink
    from phy.csit_aging import stale_weight_moments

    from stale_probe import stale_weights  # tests/stale_probe.py

    K, n_c, B_t, B, T, g, df, ds, doppler = 10, 10, 3, 6, 800, 0.1, 1e6, 100e-9, 0.02
    x = 2 * math.pi * doppler * n_c
    tau, p = tdl_profile("D", ds)
    cfg = PhyConfig.make(scheme="channel-inversion", snr_db=90.0, g_th=g, normalization="clip", clip_norm=1.0,
                         coherence_symbols=n_c, fading_correlation="tdl", tdl_model="D", delay_spread=ds,
                         subcarrier_spacing=df, tdl_time_blocks=B_t, doppler=doppler)
    w = stale_weights(ChannelInversionLink(cfg, K=K, seed=12), K=K, n_c=n_c, B=B, T=T)
    kappa = los_k_factor("D")
    for j in range(1, B):
        m, b = j // B_t, j % B_t
        c = j0(x * b) * np.sum(p * np.exp(-2j * math.pi * m * df * tau))
        mean, mse = stale_weight_moments(c, kappa=kappa, g_th=g, rotation=np.exp(0.7j * x * b))
        got, e2 = w[:, j], (w[:, j] - 1.0) ** 2
        assert abs(got.mean() - mean) < 5 * got.std() / math.sqrt(got.size), (j, got.mean(), mean)
        assert abs(e2.mean() - mse) < 5 * e2.std() / math.sqrt(e2.size), (j, e2.mean(), mse)
    c2 = j0(2 * x)  # time block 2 of subcarrier 0
    held = stale_weight_moments(c2, kappa=kappa, g_th=g)[0]
    turned = stale_weight_moments(c2, kappa=kappa, g_th=g, rotation=np.exp(1.4j * x))[0]
    assert held > 0.9 and turned < -0.1 and abs(w[:, 2].mean() - turned) < 0.05
