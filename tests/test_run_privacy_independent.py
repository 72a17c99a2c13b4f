"""Run-level ε against values computed from first principles in the test (issue 16, item 2).

For each configuration the reference ε is built here by hand from the raw numbers (K, M, N, C, P,
B, D, E, T, δ): the per-round Rényi curve from model §7.2's closed form (or the Gaussian's
αS²/(2σ²)), the sampling rate from model §7.3 (client rate K/M, record rate
q_touch = 1 − (1 − B/D)^E), the Poisson amplification bound transcribed from Zhu & Wang 2019,
Thm 6, composition over T rounds by multiplication, and the tight conversion of Canonne–Kamath–
Steinke 2020 / Balle et al. 2020 written out. dp_accounting evaluates the events it supports
(the unsampled Gaussian and the Poisson-sampled Gaussian, which it computes exactly and which
the general bound must dominate).

FLORAS references use the unsampled closed form or the Poisson path, both explicitly selected
(client sampling rate 1, or ``sampling = "poisson"``), so a change of the default client-sampling
accountant does not change what these tests pin.
"""

import csv
import math

import dp_accounting as dpa
import numpy as np
import pytest

from privacy import FlorasRunAccountant, GaussianRound, PoissonSampled, RdpAccountant, SelfComposed
from privacy.rdp import DEFAULT_ORDERS
from scenarios.config import scenario_from_dict

GRID = np.asarray(DEFAULT_ORDERS, dtype=float)  # the order grid is an input; the curves are computed here
REL = 1e-9


# ------------------------------------------------------------------ first-principles pieces
def cauchy_round(alpha, S, gamma):
    """model §7.2: ε(α) = −ln(1 − α(α−1)S²/γ²)/(2(α−1)) when α(α−1)S² < γ², else ∞."""
    x = alpha * (alpha - 1.0) * S * S / (gamma * gamma)
    return math.inf if x >= 1.0 else -math.log1p(-x) / (2.0 * (alpha - 1.0))


def gaussian_round(alpha, S, sigma):
    """Mironov 2017, Prop. 7: αS²/(2σ²)."""
    return alpha * S * S / (2.0 * sigma * sigma)


def zhu_wang(alpha: int, q: float, base) -> float:
    """Zhu & Wang 2019 (ICML), Thm 6, integer α ≥ 2, written out term by term in log space.

    ln[(1−q)^{α−1}(αq − q + 1) + C(α,2) q²(1−q)^{α−2} e^{ε(2)} + 3 Σ_{l=3}^{α} C(α,l)(1−q)^{α−l} q^l e^{(l−1)ε(l)}]/(α−1)
    """
    logs = [(alpha - 1) * math.log1p(-q) + math.log(alpha * q - q + 1.0)]
    e2 = base(2)
    if math.isinf(e2):
        return math.inf
    logs.append(math.log(math.comb(alpha, 2)) + 2 * math.log(q) + (alpha - 2) * math.log1p(-q) + e2)
    for l in range(3, alpha + 1):
        el = base(l)
        if math.isinf(el):
            return math.inf
        logs.append(math.log(3.0) + math.log(math.comb(alpha, l)) + (alpha - l) * math.log1p(-q) + l * math.log(q) + (l - 1) * el)
    top = max(logs)
    return (top + math.log(sum(math.exp(v - top) for v in logs))) / (alpha - 1)


def poisson_curve(q, base):
    """Sampled curve on GRID: fractional α through ⌈α⌉ (RDP is non-decreasing in α), never above the base."""
    return np.array([min(zhu_wang(max(2, math.ceil(a)), q, base), base(a)) for a in GRID])


def tight_epsilon(curve, delta):
    """min_α RDP(α) + ln(1 − 1/α) − (ln δ + ln α)/(α − 1) (CKS 2020 Prop. 12; Balle et al. 2020 Thm 21)."""
    best = math.inf
    for a, r in zip(GRID, curve):
        if math.isfinite(r):
            best = min(best, r + math.log1p(-1.0 / a) - (math.log(delta) + math.log(a)) / (a - 1.0))
    return max(best, 0.0)


