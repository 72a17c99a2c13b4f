"""FLORAS's ε with chip-timing offsets and N > K (model §5.1, "FLORAS's ε with offsets"): the law of the loss given
the pilots (phy/floras_timing_law.py), its stochastically larger band with an infinite tail
(privacy.gaussian_mixture.tail_band_law), the PLD of a round that may release the update itself, and the run
accountant (scenarios/config/floras_timing.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from phy.chip_timing import draw_offsets
from phy.config import PhyConfig
from phy.floras_leakage import release_given_pilots
from phy.floras_timing_law import law_link, loss_bound, loss_counts, losses, sample_losses
from phy.schemes import make_aggregator
from privacy.gaussian_mixture import GaussianMixtureRound, tail_band_law, tail_thresholds


def _phy(tau: float, *, snr: float = 10.0, K: int = 10, N: int = 16, L: int = 16, csit: str = "none"):
    cfg = PhyConfig.make(scheme="floras", L=L, snr_db=snr, timing_offset=tau,
                         floras={"N": N, "path": "chip", "csit": csit})
    return cfg, make_aggregator(cfg, K=K, d=1, seed=0, key=bytes(16)).link


# ---------------------------------------------------------------- the law of Λ
@pytest.mark.parametrize("csit,tau", [("none", 0.0), ("none", 0.3), ("phase", 0.7)])
def test_vectorised_loss_is_the_release_given_pilots_of_the_simulated_round(csit, tau):
    # every slot of 40 rounds: the batched formula from (π, g, τ, pilot noise) against the link's own round
    # (phy.floras_leakage, itself tested against the chip stream); and the receiver-noise bound on every slot
    cfg, link = _phy(tau, csit=csit)
    law = law_link(cfg, K=10)
    for t in range(40):
        rel = release_given_pilots(link, t)
        active, _, g, A_act, _, r_ref, _ = link.chip_pilots(t)
        taus = draw_offsets(0, t, K=10, max_offset=tau) if tau > 0 else np.zeros(10)
        n = r_ref - link.A.T @ (A_act @ (g * link.b))  # the despread pilot noise of the round
        lam = losses(law, active[None], g[None], taus[None], n[None])[0]
        np.testing.assert_allclose(lam, rel.loss, rtol=1e-9)
        assert np.all(lam <= loss_bound(law, g, taus) * (1 + 1e-12))


def test_law_is_the_links_law_one_slot_per_round():
    # Kolmogorov–Smirnov: the Monte Carlo law (its own streams) against slot t mod K of 1 500 simulated rounds
    # (independent across rounds); a wrong gain power, offset range or a non-uniform assignment moves it
    cfg, link = _phy(0.5)
    ref = np.array([release_given_pilots(link, t).loss[t % 10] for t in range(1500)])
    x = sample_losses(law_link(cfg, K=10), rounds=100_000)
    assert stats.ks_2samp(x, ref).pvalue > 1e-3
    # the offsets matter: the synchronous law is far from it
    assert stats.ks_2samp(sample_losses(law_link(_phy(0.0)[0], K=10), rounds=100_000), ref).pvalue < 1e-6


def test_without_offsets_at_high_snr_the_law_is_chi_square_over_gamma_squared():
    # model §7.2: Λ ≤ c²/V with c → 1 and γ²/V ~ χ²₁ (the Lévy law of the Cauchy noise) as the SNR grows
    cfg, _ = _phy(1e-9, snr=60.0, K=4, N=32, L=32)
    x = sample_losses(law_link(cfg, K=4), rounds=100_000) * 28**2
    assert stats.kstest(x, stats.chi2(1).cdf).pvalue > 1e-3
    # at 0 dB the active pilots' noise adds to V and c_k < 1: not χ²₁ any more
    cfg0, _ = _phy(1e-9, snr=0.0, K=4, N=32, L=32)
    assert stats.kstest(sample_losses(law_link(cfg0, K=4), rounds=100_000) * 28**2, stats.chi2(1).cdf).pvalue < 1e-6


def test_streamed_counts_are_the_samples_counts():
    cfg, _ = _phy(0.2)
    law = law_link(cfg, K=10)
    th = np.array([0.0, 0.01, 0.1, 0.5, 2.0])
    x = np.sqrt(sample_losses(law, rounds=70_000))
    np.testing.assert_array_equal(loss_counts(law, rounds=70_000, thresholds=th), [(x > t).sum() for t in th])


def test_law_link_refuses_what_it_does_not_model():
    for extra, key in (({"rx_antennas": 2}, "rx_antennas"), ({"coherence_symbols": 5}, "coherence_symbols"),
                       ({"pathloss": "log-distance"}, "pathloss")):
        cfg = PhyConfig.make(scheme="floras", L=16, snr_db=10.0, timing_offset=0.2,
                             floras={"N": 16, "path": "chip"}, **extra)
        with pytest.raises(ValueError, match=rf"phy\.{key}"):
            law_link(cfg, K=10)


# ---------------------------------------------------------------- the band with an infinite tail
def test_tail_band_law_puts_the_clopper_pearson_limit_of_an_empty_tail_at_infinity():
    rng = np.random.default_rng(3)
    m, beta = 50_000, 1e-3
    x = rng.exponential(size=m)
    t = tail_thresholds(20.0, span=1e4)  # no draw above 20 (P = e^{−20})
    counts = np.array([(x > v).sum() for v in t])
    values, weights = tail_band_law(counts, m, thresholds=t, beta=beta)
    assert math.isinf(values[-1])
    # count 0 of m: the one-sided limit at level β/n solves (1 − p)^m = β/n
    assert weights[-1] == pytest.approx(1.0 - (beta / t.size) ** (1.0 / m), rel=1e-6)
    # stochastically larger than the true law at every threshold
    above = 1.0 - np.cumsum(weights)
    for v in (0.1, 1.0, 3.0, 8.0):
        i = np.searchsorted(values, v, side="right") - 1
        assert above[i] >= math.exp(-v)
    # a certain bound below the limit replaces it: the tail goes where the bound says
    bounded = tail_band_law(counts, m, thresholds=t, beta=beta, bound=np.exp(-t))[1]
    assert bounded[-1] == pytest.approx(math.exp(-20.0), rel=1e-9)
    with pytest.raises(ValueError, match="thresholds"):
        tail_band_law(counts, m, thresholds=t[::-1], beta=beta)


def test_infinite_strength_round_releases_the_update_when_sampled():
    # loss ∞ with probability q·w each round, 0 otherwise: δ(ε) = 1 − (1 − q·w)^T at every ε; every Rényi order ∞
    w, q, T = 0.01, 0.2, 5
    event = GaussianMixtureRound((0.0, math.inf), (1.0 - w, w))
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    from privacy.pld import self_compose

    one = pld_lib.PrivacyLossDistribution(event.wor_pmf(rate=q, discretization=1e-3))
    assert self_compose(one, T).get_delta_for_epsilon(1.0) == pytest.approx(1.0 - (1.0 - q * w) ** T, rel=1e-9)
    assert np.all(np.isinf(event.rdp([2.0, 8.0])))
    assert event.infinite_mass == w and event.finite_upper == 0.0
    with pytest.raises(ValueError, match="strengths"):
        GaussianMixtureRound((math.inf, 1.0), (0.5, 0.5))


def test_coarsen_rounds_up_and_counts_large_strengths_as_infinite():
    from scenarios.config.floras_timing import MU_CAP, MU_FLOOR, MU_RATIO, coarsen

    mu = np.array([0.0, 1e-5, 0.5, 1.0, MU_CAP * 1.5, math.inf])
    w = np.full(6, 1 / 6)
    values, weights = coarsen(mu, w)
    assert values[0] == 0.0 and math.isinf(values[-1]) and weights[-1] == pytest.approx(2 / 6)
    assert MU_FLOOR in values  # 1e-5 up to the floor
    for x in (0.5, 1.0):  # each finite strength on the smallest grid point ≥ it, within one ratio
        up = values[np.searchsorted(values, x)]
        assert x <= up < x * MU_RATIO * (1 + 1e-12)


# ---------------------------------------------------------------- the run accountant
def _scenario(phy: dict, *, accountant: str = "pld", M: int = 10, K: int = 4, rounds: int = 1, **privacy):
    from scenarios.config import scenario_from_dict

    return scenario_from_dict({"partition": {"clients": M}, "training": {"clients_per_round": K},
                               "phy": {"scheme": "floras", "snr_db": 20.0, "C": 0.05, "L": 8,
                                       "floras": {"N": 8, "path": "chip"}, **phy},
                               "privacy": {"delta": 1e-5, "accountant": accountant, **privacy},
                               "run": {"rounds": rounds, "seed": 0}}, resolve=False)


def _timing(cfg, draws: int):
    from scenarios.config.builtin_schemes import _common
    from scenarios.config.floras_timing import timing_accountant

    return timing_accountant(cfg, d=40, common=_common(cfg), threat="T1 only (output observer)", draws=draws)


def test_nearly_synchronous_law_gives_the_idealised_pld_epsilon_at_high_snr():
    # τ_max → 0 at 60 dB: Λ → χ²₁/γ², the law of FLORAS's idealised PLD (a V-mixture of Gaussians, model §9.5); the
    # Monte Carlo band is above it by its rounding (≤ 5 % in μ) and its margins, and not by a factor
    from scenarios.config.schemes import scheme_accountant

    phy = {"snr_db": 60.0, "timing_offset": 1e-9}
    eps = _timing(_scenario(phy), 2_000_000).epsilon(rounds=1)
    ideal = scheme_accountant(_scenario({"snr_db": 60.0}), d=40, D=1).epsilon(rounds=1)
    assert ideal < eps < 1.4 * ideal


def test_offsets_raise_epsilon_and_only_the_pld_accountants_take_them(monkeypatch):
    small, large = (_timing(_scenario({"timing_offset": tau}), 2_000_000).epsilon(rounds=1) for tau in (0.05, 0.5))
    assert math.isfinite(small) and large > 1.5 * small
    # the scheme's wiring (N > K with offsets) builds it, under tightest the PLD's ε (every Rényi order is ∞)
    from scenarios.config import floras_timing
    from scenarios.config.schemes import scheme_accountant

    monkeypatch.setattr(floras_timing, "TIMING_DRAWS", 2_000_000)
    acc = scheme_accountant(_scenario({"timing_offset": 0.05}, accountant="tightest"), d=40, D=1)
    rep = acc.report(rounds=1)
    assert rep.epsilon == pytest.approx(small, rel=1e-6)
    text = "\n".join(rep.assumptions)
    assert "chip-timing offsets τ_k ~ U(0, 0.05)" in text and "assumed known to the observer" in text
    assert "S = 2C/b" in text
    for accountant in ("rdp", "rdp-generic", "gdp"):
        with pytest.raises(ValueError, match=r"privacy\.accountant = .*timing offsets.*\"pld\" or \"tightest\""):
            _timing(_scenario({"timing_offset": 0.2}, accountant=accountant), 10)
    with pytest.raises(ValueError, match=r"privacy\.level"):
        _timing(_scenario({"timing_offset": 0.2}, level="item"), 10)
    with pytest.raises(ValueError, match=r"phy\.pathloss: the law is drawn without a cell"):
        _timing(_scenario({"timing_offset": 0.2, "pathloss": "log-distance"}), 10)


def test_calibration_cache_keeps_what_the_law_reads():
    # the law reads the SNR and the CSIT (model §5.1), which the idealised FLORAS ε does not: two scenarios that
    # differ in them share a calibration without offsets and not with them (scenarios.config.targets)
    import dataclasses

    from scenarios.config.targets import _cache_key

    def key(phy, **changes):
        cfg = _scenario(phy)
        return _cache_key(dataclasses.replace(cfg, phy=dataclasses.replace(cfg.phy, **changes)))

    assert key({}) == key({}, snr_db=10.0)
    assert key({"timing_offset": 0.2}) != key({"timing_offset": 0.2}, snr_db=10.0)
    csit = {"floras": {"N": 8, "path": "chip", "csit": "phase"}}
    assert key({"timing_offset": 0.2}) != key({"timing_offset": 0.2, **csit})
    assert key({}) == key(csit)


def test_the_law_is_drawn_once_per_link_whatever_the_calibrated_c():
    # a calibration bisects C: the law reads the link only, so a second C (or clip norm) reuses it
    from scenarios.config.floras_timing import _law, timing_law

    before = _law.cache_info()
    timing_law(_scenario({"timing_offset": 0.3, "C": 0.05}), draws=50_000)
    timing_law(_scenario({"timing_offset": 0.3, "C": 0.7}), draws=50_000)
    after = _law.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)


# ---------------------------------------------------------------- the law for synchronous clients (privacy_bound)
def test_synchronous_law_on_the_fast_path_is_the_links_law():
    # without offsets the law reads no chip: the fast path's despread pilots r^s = b·g·e_π + n, n ~ N(0, σ_n²·I_N),
    # give Λ_k = (g_k·c_l)²·b²/(σ_n²·‖c‖²), c_j = b/r_j^s (model §5.1), computed here from the link's own pilots
    cfg = PhyConfig.make(scheme="floras", L=16, snr_db=10.0, floras={"N": 16, "path": "fast"})
    link = make_aggregator(cfg, K=10, d=1, seed=0, key=bytes(16)).link
    ref = []
    for t in range(1500):
        active, _, g, r_ref, _ = link.pilots(t)
        c = link.b / r_ref
        k = t % 10
        ref.append((g[k] * c[active[k]]) ** 2 * link.b**2 / (link.noise_std**2 * np.dot(c, c)))
    law = law_link(cfg, K=10)
    assert law.tau_max == 0.0
    assert stats.ks_2samp(sample_losses(law, rounds=100_000), np.array(ref)).pvalue > 1e-3
    # a pilot-noise std off by a factor 2 (variance 4) is rejected against the same rounds
    off = law_link(PhyConfig.make(scheme="floras", L=16, snr_db=10.0 - 10 * math.log10(4), floras={"N": 16}), K=10)
    assert stats.ks_2samp(sample_losses(off, rounds=100_000), np.array(ref)).pvalue < 1e-6


def test_privacy_bound_law_accounts_synchronous_floras_by_the_law(monkeypatch):
    from privacy import FlorasRunAccountant
    from scenarios.config import floras_timing
    from scenarios.config.schemes import scheme_accountant

    monkeypatch.setattr(floras_timing, "TIMING_DRAWS", 2_000_000)
    law = {"floras": {"N": 8, "privacy_bound": "law"}}  # path auto: the law does not read the path without offsets
    ideal = scheme_accountant(_scenario({"snr_db": 60.0}, accountant="tightest"), d=40, D=1)
    assert isinstance(ideal, FlorasRunAccountant)  # "auto" without offsets: the idealised release, as before
    e_ideal = ideal.epsilon(rounds=1)
    rep = scheme_accountant(_scenario({"snr_db": 60.0, **law}, accountant="tightest"), d=40, D=1).report(rounds=1)
    # at 60 dB c_k → 1 and the law is the idealised one (test above), within the band's rounding and margins
    assert e_ideal < rep.epsilon < 1.4 * e_ideal
    text = "\n".join(rep.assumptions)
    assert "synchronous clients (no chip-timing offset)" in text and "assumed known to the observer" in text
    # at 20 dB a client in a deep fade has |c_k| > 1: the simulated link is less private than the idealised release
    e20 = scheme_accountant(_scenario({"snr_db": 20.0, **law}, accountant="tightest"), d=40, D=1).epsilon(rounds=1)
    assert e20 > 2.0 * e_ideal


def test_privacy_bound_refusals_name_the_key():
    from scenarios.config import scenario_from_dict

    def build(phy, **privacy):
        return _scenario(phy, **privacy)

    with pytest.raises(ValueError, match=r"floras\.privacy_bound.*'auto', 'idealised', 'law'|floras\.privacy_bound"):
        scenario_from_dict({"phy": {"scheme": "floras", "floras": {"privacy_bound": "exact"}}}, resolve=False)
    with pytest.raises(ValueError, match=r"floras\.privacy_bound = 'idealised': with chip-timing offsets and N > K"):
        build({"timing_offset": 0.2, "floras": {"N": 8, "path": "chip", "privacy_bound": "idealised"}})
    with pytest.raises(ValueError, match=r"floras\.privacy_bound = 'law' needs N > K"):
        build({"floras": {"N": 4, "privacy_bound": "law"}})
    # the Rényi accountants (refused when the scenario is validated): without offsets the way out is the idealised
    # release
    with pytest.raises(ValueError, match=r"privacy\.accountant = 'rdp'.*privacy_bound = \"auto\""):
        build({"floras": {"N": 8, "privacy_bound": "law"}}, accountant="rdp")
    # the law's refusals (a cell) hold without offsets too
    with pytest.raises(ValueError, match=r"phy\.pathloss: the law is drawn without a cell"):
        build({"pathloss": "log-distance", "floras": {"N": 8, "privacy_bound": "law"}}, accountant="pld")


def test_calibration_cache_keeps_the_snr_for_the_synchronous_law():
    import dataclasses

    from scenarios.config.targets import _cache_key

    def key(phy, **changes):
        cfg = _scenario(phy)
        return _cache_key(dataclasses.replace(cfg, phy=dataclasses.replace(cfg.phy, **changes)))

    law = {"floras": {"N": 8, "privacy_bound": "law"}}
    assert key(law) != key(law, snr_db=10.0)
    assert key({}) != key(law)  # the bound changes ε: never one calibration for both


def test_link_study_gives_the_law_epsilon_when_asked(monkeypatch):
    # floras link --csv: the one-round ε (K = M, T = 1) by the law's PLD with privacy_bound = "law"; under "auto" with
    # offsets and N > K no bound is derived for the Rényi accountant the study uses, and the cell stays empty
    from scenarios.cli import link_study
    from scenarios.cli.link_study import one_round
    from scenarios.config import floras_timing

    # 2·10⁶ draws leave an empty tail of about 21/m = 10⁻⁵ at μ = ∞ (the default 2·10⁸: 10⁻⁷), so a larger δ here
    monkeypatch.setattr(floras_timing, "TIMING_DRAWS", 2_000_000)
    monkeypatch.setattr(link_study, "ONE_ROUND_DELTA", 1e-3)
    law = PhyConfig.make(scheme="floras", L=8, snr_db=20.0, C=0.05, floras={"N": 8, "privacy_bound": "law"})
    eps, eps_link = one_round(law, scheme="floras", K=4, d=40)
    assert math.isfinite(eps) and eps_link is None
    # the run accountant's ε of the same round (M = K = 4, T = 1) under the PLD
    run = _scenario({"floras": {"N": 8, "privacy_bound": "law"}}, M=4, K=4, accountant="pld", delta=1e-3)
    assert eps == pytest.approx(_timing(run, 2_000_000).epsilon(rounds=1), rel=1e-9)
    offsets = PhyConfig.make(scheme="floras", L=8, snr_db=20.0, C=0.05, timing_offset=0.2, floras={"N": 8, "path": "chip"})
    assert one_round(offsets, scheme="floras", K=4, d=40) == (None, None)
