"""The T2 audit over coherence blocks: a pilot per block, the energy detector over the pilots, its P_D, decoding
with each entry's pilot and linking by the pooled pilot energy (model §5.1, §7.5; scenarios/audit/blocks.py)."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import j0

from phy.assignment import simulation_key
from phy.cell import drop
from phy.channels.tdl import tdl_profile
from phy.config import PhyConfig
from phy.link_channel import LinkChannel
from scenarios.audit.blocks import audit_detector, block_covariance, quadratic_form_survival
from scenarios.audit.detection import np_threshold
from scenarios.audit.experiment import measure_t2
from scenarios.audit.linking import link_rounds, linking_success, persistent_updates
from scenarios.audit.signals import T2Uplink


def _cfg(*, N: int, snr_db: float, n_rx: int = 1, **phy) -> PhyConfig:
    floras = {"N": N, "pilots": phy.pop("pilots", "per-block")}
    return PhyConfig.make(scheme="floras", L=16, snr_db=snr_db, floras=floras, rx_antennas=n_rx, **phy)


def _rounds(cfg: PhyConfig, *, K: int, rounds: int, seed: int, d: int):
    up = T2Uplink(cfg, K=K, seed=seed, key=simulation_key(seed))
    return up, [up.round(persistent_updates(seed, t, K=K, d=d, C=1.0, persistence=0.0), round_index=t)
                for t in range(rounds)]


def test_imhof_survival_is_the_chi2_and_the_monte_carlo():
    """Equal weights: Σ w·χ²_h over n terms is w·χ²_{n·h} (to 10⁻⁹); unequal weights (a Jakes block covariance's
    eigenvalues plus noise): within 5 standard errors of a 4·10⁵-sample Monte Carlo of the sum."""
    for w, h, x in [(0.7, 2, 12.0), (0.3, 4, 200.0), (2.0, 1, 9.0)]:
        n = 10 if h != 4 else 159
        assert abs(quadratic_form_survival(x, np.full(n, w), h) - stats.chi2.sf(x / w, n * h)) < 1e-9
    P = 40
    lam = np.clip(np.linalg.eigvalsh(0.5 * j0(0.3 * np.abs(np.subtract.outer(np.arange(P), np.arange(P))))), 0, None) + 0.05
    rng = np.random.default_rng(0)
    for h in (1, 4):
        x = float(np.sum(lam) * h)  # near the mean: P mid-range
        q = quadratic_form_survival(x, lam, h)
        mc = np.mean((rng.chisquare(h, (400_000, P)) * lam).sum(1) > x)
        assert 0.2 < q < 0.8 and abs(mc - q) <= 5 * math.sqrt(q * (1 - q) / 400_000), (h, q, mc)


@pytest.mark.parametrize("phy", [
    {"fading_correlation": "jakes", "doppler": 0.01},
    {"fading_correlation": "jakes-exact", "doppler": 0.01},
    {"fading_correlation": "tdl", "tdl_model": "A", "delay_spread": 300e-9, "subcarrier_spacing": 30e3, "tdl_time_blocks": 2,
     "doppler": 0.01},
])
def test_block_covariance_is_the_model_law_and_the_simulator(phy):
    """Re R of model §5.1 from the formulas (AR(1) ρ^|Δ| with ρ = J₀(x); J₀(x·|Δ|); for TDL the subcarriers'
    Σ_l p_l·cos(2π·Δs·Δf·τ_l)·J₀(x·Δt), sub-major order), x = 2π·doppler·n_c, to 10⁻¹²; and the simulator's
    E[Re h_p·Re h_q] over 20 000 clients is ½ of it, within 5 standard errors ((1 + R²)/(4n))^½ per entry."""
    n_c, P = 5, 6
    cfg = _cfg(N=8, snr_db=10.0, coherence_symbols=n_c, **phy)
    x = 2 * math.pi * 0.01 * n_c
    m = np.arange(P)
    if phy["fading_correlation"] == "jakes":
        want = j0(x) ** np.abs(np.subtract.outer(m, m))
    elif phy["fading_correlation"] == "jakes-exact":
        want = j0(x * np.abs(np.subtract.outer(m, m)))
    else:
        tau, p = tdl_profile("A", 300e-9)
        ds, dt = np.subtract.outer(m // 2, m // 2), np.subtract.outer(m % 2, m % 2)
        want = np.cos(2 * math.pi * 30e3 * ds[..., None] * tau) @ p * j0(x * np.abs(dt))
    got = block_covariance(cfg, P)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    K = 20_000
    g = LinkChannel(cfg, K=K, seed=1).draw(0, n_blocks=P).real  # [K, P]
    emp = g.T @ g / K
    se = np.sqrt((1 + want**2) / (4 * K))
    assert np.all(np.abs(emp - 0.5 * want) <= 5 * se), np.max(np.abs(emp - 0.5 * want) / se)


def test_per_block_pilots_are_seen_and_each_entry_is_decoded_with_its_own():
    """Per-block pilots (n_c = 3: 2 data slots a block), N_r = 2: the base station's pilot p of an active sequence is
    g_{k,p,r}·b plus N(0, σ²/L) (KS at 10⁻³ at 10 dB); at 90 dB the decodes of the active sequences are s_k (NMSE
    < 10⁻⁶) although the gains change from block to block. With the stale pilot the decode of entry i is
    s_k^i·(Σ_r g_{k,0,r}·g_{k,m(i),r})/Σ_r g_{k,0,r}² (channel aging; to 10⁻³ relative or 10⁻⁴ absolute: the noise
    σ/√L ≈ 8·10⁻⁶ at 90 dB over gains of about 0.1)."""
    K, N, d = 4, 8, 10
    kw = {"coherence_symbols": 3, "fading_correlation": "jakes-exact", "doppler": 0.05}
    up, views = _rounds(_cfg(N=N, snr_db=10.0, n_rx=2, **kw), K=K, rounds=30, seed=5, d=d)
    resid = []
    for view, truth in views:
        assert view.n_pilots == 5 and truth.gains_blocks.shape == (K, 5, 2)
        resid.append((view.r_pilot_blocks[:, truth.active, :] - up.b * truth.gains_blocks.transpose(1, 0, 2)).ravel())
        np.testing.assert_array_equal(view.pilot_of, np.repeat(np.arange(5), 2))
    assert stats.kstest(np.concatenate(resid) / math.sqrt(up.noise_var), "norm").pvalue > 1e-3
    _, views = _rounds(_cfg(N=N, snr_db=90.0, n_rx=2, **kw), K=K, rounds=3, seed=5, d=d)
    for view, truth in views:
        assert np.max(np.sum((view.decodes()[truth.active] - truth.s) ** 2, 1) / np.sum(truth.s**2, 1)) < 1e-6
    _, views = _rounds(_cfg(N=N, snr_db=90.0, n_rx=2, pilots="stale", **kw), K=K, rounds=3, seed=5, d=d)
    for view, truth in views:
        G = truth.gains_blocks  # [K, B, N_r]; stale: entry i is slot i + 1, in block ⌊(i + 1)/n_c⌋
        fade = (np.arange(d) + 1) // 3
        factor = np.einsum("kr,kir->ki", G[:, 0], G[:, fade]) / np.sum(G[:, 0] ** 2, 1)[:, None]
        assert view.n_pilots == 1
        np.testing.assert_allclose(view.decodes()[truth.active], truth.s * factor, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("correlation", ["iid", "jakes-exact"])
def test_energy_detector_over_blocks_in_a_cell(correlation):
    """P = 4 pilots, N_r = 2, UMi at −5 dB: τ = (σ²/L)·χ²₈⁻¹(1 − P_FA); the inactive sequences cross it at P_FA and the
    active at the mean over the drop of P(Σ_{p,r} x² > τ), x_r ~ N(0, (b²β_k/2)·R + σ²/L·I): i.i.d. blocks χ²₈ survival
    at τ/(b²β_k/2 + σ²/L); Jakes blocks (R = J₀(x·|p − q|), x = 2π·0.03·3) a 4·10⁵-sample Monte Carlo of the sum over
    the eigenvalues (99.9 % binomial bands, widened by 4 Monte Carlo standard errors); the audit's reported theory is
    that mean (to 10⁻⁹ for i.i.d. blocks, within the Monte Carlo's 4 standard errors for Jakes)."""
    K, N, T, d, pfa = 5, 12, 150, 8, 0.05
    cell = {"pathloss": "umi", "cell_radius": 250.0, "snr_reference": "median-distance"}
    cfg = _cfg(N=N, snr_db=-5.0, n_rx=2, coherence_symbols=3, fading_correlation=correlation, doppler=0.03, **cell)
    assert audit_detector(cfg, d) == ("energy", 8, 4)
    up, views = _rounds(cfg, K=K, rounds=T, seed=6, d=d)
    tau = np_threshold(noise_var=up.noise_var, false_alarm=pfa, kind="energy", n_rx=8)
    beta = views[0][1].beta_eff
    if correlation == "iid":
        pd, mc_se = stats.chi2.sf(tau / (up.b**2 * beta / 2 + up.noise_var), 8), 0.0
    else:
        R = j0(2 * math.pi * 0.03 * 3 * np.abs(np.subtract.outer(np.arange(4), np.arange(4))))
        rng = np.random.default_rng(1)
        pd = np.array([np.mean((rng.chisquare(2, (400_000, 4)) * (up.b**2 * bk / 2 * np.linalg.eigvalsh(R)
                                                                     + up.noise_var)).sum(1) > tau) for bk in beta])
        mc_se = math.sqrt(np.mean(pd * (1 - pd)) / (400_000 * K))
    fa = det = 0
    for view, truth in views:
        stat = view.statistic("energy")
        mask = np.zeros(N, dtype=bool)
        mask[truth.active] = True
        fa += int(np.sum(stat[~mask] > tau))
        det += int(np.sum(stat[mask] > tau))
    for hits, n, p in ((fa, T * (N - K), pfa), (det, T * K, pd.mean())):
        lo, hi = stats.binom.interval(0.999, n, p)
        assert lo - 4 * mc_se * n <= hits <= hi + 4 * mc_se * n, (hits / n, p)
    res = measure_t2(cfg, K=K, d=d, rounds=4, seed=6, key=simulation_key(6), false_alarm=pfa, persistence=(0.0,))
    assert abs(res["detection"]["detection_probability_theory"] - pd.mean()) <= 1e-9 + 4 * mc_se
    assert res["detection"]["threshold"] == tau


def test_pooled_pilot_energy_links_two_clients_by_the_f_law():
    """K = N = 2, log-distance n = 3.5 without shadowing (seed 10: d ≈ 203 and 250 m), i.i.d. blocks, P pilots:
    E_k = (b²β_k/2 + σ²/L)·χ²_P, so a round orders the two clients alike with p = F_{P,P} tail at v_2/v_1 and a round
    pair links iff both rounds order them alike, q = p² + (1 − p)² (derived as for one pilot); the disjoint pairs are
    Bernoulli(q): 99.9 % binomial band at P = 2 and P = 8 (one pilot: tests/test_audit_linking_antennas.py)."""
    cell = {"pathloss": "log-distance", "pathloss_exponent": 3.5, "shadowing_db": 0.0}
    dist, *_ = drop(10, np.array([0, 1]), radius=250.0, min_distance=10.0)
    v = (250.0 / dist) ** 3.5 / 2 + 10 ** (-2.0) / 16
    for P in (2, 8):
        cfg = _cfg(N=2, snr_db=20.0, coherence_symbols=2, fading_correlation="iid", **cell)
        _, views = _rounds(cfg, K=2, rounds=400, seed=10, d=P)
        assert views[0][0].n_pilots == P
        p = float(stats.f.sf(v[1] / v[0], P, P))
        q = p * p + (1 - p) ** 2
        x = np.array([linking_success(link_rounds(views[2 * m][0], views[2 * m + 1][0], method="pilot", kind="energy"),
                                      views[2 * m][1], views[2 * m + 1][1]) for m in range(200)])
        lo, hi = stats.binom.interval(0.999, x.size, q)
        assert lo <= x.sum() <= hi, (P, x.mean(), q)


def test_timing_offsets_reach_the_base_station_as_floras_chip_path_sends_them():
    """τ_max = 0.5 (one antenna, as FLORAS's link models offsets): the offsets are FlorasLink's chip-path draw (its Ã equals (1 − τ)·a + τ·S·a from the
    keyed τ, bit for bit); the pilot outputs are Aᵀ(Ã·g_r·b) plus N(0, σ²/L) (KS at 10⁻³), so inactive
    sequences see the active ones' leakage; the data chips carry g_k·τ_k·a_k[L−1]·u_k^{i−1} in chip 0 of slot i
    (90 dB, to 8 chip-noise standard deviations σ/√L ≈ 8·10⁻⁶ each); the audit reports no P_D theory (not derived)."""
    from phy.chip_timing import draw_offsets
    from phy.floras import FlorasLink

    K, N, d, T, tmax = 4, 8, 5, 30, 0.5
    key = simulation_key(9)
    for snr in (10.0, 90.0):
        cfg = _cfg(N=N, snr_db=snr, timing_offset=tmax)
        up, views = _rounds(cfg, K=K, rounds=T if snr == 10.0 else 3, seed=9, d=d)
        link = FlorasLink(cfg, K=K, seed=9, key=key) if snr == 10.0 else None
        resid = []
        for t, (view, truth) in enumerate(views):
            A = up.A[:, truth.active]
            tau = draw_offsets(9, t, K=K, max_offset=tmax)
            shifted = np.vstack([np.zeros((1, K)), A[:-1]])
            A_rx = (1 - tau) * A + tau * shifted
            if link is not None:
                np.testing.assert_array_equal(link.chip_pilots(t)[3], A_rx)
            G = truth.gains_antennas
            resid.append((view.r_pilots - up.A.T @ (A_rx @ (G * up.b))).ravel())
            if snr == 90.0:
                prev = np.hstack([np.full((K, 1), up.b), truth.s[:, :-1]])
                want = A_rx @ (G[:, 0:1] * truth.s)
                want[0] += (G[:, 0] * tau * A[-1]) @ prev
                np.testing.assert_allclose(view.y_data, want, rtol=0, atol=8 * math.sqrt(up.noise_var))
        if snr == 10.0:
            assert stats.kstest(np.concatenate(resid) / math.sqrt(up.noise_var), "norm").pvalue > 1e-3
    res = measure_t2(_cfg(N=N, snr_db=10.0, timing_offset=tmax), K=K, d=d, rounds=4, seed=9, key=key, persistence=(0.0,))
    assert res["detection"]["detection_probability_theory"] is None


def test_estimated_phase_gains_and_detection():
    """Phase CSIT from an estimate (σ_e² = 0.5), UMi at 0 dB: the audit's gains are FLORAS's link's (block_gains, bit for
    bit, one block and four per-block pilots); the signed detector's P_D formula equals a 10⁶-sample Monte Carlo of the
    model law g = Re(h·ĥ*)/|ĥ|, ĥ = h + CN(0, σ_e²) (5 standard errors), and the simulator's detections lie in the
    99.9 % binomial band of its mean over the drop."""
    from phy.floras import FlorasLink
    from scenarios.audit.blocks import estimated_phase_detection

    K, N, T, d, e2 = 5, 12, 200, 4, 0.5
    cell = {"pathloss": "umi", "cell_radius": 250.0, "snr_reference": "median-distance"}
    key = simulation_key(8)
    for blocks in ({}, {"coherence_symbols": 2, "fading_correlation": "iid"}):
        cfg = PhyConfig.make(scheme="floras", L=16, snr_db=0.0, floras={"N": N, "csit": "phase"}, csi_error=e2,
                             **cell, **blocks)
        up, views = _rounds(cfg, K=K, rounds=3, seed=8, d=d)
        link = FlorasLink(cfg, K=K, seed=8, key=key)
        for t, (_, truth) in enumerate(views):
            B = truth.gains_blocks.shape[1]
            np.testing.assert_array_equal(truth.gains_blocks[:, :, 0], link.block_gains(t, n_blocks=B))
    cfg = PhyConfig.make(scheme="floras", L=16, snr_db=0.0, floras={"N": N, "csit": "phase"}, csi_error=e2, **cell)
    up, views = _rounds(cfg, K=K, rounds=T, seed=8, d=d)
    tau = np_threshold(noise_var=up.noise_var, false_alarm=0.01, kind="signed")
    rng = np.random.default_rng(2)
    n = 1_000_000
    h = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2)
    hh = h + math.sqrt(e2 / 2) * (rng.standard_normal(n) + 1j * rng.standard_normal(n))
    g = np.real(h * np.conj(hh)) / np.abs(hh)
    r = g * up.b + math.sqrt(up.noise_var) * rng.standard_normal(n)
    mc, want = np.mean(r > tau), estimated_phase_detection(tau, b=up.b, noise_var=up.noise_var, csi_error=e2)
    assert abs(mc - want) <= 5 * math.sqrt(want * (1 - want) / n), (mc, want)
    betas = [tr.beta_eff for _, tr in views]
    pd = estimated_phase_detection(tau, b=up.b, noise_var=up.noise_var, csi_error=e2, betas=betas)
    hits = sum(int(np.sum(v.statistic("signed")[tr.active] > tau)) for v, tr in views)
    lo, hi = stats.binom.interval(0.999, T * K, pd)
    assert 0.2 < pd < 0.95 and lo <= hits <= hi, (hits / (T * K), pd)


