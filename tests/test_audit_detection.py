"""T2 measurements: active-sequence detection, per-client decoding, linking (model §7.1, §7.5)."""

import dataclasses

import numpy as np
import pytest
from scipy import stats

from phy.assignment import simulation_key
from phy.config import PhyConfig
from phy.randomness import stream
from scenarios.audit.decoding import client_nmse
from scenarios.audit.detection import (
    detector_statistic,
    np_threshold,
    theoretical_detection_probability,
)
from scenarios.audit.experiment import detection_sweep
from scenarios.audit.linking import link_rounds, linking_success, persistent_updates
from scenarios.audit.signals import BaseStationView, T2Uplink


def _binomial_band(n: int, p: float, level: float = 0.999) -> tuple[float, float]:
    """Central interval of the count of Binomial(n, p) at ``level``, as rates."""
    lo, hi = stats.binom.interval(level, n, p)
    return lo / n, hi / n


@pytest.mark.parametrize("kind", ["energy", "signed"])
def test_np_threshold_gives_the_nominal_false_alarm_on_noise(kind):
    nv, n = 3e-4, 200_000
    noise = np.sqrt(nv) * stream(1, "audit-test-np", 0 if kind == "energy" else 1).standard_normal(n)
    for pfa in (1e-3, 1e-2, 0.2):
        tau = np_threshold(noise_var=nv, false_alarm=pfa, kind=kind)
        rate = np.mean(detector_statistic(noise, kind=kind) > tau)
        lo, hi = _binomial_band(n, pfa)
        assert lo <= rate <= hi


@pytest.mark.parametrize("csit", ["none", "phase"])
def test_theoretical_detection_probability_matches_direct_sampling(csit):
    """P_D formula/quadrature vs r = g·b + n sampled from the model §5 gain law."""
    b, nv, n = 1.0, 0.05, 200_000
    g = stream(2, "audit-test-pd", 0).standard_normal((n, 2)) * np.sqrt(0.5)
    gain = g[:, 0] if csit == "none" else np.hypot(g[:, 0], g[:, 1])
    r = gain * b + np.sqrt(nv) * stream(2, "audit-test-pd", 1).standard_normal(n)
    kind = "energy" if csit == "none" else "signed"
    for pfa in (1e-3, 1e-1):
        tau = np_threshold(noise_var=nv, false_alarm=pfa, kind=kind)
        p = theoretical_detection_probability(threshold=tau, b=b, noise_var=nv, csit=csit)
        lo, hi = _binomial_band(n, p)
        assert lo <= np.mean(detector_statistic(r, kind=kind) > tau) <= hi


def test_detection_through_the_uplink_matches_theory_and_nominal_false_alarm():
    """Chip-level rounds (Sionna fading, keyed permutation): P_D and P_FA at the default threshold.

    Counts over (round, sequence) pairs are binomial (orthonormal projections of white noise are
    independent; gains are independent across clients and rounds); the theory must lie in the
    99.9% Clopper–Pearson interval of the measurement.
    """
    cfg = PhyConfig.make(scheme="floras", L=16, snr_db=5.0, floras={"N": 16})
    out = detection_sweep(cfg, snr_dbs=[5.0], csits=("none", "phase"), Ks=[10], Ns=[16], rounds=300, seed=3,
                          key=simulation_key(3), false_alarm=0.05, confidence=0.999)
    assert len(out) == 2
    for rec in out:
        lo, hi = rec["detection_probability_ci"]
        assert lo <= rec["detection_probability_theory"] <= hi
        lo, hi = rec["false_alarm_probability_ci"]
        assert lo <= 0.05 <= hi
        roc = rec["roc"]
        assert np.all(np.diff(roc["detection_probability"]) >= 0)  # larger nominal P_FA → lower τ → higher P_D
        assert rec["active_sequence_rounds"] == 300 * 10 and rec["inactive_sequence_rounds"] == 300 * 6
    # phase pre-rotation makes the pilot stronger on average (E g = √π/2 > 0): better detection at equal P_FA
    assert out[1]["detection_probability"] > out[0]["detection_probability"]