BASE = dict(K=20, d=1, C=0.5, delta=1e-5)  # P = 1, b = 1: S = 2C/b = 1 (replace / item), C/b = 0.5 (client add/remove)


# ------------------------------------------------------------------ FLORAS
@pytest.mark.parametrize("N, T", [(60, 100), (45, 30)])
def test_floras_client_level_unsampled_is_the_closed_form_composed(N, T):
    """K = M (every client every round): ε = tight conversion of T·ε_round(α), γ = N − K, S = 2C/√P."""
    S, gamma = 2 * 0.5 / 1.0, N - 20
    ref = tight_epsilon(np.array([T * cauchy_round(a, S, gamma) for a in GRID]), 1e-5)
    rep = FlorasRunAccountant(N=N, M=20, **BASE).report(rounds=T)
    assert math.isfinite(ref) and rep.epsilon == pytest.approx(ref, rel=REL)
    item = FlorasRunAccountant(N=N, M=20, level="item", **BASE).report(rounds=T)  # full epochs: q_touch = 1
    assert item.epsilon == pytest.approx(ref, rel=REL)


def test_floras_client_level_poisson_sampling():
    """Client add/remove, Poisson client sampling at p = K/M: S = C/b, Zhu & Wang at rate K/M."""
    K, M, N, T = 20, 100, 30, 200
    S, gamma = 0.5, N - K
    ref = tight_epsilon(T * poisson_curve(K / M, lambda a: cauchy_round(a, S, gamma)), 1e-5)
    rep = FlorasRunAccountant(N=N, M=M, sampling="poisson", relation="add-remove", accountant="rdp-generic",
                              **BASE).report(rounds=T)
    assert math.isfinite(ref) and rep.epsilon == pytest.approx(ref, rel=REL)


@pytest.mark.parametrize("sampling, M", [("poisson", 100), ("without-replacement", 20)])
def test_floras_item_level_local_steps_uses_q_touch(sampling, M):
    """Item add/remove with E local steps of B of D records: q_touch = 1 − (1 − B/D)^E (model §7.3).

    ``poisson`` applies no client amplification at item level; ``without-replacement`` with M = K
    samples every client (rate 1). Either way the event is Poisson record sampling at q_touch of the
    Cauchy round with S = 2C/b. Using q = B/D instead of q_touch gives a much smaller ε, which the
    last assertion pins as a different number.
    """
    E, B, D, N, T = 3, 10, 500, 30, 100
    S, gamma = 1.0, N - 20
    q_touch = 1.0 - (1.0 - B / D) ** E
    base = lambda a: cauchy_round(a, S, gamma)
    ref = tight_epsilon(T * poisson_curve(q_touch, base), 1e-5)
    rep = FlorasRunAccountant(N=N, M=M, level="item", relation="add-remove", sampling=sampling, local_steps=E,
                              batch_size=B, local_dataset_size=D, accountant="rdp-generic", **BASE).report(rounds=T)
    assert math.isfinite(ref) and rep.epsilon == pytest.approx(ref, rel=REL)
    wrong = tight_epsilon(T * poisson_curve(B / D, base), 1e-5)
    assert abs(wrong - ref) > 0.2 * ref  # the bug q_touch = q would be far outside REL


def test_scenario_accountant_item_level_from_raw_training_numbers():
    """The accountant a run builds (ScenarioConfig.privacy_accountant) from [training] and the local data size D.

    M = K = 5 clients (rate 1), item level, add/remove, E = 4 local steps of B = 10 of D = 200
    records, N = 15 (γ = 10), C = 0.5, P = 1, T = 50, δ = 1e-6: ε ≈ 3.79 (with q_touch = q it would be ≈ 1.31).
    """
    cfg = scenario_from_dict({
        "partition": {"clients": 5},
        "training": {"clients_per_round": 5, "batch_size": 10, "local_steps": 4},
        "phy": {"scheme": "floras", "L": 16, "C": 0.5, "floras": {"N": 15}},
        "privacy": {"level": "item", "relation": "add-remove", "delta": 1e-6, "accountant": "rdp-generic"},
        "run": {"rounds": 50},
    })
    q_touch = 1.0 - (1.0 - 10 / 200) ** 4
    base = lambda a: cauchy_round(a, 1.0, 10.0)
    ref = tight_epsilon(50 * poisson_curve(q_touch, base), 1e-6)
    eps = cfg.privacy_accountant(d=1234, D=200).report(rounds=50).epsilon
    assert math.isfinite(ref) and eps == pytest.approx(ref, rel=REL)
    assert abs(tight_epsilon(50 * poisson_curve(10 / 200, base), 1e-6) - ref) > 0.5 * ref  # the configuration is sensitive to q_touch


