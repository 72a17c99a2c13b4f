"""Noise levels and laws predicted from the formulas of docs/model.md and the raw configuration (issue 16, item 1).

Every expected value here is computed in the test from the numbers a user types (P, SNR in dB,
L, N, K, g_th, resource convention) and model §5–§6; none is read from an attribute the code under
test computed (``noise_std``, ``noise_variance``, ``gamma``, ``rho`` …). The realised random
quantities (the round's reference outputs r^s, its gains, its admitted set) are data, not
parameters, and may be used.

Power: each variance test has a relative standard error of at most ≈ 2 %, so a ×√2 error in a
noise standard deviation (×2 in variance) lies ≥ 30 standard errors away; the Cauchy-scale tests
use the maximum-likelihood scale (relative standard error √(2/n)), so a factor-2 scale error lies
≥ 10 standard errors away (both fail with probability ≈ 1, far above 0.99). Each path is tested
against the predicted law on its own, which replaces, for power, the 400-vs-400 two-sample KS
comparison of the fast and chip paths in test_phy_floras.py.
"""

import math

import numpy as np
import pytest
from scipy import stats

from phy.channel_inversion import ChannelInversionLink
from phy.config import PhyConfig
from phy.fading import draw_rayleigh
from phy.floras import FlorasLink
from phy.randomness import stream

KEY = bytes(range(7, 39))
Z = 5.0  # standard errors allowed: two-sided false-alarm probability 6e-7 per check


def sigma2(P, snr_db):
    """σ² = P / 10^(SNR/10) (model §5, SNR := P/σ²), from the raw numbers."""
    return P / 10.0 ** (snr_db / 10.0)


def _vectors(K, d, t):
    return stream(21, "independent-prediction-vectors", t).standard_normal((K, d))


# ------------------------------------------------------------------ FLORAS, both paths
@pytest.mark.parametrize("path", ["fast", "chip"])
@pytest.mark.parametrize("P, snr_db, L", [(1.0, 10.0, 32), (4.0, 3.0, 16)])
def test_floras_data_noise_variance_from_raw_config(path, P, snr_db, L):
    """model §6.1 sufficient statistic: given r^s, ŝ^i − Σ_k (b g_k / r^s_{π(k)}) s_k^i ~ N(0, (b²σ²/L)·Σ_j (r_j^s)^−2).

    Holds for any γ with orthonormal A (per-chip noise N(0, σ²/L), unit-norm a_j). σ² and b = √P are
    computed here from P and the SNR in dB; a wrong per-chip noise level (×√2, ×2, σ² instead of
    σ²/L) changes the ratio of observed to predicted variance by ≥ 2.
    """
    K, N, d, rounds = 6, 10, 4000, 3
    link = FlorasLink(PhyConfig.make(L=L, snr_db=snr_db, power=P, floras={"N": N, "path": path}), K=K, seed=3, key=KEY)
    b2, s2 = P, sigma2(P, snr_db)
    z = []
    for t in range(rounds):
        s = _vectors(K, d, t)
        r = link.run_round(s, round_index=t)
        h = draw_rayleigh(3, t, K=K)  # the keyed fading draw (its law is tested in test_phy_fading)
        g = np.real(h)  # csit = "none": g_k = Re(h_k), model §5
        active_term = (math.sqrt(b2) * g / r.r_ref[r.active]) @ s
        var = b2 * s2 / L * np.sum(r.r_ref ** -2.0)
        z.append((r.s_hat - active_term) / math.sqrt(var))
    z = np.concatenate(z)
    n = z.size
    assert abs(z.mean()) < Z / math.sqrt(n)
    assert abs(np.mean(z**2) - 1.0) < Z * math.sqrt(2.0 / n)


@pytest.mark.parametrize("path", ["fast", "chip"])
def test_floras_reference_slot_noise_from_raw_config(path):
    """Despread reference r_j^s = g_k b·[j active] + N(0, σ²/L): inactive outputs are pure noise.

    With K = 4 of N = 16 sequences, 12 inactive outputs per round over 300 rounds give 3600
    samples; relative SE of the variance √(2/3600) ≈ 2.4 %. The active outputs minus g_k·√P have the
    same law (their noise is the same projection).
    """
    K, N, L, P, snr_db, rounds = 4, 16, 16, 2.0, 6.0, 300
    link = FlorasLink(PhyConfig.make(L=L, snr_db=snr_db, power=P, floras={"N": N, "path": path}), K=K, seed=9, key=KEY)
    s = np.zeros((K, 1))
    inactive, active = [], []
    for t in range(rounds):
        r = link.run_round(s, round_index=t)
        mask = np.ones(N, bool)
        mask[r.active] = False
        inactive.append(r.r_ref[mask])
        g = np.real(draw_rayleigh(9, t, K=K))
        active.append(r.r_ref[r.active] - g * math.sqrt(P))
    var = sigma2(P, snr_db) / L
    for x in (np.concatenate(inactive), np.concatenate(active)):
        n = x.size
        assert abs(np.mean(x**2) / var - 1.0) < Z * math.sqrt(2.0 / n)
        assert stats.kstest(x / math.sqrt(var), "norm").pvalue > 1e-6


@pytest.fixture(scope="module", params=["fast", "chip"])
def inactive_rounds(request):
    """300 independent rounds (one entry of e and V each) at N = 30, K = 20: γ = 10 from the raw numbers."""
    K, N = 20, 30
    link = FlorasLink(PhyConfig.make(L=32, snr_db=20.0, floras={"N": N, "path": request.param}), K=K, seed=4, key=KEY)
    s = _vectors(K, 8, 0)
    rounds = [link.run_round(s, round_index=t, trace=True) for t in range(300)]
    return N - K, np.array([r.inactive_noise[0] for r in rounds]), np.array([r.V for r in rounds])