@pytest.mark.parametrize("csit", ["none", "phase"])
def test_theoretical_detection_probability_with_rician_gains_matches_direct_sampling(csit):
    """κ = 4 (model §5.1): r = g·b + n with g from h = √(κ/(κ+1))·e^{jφ} + CN(0, 1)/√(κ+1), sampled directly."""
    b, nv, n, kappa = 1.0, 0.3, 200_000, 4.0
    rng = stream(2, "audit-test-pd-rician", 0)
    h = np.sqrt(kappa / (kappa + 1)) * np.exp(1j * rng.uniform(0, 2 * np.pi, n)) + (
        rng.standard_normal(n) + 1j * rng.standard_normal(n)) * np.sqrt(0.5 / (kappa + 1))
    gain = h.real if csit == "none" else np.abs(h)
    r = gain * b + np.sqrt(nv) * rng.standard_normal(n)
    kind = "energy" if csit == "none" else "signed"
    for pfa in (1e-3, 1e-1):
        tau = np_threshold(noise_var=nv, false_alarm=pfa, kind=kind)
        p = theoretical_detection_probability(threshold=tau, b=b, noise_var=nv, csit=csit, kappa=kappa)
        lo, hi = _binomial_band(n, p)
        assert lo <= np.mean(detector_statistic(r, kind=kind) > tau) <= hi
        ray = theoretical_detection_probability(threshold=tau, b=b, noise_var=nv, csit=csit)
        assert not lo <= ray <= hi  # the Rayleigh value is outside the band: the test sees κ


def test_detection_through_a_rician_uplink_matches_its_theory():
    """`phy.rician_k` = 4 at 0 dB: the T2 uplink's measured P_D against the Rician theory, both CSIT modes."""
    cfg = PhyConfig.make(scheme="floras", L=16, snr_db=0.0, rician_k=4.0, floras={"N": 16})
    out = detection_sweep(cfg, snr_dbs=[0.0], csits=("none", "phase"), Ks=[10], Ns=[16], rounds=300, seed=5,
                          key=simulation_key(5), false_alarm=0.05, confidence=0.999)
    for rec, csit in zip(out, ("none", "phase")):
        lo, hi = rec["detection_probability_ci"]
        assert lo <= rec["detection_probability_theory"] <= hi, rec["detection_probability_theory"]
        # the Rayleigh theory (b = 1, σ²/L = 1/16 at 0 dB) misses it: the line of sight is in the uplink's gains
        ray = theoretical_detection_probability(threshold=rec["threshold"], b=1.0, noise_var=1 / 16, csit=csit)
        assert not lo <= ray <= hi


def test_base_station_view_holds_no_client_secret():
    names = {f.name for f in dataclasses.fields(BaseStationView)}
    assert names == {"A", "b", "noise_var", "y_ref", "y_data", "r_ref", "r_data", "K", "r_pilots", "r_data_antennas",
                     "r_pilot_blocks", "pilot_of"}


@pytest.mark.parametrize("snr_db", [0.0, 20.0])
def test_decoding_nmse_follows_the_derived_law(snr_db):
    """NMSE_k = ‖b·n_i − s·n_s‖²/(‖s‖²(g·b + n_s)²) (derived): two-sample KS test at level 10⁻³."""
    K, N, L, d, rounds = 8, 12, 16, 10, 150
    cfg = PhyConfig.make(scheme="floras", L=L, snr_db=snr_db, floras={"N": N})
    up = T2Uplink(cfg, K=K, seed=4, key=simulation_key(4))
    C = np.sqrt(d)
    sim = np.concatenate([
        client_nmse(*up.round(persistent_updates(4, t, K=K, d=d, C=C, persistence=0.0), round_index=t))
        for t in range(rounds)
    ])
    n = 40_000
    rng = stream(4, "audit-test-nmse-model")
    nv = up.noise_var
    g = rng.standard_normal(n) * np.sqrt(0.5)
    n_s = np.sqrt(nv) * rng.standard_normal(n)
    n_i = np.sqrt(nv) * rng.standard_normal((n, d))
    s = np.zeros(d)
    s[0] = C  # the law depends on s only through ‖s‖ (n_i is isotropic)
    model = np.sum((up.b * n_i - s * n_s[:, None]) ** 2, axis=1) / (C**2 * (g * up.b + n_s) ** 2)
    assert stats.ks_2samp(sim, model).pvalue > 1e-3


