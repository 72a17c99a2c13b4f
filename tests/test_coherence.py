"""Small-scale fading over coherence blocks and FLORAS with per-block or stale pilots (model §5.1)."""

import math

import numpy as np
import pytest
from scipy import special, stats

from phy.coherence import coherence_plan, draw_blocks
from phy.config import PhyConfig
from phy.fading import draw_rayleigh, effective_gain
from phy.link_channel import LinkChannel
from phy.randomness import stream
from phy.schemes import make_aggregator

KEY = bytes(range(16))
LEVEL = 1e-3


def test_block_layout_per_block_and_stale():
    p = coherence_plan(10, 4, "per-block")  # 3 data slots per block: ⌈10/3⌉ = 4 blocks, 4 pilots
    fade, pilot = p.indices()
    assert (p.n_blocks, p.n_pilots) == (4, 4)
    np.testing.assert_array_equal(fade, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3])
    np.testing.assert_array_equal(pilot, fade)
    q = coherence_plan(10, 4, "stale")  # slots 0..10, slot 0 the pilot; entry i is slot i+1, block ⌊(i+1)/4⌋
    fade, pilot = q.indices()
    assert (q.n_blocks, q.n_pilots) == (3, 1)
    np.testing.assert_array_equal(fade, [(i + 1) // 4 for i in range(10)])
    np.testing.assert_array_equal(pilot, 0)
    assert coherence_plan(10, 11, "per-block").single and coherence_plan(10, 11, "stale").single


def test_exact_jakes_blocks_correlate_as_the_bessel_value_at_every_lag():
    """"jakes-exact": E[h_m h*_m'] = J₀(2π·f_D·T_s·n_c·|m − m'|) at every lag, not ρ^Δ (the AR(1) of "jakes").

    At x = 2π·0.02·10 = 1.257 the two differ sharply: lag 2 J₀(2.51) = −0.034 against ρ² = 0.42; lag 3
    J₀(3.77) = −0.40 against 0.27. Each Re(h_m h*_m') has variance (1 + r²)/2; n = 2·K pairs per lag; 5 SE.
    """
    n_c, K, B, doppler = 10, 4000, 6, 0.02
    x = 2 * math.pi * doppler * n_c
    cfg = PhyConfig.make(coherence_symbols=n_c, fading_correlation="jakes-exact", doppler=doppler)
    link = LinkChannel(cfg, K=K, seed=3)
    h = np.concatenate([link.draw(t, n_blocks=B) for t in range(2)])
    np.testing.assert_array_equal(h[:K, 0], draw_rayleigh(3, 0, K=K))  # block 0 is the round's Sionna draw
    for m, mp in ((0, 1), (0, 2), (0, 3), (0, 5), (2, 5), (1, 4), (3, 4)):
        r = float(special.j0(x * abs(m - mp)))
        prod = h[:, mp] * np.conj(h[:, m])
        assert abs(prod.real.mean() - r) < 5 * math.sqrt((1 + r**2) / 2 / prod.size), (m, mp, r, prod.real.mean())
    assert abs(np.mean(np.abs(h) ** 2) - 1) < 5 / math.sqrt(h.size)


def test_exact_jakes_refuses_more_blocks_than_it_can_hold():
    from phy.coherence import MAX_EXACT_BLOCKS

    cfg = PhyConfig.make(scheme="channel-inversion", coherence_symbols=10, fading_correlation="jakes-exact", doppler=0.001)
    with pytest.raises(ValueError, match=r"^fading_correlation = 'jakes-exact'.*raise coherence_symbols to at least"):
        cfg.validate(K=4, d=20 * MAX_EXACT_BLOCKS)
    cfg.validate(K=4, d=5 * MAX_EXACT_BLOCKS)


@pytest.mark.parametrize("correlation,doppler", [("jakes", 0.01), ("jakes", 0.03), ("iid", 0.0)])
def test_consecutive_blocks_correlate_as_the_bessel_value(correlation, doppler):
    n_c, K, B = 10, 3000, 3
    rho = float(special.j0(2 * math.pi * doppler * n_c)) if correlation == "jakes" else 0.0
    cfg = PhyConfig.make(coherence_symbols=n_c, fading_correlation=correlation, doppler=doppler)
    from phy.coherence import block_correlation

    assert block_correlation(cfg) == pytest.approx(rho, abs=1e-15)
    h = np.concatenate([draw_blocks(1, t, K=K, n_blocks=B, correlation=correlation, rho=rho) for t in range(2)])
    # E[h_m h*_{m−1}] = ρ (unit CN marginals); Re(h_m h*_{m−1}) has variance (1 + ρ²)/2, over n = 2·K·(B−1) pairs;
    # the two pairs of one chain are dependent (at most doubling the variance of the mean, √2 on the SE), which
    # the 5-SE margin covers (still ≥ 3.5 SE)
    prod = (h[:, 1:] * np.conj(h[:, :-1])).ravel()
    se = math.sqrt((1 + rho**2) / 2 / prod.size)
    assert abs(prod.real.mean() - rho) < 5 * se
    assert abs(np.mean(np.abs(h) ** 2) - 1) < 5 / math.sqrt(h.size)  # Exp(1) power: sd 1
    np.testing.assert_array_equal(h[:K, 0], draw_rayleigh(1, 0, K=K))  # block 0 is the round's Sionna draw


def test_rician_blocks_have_unit_power_and_the_k_factor_of_their_mean_power():
    kappa, K = 3.0, 20000
    h = draw_blocks(2, 0, K=K, n_blocks=1, rician_k=kappa)[:, 0]
    # |h|² = |√(κ/(κ+1)) e^{jφ} + √(1/(κ+1)) h̃|²: mean 1, variance (2κ + 1)/(κ + 1)²
    assert abs(np.mean(np.abs(h) ** 2) - 1) < 5 * math.sqrt((2 * kappa + 1) / (kappa + 1) ** 2 / K)
    # the scattered part |h − LoS|²·(κ+1) ~ Exp(1), LoS with the keyed phase
    phi = 2 * math.pi * stream(2, "fading-los-phase", 0).random(K)
    scat = np.abs(h - math.sqrt(kappa / (kappa + 1)) * np.exp(1j * phi)) ** 2 * (kappa + 1)
    assert stats.kstest(scat, "expon").pvalue > LEVEL


def _floras(d, n_c, pilots, *, snr_db=10.0, path="fast", K=4, N=8, L=8, **kw):
    cfg = PhyConfig.make(scheme="floras", L=L, snr_db=snr_db, coherence_symbols=n_c,
                         floras={"N": N, "pilots": pilots, "path": path}, **kw)
    return cfg, make_aggregator(cfg, K=K, d=d, seed=7, key=KEY)


def test_per_block_pilots_cost_channel_uses_and_their_noise_has_each_blocks_variance():
    d, n_c, L, K, N, snr_db = 4000, 101, 8, 4, 8, 10.0
    cfg, agg = _floras(d, n_c, "per-block", snr_db=snr_db, K=K, N=N, L=L)
    B = math.ceil(d / (n_c - 1))
    x = stream(0, "test-x").standard_normal((K, d))
    res, rnd = agg.aggregate_traced(x, round_index=3)
    assert res.diagnostics["channel_uses"] == (d + B) * L  # model §5.1: one reference slot per block
    # inactive noise e_i = Σ_{j∈I} a_jᵀn_i / r_j^{s,m(i)}: conditionally N(0, V_m), V_m = (σ²/L)·Σ_{j∈I} (r_j^{s,m})^{−2}
    sigma2 = 1.0 / 10 ** (snr_db / 10)  # P = 1
    inactive = np.setdiff1d(np.arange(N), rnd.active)
    V = sigma2 / L * np.sum(rnd.r_ref_blocks[:, inactive] ** -2.0, axis=1)
    m = np.arange(d) // (n_c - 1)
    z = rnd.inactive_noise / np.sqrt(V[m])
    assert abs(np.mean(z**2) - 1) < 5 * math.sqrt(2 / d)  # chi-square: Var(z²) = 2
    assert abs(np.mean(rnd.inactive_noise**2 / V[0]) - 1) > 10 * math.sqrt(2 / d)  # one pilot for all would not fit
    assert res.diagnostics["V"] == pytest.approx(float(np.mean(V[m])), rel=1e-12)


def test_high_snr_per_block_pilot_recovers_the_sum_and_the_stale_pilot_ages():
    d, n_c, K, N, L = 600, 50, 4, 8, 8
    x = stream(0, "test-x").standard_normal((K, d))
    kw = dict(snr_db=200.0, fading_correlation="jakes", doppler=0.01)
    rho = float(special.j0(2 * math.pi * 0.01 * n_c))
    s_true = None
    for pilots in ("per-block", "stale"):
        cfg, agg = _floras(d, n_c, pilots, K=K, N=N, L=L, **kw)
        res, rnd = agg.aggregate_traced(x, round_index=1)
        from phy.normalization import normalize

        nz = normalize(x, rule="paper", C=cfg.norm_bound(d), clip_norm=None)
        s_true = nz.s
        plan = coherence_plan(d, n_c, pilots)
        h = draw_blocks(7, 1, K=K, n_blocks=plan.n_blocks, correlation="jakes", rho=rho)
        g = effective_gain(h, csit="none")
        fade, _ = plan.indices()
        if pilots == "per-block":
            expected = s_true.sum(axis=0)
        else:  # ŝ^i = Σ_k (g_{k,m(i)}/g_{k,0})·s_k^i: the channel aging of the stale reference slot
            expected = np.einsum("kd,kd->d", g[:, fade] / g[:, :1], s_true)
        # the inactive sequences' noise b·e does not shrink with the SNR (Lévy V, model §6.1): take it out (b = 1)
        np.testing.assert_allclose(rnd.s_hat - rnd.inactive_noise, expected, rtol=1e-6, atol=1e-6 * np.abs(expected).max())
    assert not np.allclose(expected, s_true.sum(axis=0), rtol=1e-3)


def test_sufficient_path_over_blocks_has_the_fast_paths_law():
    # per entry, ŝ^i − Σ_k c_{π(k),m} g_{k,m} s_k^i is N(0, (σ²/L)·Σ_j c_{j,m}²) on both paths (model §6.1)
    d, n_c, L, K, N, snr_db = 3000, 31, 8, 4, 8, 0.0
    x = stream(1, "test-x").standard_normal((K, d))
    sigma2 = 1.0 / 10 ** (snr_db / 10)
    m = np.arange(d) // (n_c - 1)
    for path in ("fast", "sufficient"):
        cfg, agg = _floras(d, n_c, "per-block", snr_db=snr_db, path=path, K=K, N=N, L=L)
        from phy.normalization import normalize

        s = normalize(x, rule="paper", C=cfg.norm_bound(d), clip_norm=None).s
        rnd = agg.link.run_round(s, round_index=2)
        c = 1.0 / rnd.r_ref_blocks  # b = 1
        signal = np.einsum("kd,kd->d", c[m][:, rnd.active].T * rnd.gain_blocks[:, m], s)
        var = sigma2 / L * np.sum(c**2, axis=1)[m]
        z = (rnd.s_hat - signal) / np.sqrt(var)
        assert abs(np.mean(z**2) - 1) < 5 * math.sqrt(2 / d), path


def test_one_block_and_identities_leave_the_link_unchanged_bit_for_bit():
    d, K = 300, 4
    x = stream(2, "test-x").standard_normal((K, d))
    base = PhyConfig.make(scheme="floras", L=8, floras={"N": 8})
    long = PhyConfig.make(scheme="floras", L=8, floras={"N": 8}, coherence_symbols=d + 1)
    for path in ("fast", "sufficient"):
        a = make_aggregator(base.with_params("floras", path=path), K=K, d=d, seed=3, key=KEY)
        b = make_aggregator(long.with_params("floras", path=path), K=K, d=d, seed=3, key=KEY)
        ra = a.aggregate(x, round_index=5)
        rb = b.aggregate(x, round_index=5, clients=np.array([9, 1, 4, 2]))
        np.testing.assert_array_equal(ra.sum_estimate, rb.sum_estimate)
        assert ra.diagnostics == rb.diagnostics


def test_coherence_options_are_checked_with_one_line_naming_the_key():
    bad = [
        (dict(scheme="floras", coherence_symbols=1), "coherence_symbols"),
        (dict(scheme="floras", coherence_symbols=0), "coherence_symbols"),
        (dict(scheme="floras", coherence_symbols=8, floras={"path": "chip"}), "coherence_symbols"),
        (dict(scheme="analog-gaussian", normalization="clip", clip_norm=1.0, coherence_symbols=8,
              **{"analog-gaussian": {"noise_multiplier": 1.0}}), "inversion_csit"),  # stale CSIT: no sensitivity
        (dict(fading_correlation="clarke"), "fading_correlation"),
        (dict(doppler=0.7), "doppler"),
        (dict(rician_k=-1.0), "rician_k"),
        (dict(scheme="floras", floras={"pilots": "none"}), "floras.pilots"),
    ]
    for table, key in bad:
        with pytest.raises(ValueError) as info:
            PhyConfig.make(**table).validate(K=4, d=10)
        assert str(info.value).startswith(key) and "\n" not in str(info.value), str(info.value)
    PhyConfig.make(scheme="floras", coherence_symbols=1, floras={"pilots": "stale"}).validate(K=4, d=10)
    PhyConfig.make(scheme="channel-inversion", coherence_symbols=8).validate(K=4, d=10)  # channel aging (model §5.1)
