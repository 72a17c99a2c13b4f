"""Doppler within the update over TDL subcarriers (``phy.tdl_time_blocks``, model §5.1, phy/channels/tdl.py).

Block j lies on subcarrier ⌊j/B_t⌋ in time block j mod B_t; every tap is a Clarke process in time, so
E[h_j·h_j'*] = J₀(x·(b − b'))·Σ_l p_l·exp(−j2π·(m − m')·Δf·τ_l), x = 2π·doppler·n_c (derived). The predictions here
take the taps from tdl_profile (the standard's table, checked in tests/test_tdl.py) and J₀ from scipy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import exp1, j0

from phy.channels.tdl import tdl_profile
from phy.coherence import draw_blocks
from phy.config import PhyConfig
from phy.fading import draw_rayleigh

from stale_probe import stale_weights  # tests/stale_probe.py


def _predicted(model, ds, df, B, B_t, x) -> np.ndarray:
    """R [B, B] = J₀(x·|b − b'|)·Σ_l p_l·exp(−j2π·(m − m')·Δf·τ_l), block j = (m, b) = (⌊j/B_t⌋, j mod B_t)."""
    tau, p = tdl_profile(model, ds)
    m, b = np.arange(B) // B_t, np.arange(B) % B_t
    freq = np.exp(-2j * math.pi * df * (m[:, None] - m[None, :])[..., None] * tau) @ p
    return j0(x * np.abs(b[:, None] - b[None, :])) * freq


def test_doppler_blocks_have_the_separable_clarke_and_profile_correlation():
    """Plausible bugs caught: the AR(1) law ρ^Δ for J₀ (J₀(2)² = 0.05 against J₀(4) = −0.40 at two blocks), time
    and frequency indices swapped, innovations not scaled by the tap powers (non-unit power)."""
    model, ds, df, B_t, B, x = "A", 100e-9, 1e6, 3, 6, 2.0
    K, rounds = 5000, 8
    h = np.concatenate([draw_blocks(4, t, K=K, n_blocks=B, correlation="tdl", tdl=(model, ds, df, B_t, x))
                        for t in range(rounds)])
    n = h.shape[0]
    R = _predicted(model, ds, df, B, B_t, x)
    assert abs(R[2, 0] - j0(4.0)) < 1e-12 and abs(R[3, 0] - _predicted(model, ds, df, 2, 1, 0)[1, 0]) < 1e-12  # (1, 0)
    for i in range(B):
        for k in range(i + 1):
            got = np.mean(h[:, i] * np.conj(h[:, k]))
            # E|h_i h_k*|² = 1 + |R|² ≤ 2 (unit-power circular Gaussians): the mean's error has std ≤ √(2/n)
            assert abs(got - R[i, k]) < 5 * math.sqrt(2.0 / n), (i, k, got, R[i, k])


def test_one_time_block_is_the_static_draw_and_block_zero_the_flat_one():
    static = draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", tdl=("B", 100e-9, 60e3))
    assert np.array_equal(static, draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", tdl=("B", 100e-9, 60e3, 1, 0.7)))
    moving = draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", tdl=("B", 100e-9, 60e3, 4, 0.7))
    assert np.array_equal(moving[:, 0], draw_rayleigh(9, 4, K=30))
    # zero Doppler: every time block of a subcarrier is its static gain (subcarrier m at column 4m there, m here)
    frozen = draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", tdl=("B", 100e-9, 60e3, 4, 0.0))
    np.testing.assert_allclose(frozen, np.repeat(static[:, :4], 4, axis=1), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("bad, match", [
    ({"tdl_time_blocks": 0}, r"tdl_time_blocks must be"),
    ({"tdl_time_blocks": 2, "fading_correlation": "jakes-exact"}, r"tdl_time_blocks = 2: .* need fading_correlation = 'tdl'"),
    ({"tdl_time_blocks": 2, "tdl_model": "D"}, r"tdl_time_blocks: the Doppler of TDL-D's specular component"),
    ({"tdl_time_blocks": 5000}, r"tdl_time_blocks must be ≤ 4096"),
])
def test_tdl_time_blocks_out_of_range_are_refused_by_name(bad, match):
    kw = {"coherence_symbols": 11, "fading_correlation": "tdl", "doppler": 0.01, **bad}
    with pytest.raises(ValueError, match=match) as info:
        PhyConfig.make(scheme="channel-inversion", **kw).validate(K=4, d=100)
    assert "\n" not in str(info.value)


def test_stale_csit_weights_age_in_time_and_across_the_band():
    """Channel inversion with block 0's CSIT over a doubly selective update: w_{k,j} = Re(h_{k,j}/h_{k,0}) has mean
    Re r_j and variance (1 − |r_j|²)·e^g·E₁(g)/2 over the admitted clients, r_j = J₀(x·b)·R_f(m) (the aging law of
    model §5.1 with the separable correlation). As tests/test_tdl.py: client k sends 1 on entry k of every block,
    90 dB. Through the configuration (doppler, coherence_symbols, tdl_time_blocks), so a wrong lag x = 2π·doppler·n_c
    (or the time blocks ignored) fails."""
    from phy.channel_inversion import ChannelInversionLink

    K, n_c, B_t, B, T, g, df, ds, doppler = 10, 10, 3, 6, 1500, 0.1, 1e6, 100e-9, 0.02
    x = 2 * math.pi * doppler * n_c
    r = _predicted("A", ds, df, B, B_t, x)[:, 0]
    cfg = PhyConfig.make(scheme="channel-inversion", snr_db=90.0, g_th=g, normalization="clip", clip_norm=1.0,
                         coherence_symbols=n_c, fading_correlation="tdl", tdl_model="A", delay_spread=ds,
                         subcarrier_spacing=df, tdl_time_blocks=B_t, doppler=doppler)
    link = ChannelInversionLink(cfg, K=K, seed=12)
    assert link.channel.describe()["fading"]["time_block_correlation"] == pytest.approx(j0(x), rel=1e-12)
    w = stale_weights(link, K=K, n_c=n_c, B=B, T=T)  # [Σ K′, B] (tests/stale_probe.py)
    n = w.shape[0]
    inv_h2 = math.exp(g) * float(exp1(g))  # E[1/|h_0|² | |h_0|² ≥ g]
    for j in range(B):
        var = (1.0 - abs(r[j]) ** 2) * inv_h2 / 2.0
        assert abs(w[:, j].mean() - r[j].real) < 5.0 * math.sqrt(var / n) + 1e-3, (j, w[:, j].mean(), r[j])
    assert r[1].real == pytest.approx(j0(x)) and abs(r[1].real - 1.0) > 0.1  # time block 1 has aged visibly
