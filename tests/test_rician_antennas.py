"""Rician fading with several receive antennas (model §5.2, "Rician fading with several antennas").

h_{k,m,r} = √(κ/(κ+1))·e^{j(φ_k + ψ·b_m)}·e^{jπ·r·sin θ_k} + √(1/(κ+1))·h̃_{k,m,r}: a half-wavelength uniform linear
array, θ_k the client's azimuth (the drop's in a cell, U(0, 2π) per round otherwise), h̃ independent over antennas.
Predictions: for θ uniform, E[e^{jx·sin θ}] = J₀(x), so E[h_r·h_s*] = κ/(κ+1)·J₀(π(r − s)) + [r = s]/(κ+1); over
blocks in time E[h_{m,r}·h*_{0,r}] = κ/(κ+1)·e^{jψm} + J₀(x·m)/(κ+1) on every antenna (model §5.1's law).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import j0

from phy.config import PhyConfig
from phy.link_channel import LinkChannel

Z = 5.0


def test_antenna_correlation_is_the_steered_line_of_sight_plus_independent_scatter():
    """n = 20 000 clients of one round, κ = 2: each correlation's real part has SE ≤ 1/√n·(its std ≤ 1): 5 SE.
    Plausible bugs: the same scattered draw on every antenna (correlation 1/(κ+1) too high), no steering (κ/(κ+1)
    instead of κ/(κ+1)·J₀(π)), a full-wavelength array (J₀(2π))."""
    K, kappa, n_rx = 20000, 2.0, 3
    cfg = PhyConfig.make(scheme="channel-inversion", rx_antennas=n_rx, rician_k=kappa)
    h = LinkChannel(cfg, K=K, seed=4).draw_antennas(0)
    assert h.shape == (K, n_rx)
    one = LinkChannel(PhyConfig.make(scheme="channel-inversion", rician_k=kappa), K=K, seed=4).draw(0)[:, 0]
    np.testing.assert_array_equal(h[:, 0], one)  # antenna 0 is the one-antenna Rician draw
    tol = Z / math.sqrt(K)
    for r in range(n_rx):
        for s in range(n_rx):
            want = kappa / (kappa + 1) * j0(math.pi * (r - s)) + (r == s) / (kappa + 1)
            got = np.mean(h[:, r] * h[:, s].conj())
            assert abs(got.real - want) < tol and abs(got.imag) < tol, (r, s, got, want)


def test_in_a_cell_the_line_of_sight_points_at_the_clients_drop_angle():
    """κ = 10⁸: h_{k,r}/h_{k,0} = e^{jπ·r·sin θ_k} to 10⁻³, θ_k the angle of phy.cell.drop for the client's identity, the
    same in every round of a fixed drop."""
    from phy.cell import drop

    cfg = PhyConfig.make(scheme="channel-inversion", rx_antennas=4, rician_k=1e8, pathloss="log-distance",
                         cell_radius=300.0)
    clients = np.array([5, 17, 2, 40])
    _, theta, _, _ = drop(9, clients, radius=300.0, min_distance=float(cfg.cell_min_distance))
    ch = LinkChannel(cfg, K=4, seed=9)
    for t in (0, 3):
        h = ch.draw_antennas(t, clients=clients)
        want = np.exp(1j * math.pi * np.arange(4)[None, :] * np.sin(theta)[:, None])
        np.testing.assert_allclose(h / h[:, :1], want, atol=1e-3)


def test_over_blocks_every_antenna_has_the_aging_law_with_the_turning_line_of_sight():
    K, kappa, x, ratio, B = 20000, 1.0, 2 * math.pi * 0.002 * 40, 0.7, 4
    cfg = PhyConfig.make(scheme="channel-inversion", rx_antennas=2, rician_k=kappa, coherence_symbols=40,
                         fading_correlation="jakes-exact", doppler=0.002, inversion_csit="per-block")
    H = LinkChannel(cfg, K=K, seed=2).draw_antennas(0, n_blocks=B)
    m = np.arange(B)
    want = kappa / (kappa + 1) * np.exp(1j * ratio * x * m) + j0(x * m) / (kappa + 1)
    tol = Z / math.sqrt(K)
    for r in range(2):
        got = (H[:, :, r] * H[:, :1, r].conj()).mean(axis=0)
        np.testing.assert_allclose(got.real, want.real, atol=tol)
        np.testing.assert_allclose(got.imag, want.imag, atol=tol)


def test_what_is_not_derived_with_a_steered_line_of_sight_is_said_or_refused(tmp_path):
    from scenarios.config import scenario_from_dict
    from scenarios.config.floras_link import floras_link_model

    cfg = scenario_from_dict({"phy": {"scheme": "floras", "rx_antennas": 2, "rician_k": 3.0}})
    link = floras_link_model(cfg, blocks=1)
    assert link.undefined is not None and "steered over the array" in link.undefined
    analog = {"scheme": "analog-gaussian", "normalization": "clip", "clip_norm": 1.0, "rx_antennas": 2, "rician_k": 3.0,
              "csi_error": 0.1, "analog-gaussian": {"noise_multiplier": 1.0}}
    with pytest.raises(ValueError, match=r"^privacy: phy.rician_k: analog Gaussian.s ε with imperfect CSI in a fixed drop"):
        scenario_from_dict({"phy": {**analog, "pathloss": "log-distance"}})
    scenario_from_dict({"phy": analog})  # no cell: the law steers each slot's line of sight (phy.csi_law)
    ok = scenario_from_dict({"phy": {"scheme": "analog-gaussian", "normalization": "clip", "clip_norm": 1.0,
                                     "rx_antennas": 2, "rician_k": 3.0, "analog-gaussian": {"noise_multiplier": 1.0}}})
    from scenarios.config.analog_exposure import _sampled_not_derived

    assert _sampled_not_derived(ok) is None  # the leverage law steers each slot's line of sight (phy.leverage_law)


def test_the_sampled_leverage_law_is_the_links_own_with_a_steered_line_of_sight():
    """κ = 10, N_r = 2, K = 8, g_th = 0.3: row 0's K′·ℓ over 6 000 rounds of the link's own channels (the replay's
    rule: centroid of all K, admission on |aᴴh|², :func:`phy.antennas.client_leverage`) against 40 000 draws of
    :func:`phy.leverage_law.exposure_draws` (KS, p > 10⁻³), and unlike the Rayleigh law's (p < 10⁻⁶)."""
    from scipy import stats

    from phy.antennas import centroid_combiner, client_leverage
    from phy.leverage_law import exposure_draws

    K, n_rx, kappa, g = 8, 2, 10.0, 0.3
    ch = LinkChannel(PhyConfig.make(scheme="channel-inversion", rx_antennas=n_rx, rician_k=kappa), K=K, seed=6)
    link = []
    for t in range(6000):
        h = ch.draw_antennas(t)
        a = centroid_combiner(h)
        adm = np.abs(h @ a.conj()) ** 2 >= g
        link.append(adm.sum() * client_leverage(h[adm], combiner=a)[0] if adm[0] else 0.0)
    law = exposure_draws(K=K, n_rx=n_rx, g_th=g, draws=40_000, seed=0, rician_k=kappa)
    assert stats.ks_2samp(link, law).pvalue > 1e-3
    assert stats.ks_2samp(link, exposure_draws(K=K, n_rx=n_rx, g_th=g, draws=40_000, seed=0)).pvalue < 1e-6