def _linking_rates(rho: float, *, csit: str, snr_db: float, pairs: int, K: int = 10, N: int = 16, d: int = 12):
    cfg = PhyConfig.make(scheme="floras", L=16, snr_db=snr_db, floras={"N": N, "csit": csit})
    up = T2Uplink(cfg, K=K, seed=6, key=simulation_key(6))
    kind = "signed" if csit == "phase" else "energy"
    rates = {m: [] for m in ("similarity", "pilot", "index")}
    for m in range(pairs):
        a = up.round(persistent_updates(6, 2 * m, K=K, d=d, C=np.sqrt(d), persistence=rho), round_index=2 * m)
        b = up.round(persistent_updates(6, 2 * m + 1, K=K, d=d, C=np.sqrt(d), persistence=rho), round_index=2 * m + 1)
        for method in rates:
            rates[method].append(linking_success(link_rounds(a[0], b[0], method=method, kind=kind), a[1], b[1]))
    return {k: np.array(v) for k, v in rates.items()}


def test_linking_is_at_chance_for_independent_updates_and_certain_for_identical_ones():
    """ρ = 0: every attack at chance (1/K matching, 1/N index) within 4 standard errors over disjoint pairs;
    ρ = 1 at 30 dB: the similarity attack follows every client (the permutation does not hide data)."""
    K, N = 10, 16
    r0 = _linking_rates(0.0, csit="phase", snr_db=30.0, pairs=150, K=K, N=N)
    for method, chance in (("similarity", 1 / K), ("pilot", 1 / K), ("index", 1 / N)):
        x = r0[method]
        se = max(x.std(ddof=1), np.sqrt(chance * (1 - chance))) / np.sqrt(x.size)
        assert abs(x.mean() - chance) <= 4 * se, (method, x.mean())
    r1 = _linking_rates(1.0, csit="phase", snr_db=30.0, pairs=30, K=K, N=N)
    assert r1["similarity"].mean() >= 0.95
    x = r1["pilot"]  # fading i.i.d. across rounds: no channel fingerprint, whatever the data
    assert abs(x.mean() - 1 / K) <= 4 * max(x.std(ddof=1), np.sqrt(0.09)) / np.sqrt(x.size)


def test_detection_input_errors_name_the_parameter():
    with pytest.raises(ValueError, match="false_alarm"):
        np_threshold(noise_var=1.0, false_alarm=0.0, kind="energy")
    with pytest.raises(ValueError, match="kind"):
        detector_statistic(np.zeros(3), kind="bogus")
    with pytest.raises(ValueError, match="persistence"):
        persistent_updates(0, 0, K=2, d=4, C=1.0, persistence=1.5)


def test_t2_uplink_is_the_floras_link_seen_from_the_base_station():
    """Same (seed, round): same active set and gains as :class:`phy.floras.FlorasLink`; the receiver's
    estimate from the base station's view has the link's distribution (two-sample KS on the first
    entry of ŝ over 400 rounds, level 10⁻³)."""
    from phy.floras import FlorasLink

    K, N, d, rounds = 6, 10, 4, 400
    cfg = PhyConfig.make(scheme="floras", L=16, snr_db=10.0, floras={"N": N, "csit": "none"})
    key = simulation_key(9)
    link = FlorasLink(cfg, K=K, seed=9, key=key)
    up = T2Uplink(cfg, K=K, seed=9, key=key)
    s = persistent_updates(9, 0, K=K, d=d, C=2.0, persistence=0.0)
    a, b = [], []
    for t in range(rounds):
        rnd = link.run_round(s, round_index=t)
        view, truth = up.round(s, round_index=t)
        if t < 5:
            np.testing.assert_array_equal(rnd.active, truth.active)
            np.testing.assert_array_equal(rnd.gains, truth.gains)
        a.append(rnd.s_hat[0])
        b.append(up.receiver.estimate_despread(view.r_ref, view.r_data)[0])
    assert stats.ks_2samp(a, b).pvalue > 1e-3