def test_inactive_noise_scale_is_n_minus_k(inactive_rounds):
    """e^i ~ Cauchy(0, γ), γ = N − K (source Lemma 1): scipy's ML scale within Z·γ·√(2/n) of N − K.

    Fisher information of the Cauchy scale is 1/(2γ²), so the ML estimate has SE γ√(2/n) (8 % at
    n = 300): a factor-2 scale error sits 12 SE away (power ≈ 1) — unlike the two-sample KS test of 400
    fast-path against 400 chip-path values, which sees a factor 2 only ≈ 60 % of the time at level 10⁻³
    (measured by simulation; the one-sample KS test against Cauchy(0, γ) at n = 400 has power ≈ 0.99).
    """
    gamma, e, _ = inactive_rounds
    _, scale = stats.cauchy.fit(e, floc=0.0)
    assert abs(scale - gamma) < Z * gamma * math.sqrt(2.0 / e.size)


def test_conditional_variance_is_levy_with_scale_gamma_squared(inactive_rounds):
    """V ~ Lévy(0, γ²) (model §6.1): 1/V ~ Gamma(½, rate γ²/2), so E[1/V] = 1/γ² with SD √2/γ².

    A factor c in γ moves the mean of 1/V by 1/c²: a factor √2 halves it, ≈ 6 SE at n = 300 for Z = 5
    (a factor 2 quarters it).
    """
    gamma, _, V = inactive_rounds
    inv = 1.0 / V
    n = inv.size
    assert abs(inv.mean() * gamma**2 - 1.0) < Z * math.sqrt(2.0 / n)


# ------------------------------------------------------------------ channel inversion
@pytest.mark.parametrize("resource, per_symbol", [("equal", lambda s2, L: s2 / L), ("source-literal", lambda s2, L: s2)])
@pytest.mark.parametrize("rule", ["threshold", "min-admitted"])
def test_channel_inversion_error_variance_from_raw_config(resource, per_symbol, rule):
    """ŝ − Σ_adm s_k = n/√ρ, n ~ N(0, σ²/L) (equal resource) or N(0, σ²) (source literal), model §5, §6.2.

    ρ from the raw threshold (ρ = g_th) or from the keyed fading draw (ρ = min_adm |h_k|²), computed
    here; the admitted set from |h_k|² ≥ g_th, computed here too.
    """
    K, d, rounds, P, snr_db, L, g_th = 8, 3000, 4, 3.0, 12.0, 16, 0.05
    cfg = PhyConfig(scheme="channel-inversion", snr_db=snr_db, L=L, power=P, g_th=g_th, resource=resource, rho_rule=rule)
    link = ChannelInversionLink(cfg, K=K, seed=13)
    z = []
    for t in range(rounds):
        s = _vectors(K, d, t)
        h = draw_rayleigh(13, t, K=K)
        adm = np.abs(h) ** 2 >= g_th
        assert adm.any()
        rho = g_th if rule == "threshold" else float(np.min(np.abs(h[adm]) ** 2))
        rnd = link.run_round(s, round_index=t)
        np.testing.assert_array_equal(rnd.admitted, adm)
        var = per_symbol(sigma2(P, snr_db), L) / rho
        z.append((rnd.s_hat - s[adm].sum(axis=0)) / math.sqrt(var))
    z = np.concatenate(z)
    n = z.size
    assert abs(z.mean()) < Z / math.sqrt(n)
    assert abs(np.mean(z**2) - 1.0) < Z * math.sqrt(2.0 / n)


# ------------------------------------------------------------------ the link summary (floras link --json)
def test_link_summary_statistics_match_the_predicted_laws(tmp_path):
    """``floras link`` with d = 1 (one independent entry per round), 400 rounds, K = 4, N = 6: γ = 2.

    - reported Cauchy scale (ML, pooled) within Z·γ·√(2/n) of N − K (a factor 2 is ≥ 7 SE away);
    - reported median of V: the Lévy(0, γ²) CDF there is 1/2 within Z·√(1/(4n)) (binomial SE of the
      sample median's level); a factor 2 in γ moves it to ≈ 0.74 or ≈ 0.16;
    - admitted clients: mean K·P(|h|² ≥ g_th) = K·e^{−g_th} (|h|² ~ Exp(1)), SE √(K p(1−p)/n).
    """
    from scenarios.cli.main import main

    K, N, rounds, g_th = 4, 6, 400, 0.3
    out = tmp_path / "link.json"
    assert main(["link", "--scheme", "floras", "channel-inversion", "--K", str(K), "--N", str(N), "--L", "8", "--d", "1",
                 "--rounds", str(rounds), "--seed", "5", "--g-th", str(g_th), "--json", str(out)]) == 0
    import json

    data = json.loads(out.read_text())
    gamma = N - K
    inn = data["schemes"]["floras"]["inactive_noise"]
    assert inn["pooled_entries"] == rounds
    assert abs(inn["cauchy_scale"] - gamma) < Z * gamma * math.sqrt(2.0 / rounds)
    level = stats.levy(scale=gamma**2).cdf(inn["v_quantiles"]["50"])
    assert abs(level - 0.5) < Z * math.sqrt(0.25 / rounds)
    p = math.exp(-g_th)
    adm = data["schemes"]["channel-inversion"]["admitted"]["mean"]
    assert abs(adm - K * p) < Z * math.sqrt(K * p * (1 - p) / rounds)
