"""FLORAS with N_r > 1 receive antennas over coherence blocks (model §5.2, "Antennas over coherence blocks";
phy/floras_antenna_blocks.py, privacy/antenna_noise.py with ``blocks``).

Given pilot p's outputs r^{s,p} [N_r, N], c_{j,r,p} = b·r_{j,r}^{s,p}/Σ_r (r_{j,r}^{s,p})² and entry i (fading block m,
pilot p) is ŝ^i = Σ_k u_{k,i}·s_k^i + ν^i with u_{k,i} = Σ_r c_{π(k),r,p}·g_{k,m,r}, ν ~ N(0, (σ²/L)·Σ_{j,r} c_{j,r,p}²);
the inactive part has variance V_p = (σ²/L)·Σ_{j∈I} 1/Σ_r (r_{j,r}^{s,p})². The privacy side bounds an update split
over B independent blocks by the one-block Rényi curve and, in the PLD, by the law of V_min = min_m V_m.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from phy.config import PhyConfig
from phy.link_channel import LinkChannel
from phy.schemes import make_aggregator

KEY = b"antenna-block-key"
Z = 5.0


def _floras(n_rx=3, *, N=16, L=16, snr_db=0.0, path="fast", pilots="per-block", n_c=501, **kw):
    return PhyConfig.make(scheme="floras", L=L, snr_db=snr_db, rx_antennas=n_rx, coherence_symbols=n_c,
                          fading_correlation="jakes", doppler=0.0002, floras={"N": N, "path": path, "pilots": pilots},
                          **kw)


@pytest.mark.parametrize("path", ["fast", "sufficient"])
@pytest.mark.parametrize("pilots", ["per-block", "stale"])
def test_the_combined_error_has_the_derived_law_block_by_block(path, pilots):
    """ŝ − Σ_k u_k·s_k per entry, u from the pilots of the round and the channel's own antenna blocks (g = Re h), has
    variance (σ²/L)·Σ_{j,r} c_{j,r,p}² in each pilot's entries, and its inactive part (fast path) V_p. 0 dB, L = 16:
    σ²/L = 1/16. 500 entries per block: relative SE √(2/500) = 6.3 %, 5 SE per block. Plausible bugs: block 0's
    pilot for every block (per-block), the block's own pilot with "stale", antenna 0's gains only."""
    K, N, n_rx, n_c = 5, 16, 3, 501
    d = 4 * (n_c - 1) if pilots == "per-block" else 4 * n_c - 1
    cfg = _floras(n_rx, path=path, pilots=pilots)
    link = make_aggregator(cfg, K=K, d=d, seed=5, key=KEY).link
    plan = link.plan(d)
    fade, pilot = plan.indices()
    s = np.random.default_rng(4).standard_normal((K, d))
    noise = 1.0 / 16
    for t in range(2):
        rnd = link.run_round(s, round_index=t, trace=path == "fast")
        R = rnd.r_ref_antennas
        assert R.shape == (plan.n_pilots, n_rx, N)
        G = np.real(LinkChannel(cfg, K=K, seed=5).draw_antennas(t, n_blocks=plan.n_blocks))  # [K, B, N_r]
        np.testing.assert_array_equal(rnd.gain_antennas, G)
        c = R / (R**2).sum(axis=1, keepdims=True)  # b = 1
        u = np.einsum("ikr,kir->ki", c[pilot][:, :, rnd.active].transpose(0, 2, 1), G[:, fade, :])
        err = rnd.s_hat - (u * s).sum(axis=0)
        inactive = np.setdiff1d(np.arange(N), rnd.active)
        for p in range(plan.n_pilots):
            where = pilot == p
            var = noise * (c[p] ** 2).sum()
            assert abs(err[where].var() / var - 1.0) < Z * math.sqrt(2.0 / where.sum()), (t, p)
            V_p = noise * np.sum(1.0 / (R[p][:, inactive] ** 2).sum(axis=0))
            if path == "fast":
                e = rnd.inactive_noise[where]
                assert abs(e.var() / V_p - 1.0) < Z * math.sqrt(2.0 / where.sum()), (t, p)
        V = [noise * np.sum(1.0 / (R[p][:, inactive] ** 2).sum(axis=0)) for p in range(plan.n_pilots)]
        assert rnd.V == pytest.approx(float(plan.pilot_share() @ np.array(V)), rel=1e-12)


def test_at_high_snr_a_pilot_per_block_recovers_the_sum_and_a_stale_one_the_aged_projection():
    """90 dB and N = K (no inactive sequence, whose noise does not fall with the SNR): per-block pilots give u_{k,i} = Σ_r g_{k,m,r}²/‖g_{k,m}‖² = 1 (ŝ = Σ_k s_k); one stale pilot gives
    u_{k,i} = ⟨g_{k,0}, g_{k,m}⟩/‖g_{k,0}‖² (maximum ratio on block 0's gains applied to block m), both from the
    channel's antenna blocks alone."""
    K, n_rx, n_c = 4, 2, 101
    s = np.random.default_rng(1).standard_normal((K, 800))
    agg = make_aggregator(_floras(n_rx, N=K, snr_db=90.0, n_c=n_c, path="sufficient"), K=K, d=800, seed=2, key=KEY)
    np.testing.assert_allclose(agg.link.run_round(s, round_index=0).s_hat, s.sum(axis=0), atol=1e-3)
    cfg = _floras(n_rx, N=K, snr_db=90.0, n_c=n_c, path="sufficient", pilots="stale")
    link = make_aggregator(cfg, K=K, d=800, seed=2, key=KEY).link
    plan = link.plan(800)
    fade, _ = plan.indices()
    G = np.real(LinkChannel(cfg, K=K, seed=2).draw_antennas(0, n_blocks=plan.n_blocks))
    u = np.einsum("kr,kbr->kb", G[:, 0], G) / (G[:, 0] ** 2).sum(axis=1)[:, None]
    assert np.ptp(u[:, 1:]) > 0.01  # the blocks have aged
    np.testing.assert_allclose(link.run_round(s, round_index=0).s_hat, (u[:, fade] * s).sum(axis=0), atol=1e-3)


def test_the_smallest_of_B_noise_variances_has_the_grid_law_and_keeps_the_tail():
    """noise_law(γ, N_r, B): P(Ṽ_min ≤ v) = 1 − (1 − P(Ṽ ≤ v))^B, pessimistic against a Monte Carlo of min_m V_m
    (V = Σ_j 1/χ²_{N_r}; 200 000 rounds, 5 SE), and its tail edge has B·Chernoff ≤ TAIL. Plausible bugs: the one-block
    law (too much noise), P(V ≤ v)·B without the cap at 1, the tail edge of one block."""
    from privacy.antenna_noise import TAIL, chernoff_lower_tail, noise_law

    g, n_rx, B, n = 6, 2, 8, 200_000
    one, law = noise_law(g, n_rx), noise_law(g, n_rx, B)
    assert law.blocks == B and law.z_max > one.z_max
    v_tail = g**2 / law.z_max**2
    assert B * chernoff_lower_tail(v_tail, gamma=g, antennas=n_rx) <= TAIL
    rng = np.random.default_rng(3)
    V = (1.0 / rng.chisquare(n_rx, (n, B, g))).sum(axis=2).min(axis=1)
    for v in np.quantile(V, [0.01, 0.1, 0.5, 0.9]):
        i = int(math.floor(v / law.step))
        emp = float(np.mean(V <= i * law.step))
        assert law.cumulative[i] >= emp - Z * math.sqrt(emp * (1 - emp) / n)  # pessimistic: at least as much low V
        assert law.cumulative[i] <= emp + 0.02  # and tight (the grid lowers V by ≤ 0.4 % of v_tail per term)
        F1 = one.cumulative[min(int(math.floor(v / one.step)), len(one.cumulative) - 1)]
        assert law.cumulative[i] > F1  # the smallest of B is stochastically smaller than one


def test_floras_epsilon_over_pilot_blocks_with_antennas():
    """The Rényi curve does not depend on B (an update split over independent blocks, the log moment convex and 0
    at 0); the PLD's ε grows with B (V_min) and B = 1 is the one-block antenna PLD; the assumption text says so."""
    from privacy import FlorasRunAccountant

    common = dict(N=32, K=20, M=100, d=9, normalization="clip", clip_norm=1.0, C=None, power=1.0, antennas=2,
                  delta=1e-5, level="client", relation="replace", sampling="without-replacement", local_steps=1,
                  batch_size=10, local_dataset_size=600)
    rdp = [FlorasRunAccountant(**common, pilot_blocks=B, accountant="rdp").epsilon(rounds=50) for B in (1, 10)]
    assert rdp[0] == rdp[1]
    pld = {B: FlorasRunAccountant(**common, pilot_blocks=B, accountant="pld") for B in (1, 4)}
    assert pld[4].epsilon(rounds=50) > pld[1].epsilon(rounds=50)
    assert any("Antennas over coherence blocks" in a for a in pld[4].report(rounds=50).assumptions)
    assert any("in each of the 4 pilot blocks" in a for a in pld[4].report(rounds=50).assumptions)
    assert not any("pilot blocks" in a for a in pld[1].report(rounds=50).assumptions)
    assert any("no conditional-Gaussian curve is derived for that split" in a
               for a in FlorasRunAccountant(**common, pilot_blocks=4, accountant="rdp").report(rounds=50).assumptions)


def test_configuration_accepts_blocks_with_antennas_and_states_no_link_bound_for_a_stale_pilot():
    from scenarios.config import scenario_from_dict
    from scenarios.config.floras_link import floras_link_model, floras_pilot_blocks

    for pilots in ("per-block", "stale"):
        cfg = scenario_from_dict({"phy": {"scheme": "floras", "rx_antennas": 2, "coherence_symbols": 50,
                                          "floras": {"pilots": pilots}}})
        _, blocks, stale = floras_pilot_blocks(cfg.phy, d=400, accountant="rdp", K=cfg.training.clients_per_round)
        link = floras_link_model(cfg, blocks=blocks, stale=stale)
        assert (link.undefined is None) == (pilots == "per-block"), link.undefined
        if pilots == "per-block":
            assert link.antennas == 2 and link.blocks == blocks > 1
    with pytest.raises(ValueError, match=r"^timing_offset: .*'floras'"):
        PhyConfig.make(scheme="floras", rx_antennas=2, timing_offset=0.3).validate(K=4, d=10)