def _synthetic_rounds(rng, *, K: int, T: int, noise: float, junk: float):
    """T rounds of K clients: feature 0 = the client's mean (spread 1) + N(0, noise²), feature 1 = N(0, junk²) afresh
    every round (no identity); each round a fresh uniform assignment of the clients to sequences 0..K−1."""
    from scenarios.audit.signals import RoundTruth

    mean = rng.standard_normal(K)
    feats, truths = [], []
    for _ in range(T):
        active = rng.permutation(K)  # client k on sequence active[k]
        f = np.empty((K, 2))
        f[active, 0] = mean + noise * rng.standard_normal(K)
        f[active, 1] = junk * rng.standard_normal(K)
        feats.append(f)
        truths.append(RoundTruth(active=active, gains=np.ones(K), s=np.zeros((K, 1))))
    return feats, truths


def test_clustering_learns_which_feature_stays_with_the_client():
    """A feature that stays with its client and one that does not (spread 3 against 1): with the first noiseless
    every client is put in its own cluster in every round (link and followed 100 %); with it noisy (0.15) the clustered
    link is at least the rank matching of the first feature alone (minus 3 standard errors) and above the equal-weight
    ``joint`` matching by 5 standard errors, which the junk feature drags down. Weights frozen at the features'
    spreads would fail it."""
    from scenarios.audit.clustering import cluster_rounds, cluster_scores
    from scenarios.audit.linking import energy_matching, feature_matching

    K, T = 8, 60
    rng = np.random.default_rng(4)
    seqs = [np.arange(K)] * T
    feats, truths = _synthetic_rounds(rng, K=K, T=T, noise=0.0, junk=3.0)
    assert cluster_scores(cluster_rounds(feats), seqs, truths) == (K * (T - 1), K * (T - 1), K, K)
    feats, truths = _synthetic_rounds(rng, K=K, T=T, noise=0.15, junk=3.0)
    link, n, _, _ = cluster_scores(cluster_rounds(feats), seqs, truths)

    def pairwise(match):
        hits = 0
        for t in range(T - 1):
            rows, cols = match(feats[t], feats[t + 1])
            owner = {int(j): k for k, j in enumerate(truths[t].active)}
            hits += sum(int(truths[t + 1].active[owner[int(r)]] == c) for r, c in zip(rows, cols))
        return hits / n

    alone = pairwise(lambda a, b: energy_matching(a[:, 0], b[:, 0]))
    equal = pairwise(feature_matching)
    se = math.sqrt(0.25 / n)
    assert link / n >= alone - 3 * se and link / n > equal + 5 * se, (link / n, alone, equal)