def test_a_floras_run_reports_the_independent_epsilon_every_round(tmp_path):
    """A real (tiny) run: the ε column of metrics.csv and config.json's report equal the hand values."""
    from scenarios.runs.run import run_scenario

    cfg = scenario_from_dict({
        "data": {"name": "synthetic", "synthetic_samples": 200, "synthetic_features": 4, "synthetic_classes": 2},
        "partition": {"clients": 4},
        "model": {"hidden": [3]},
        "training": {"clients_per_round": 4, "batch_size": 5, "local_steps": 2, "lr": 0.05},
        "phy": {"scheme": "floras", "L": 64, "C": 0.5, "floras": {"N": 36}},
        "privacy": {"level": "item", "relation": "add-remove", "delta": 1e-5, "accountant": "rdp-generic"},
        "run": {"rounds": 3, "seed": 1},
    })
    run_scenario(cfg, tmp_path / "run", progress=False)
    with open(tmp_path / "run" / "metrics.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    # D from the raw numbers: 200 synthetic training samples (the test set is drawn apart), iid over 4 clients
    D = 200 // 4
    q_touch = 1.0 - (1.0 - 5 / D) ** 2
    curve = poisson_curve(q_touch, lambda a: cauchy_round(a, 1.0, 32.0))
    assert [float(r["epsilon"]) for r in rows] == pytest.approx([tight_epsilon(t * curve, 1e-5) for t in (1, 2, 3)], rel=REL)


# ------------------------------------------------------------------ Gaussian
@pytest.mark.parametrize("sigma, T", [(5.0, 300), (1.2, 20)])
def test_gaussian_composition_equals_dp_accounting(sigma, T):
    """SelfComposed(GaussianRound) through the project's accountant = dp_accounting's on the same event."""
    orders = [float(a) for a in range(2, 65)]
    theirs = dpa.rdp.RdpAccountant(orders)
    theirs.compose(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(sigma), T))
    ours = RdpAccountant(orders).compose(GaussianRound(noise_std=sigma), T)
    assert ours.get_epsilon(1e-5) == pytest.approx(theirs.get_epsilon(1e-5), rel=REL)


def test_poisson_sampled_gaussian_equals_the_hand_bound_and_dominates_dp_accounting():
    """Poisson(q) ∘ Gaussian over T rounds: the generic method equals the general Zhu–Wang bound by hand,
    which is never below dp_accounting's exact value; the default (tight) method equals that exact value."""
    q, sigma, T = 0.05, 1.5, 100
    event = SelfComposed(PoissonSampled(GaussianRound(noise_std=sigma), rate=q), T)
    generic = RdpAccountant(GRID, method="generic").compose(event)
    ref = tight_epsilon(T * poisson_curve(q, lambda a: gaussian_round(a, 1.0, sigma)), 1e-5)
    assert generic.get_epsilon(1e-5) == pytest.approx(ref, rel=REL)
    theirs = dpa.rdp.RdpAccountant([float(a) for a in GRID])
    theirs.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), T))
    exact = theirs.get_epsilon(1e-5)
    assert exact <= ref * (1 + 1e-12) and ref < 2.0 * exact  # a bound, and not a vacuous one
    assert RdpAccountant(GRID).compose(event).get_epsilon(1e-5) == pytest.approx(exact, rel=1e-6)
