"""The ``tightest`` accountant (model §9.4): ε = min(ε_rdp, ε_other), "other" the first of pld, fdp that handles the
round. Predictions: the Gaussian closed form (unsampled), and the separately built rdp / fdp accountants, each tested
against their own references elsewhere; what could go wrong here is the choice (max instead of min, a candidate
never tried, a refusal that stops the run instead of falling back) and the report's statement of it."""

from __future__ import annotations

import math

import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from privacy import FlorasRunAccountant, RunAccountant
from privacy.engines import ACCOUNTANTS

DELTA = 1e-5


def _gaussian_epsilon(mu: float, delta: float) -> float:
    """ε of μ-GDP at δ: δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018, Thm 8), solved for ε."""
    f = lambda e: norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta
    return brentq(f, 0.0, 100.0, xtol=1e-12)


def test_unsampled_gaussian_takes_the_pld_which_meets_the_closed_form_and_beats_rdp():
    # K = M: no sampling; T rounds of noise std σ = z·S compose to μ = √T / z exactly.
    z, T = 2.0, 10
    make = lambda acc: RunAccountant("gaussian", K=10, M=10, accountant=acc, clip_norm=1.0, noise_std=2.0 * z)
    exact = _gaussian_epsilon(math.sqrt(T) / z, DELTA)
    tight, rdp = make("tightest").report(rounds=T), make("rdp").report(rounds=T)
    assert exact <= tight.epsilon <= exact * (1 + 2e-3)  # pessimistic PLD: above the exact value, within its grid
    assert tight.epsilon < 0.95 * rdp.epsilon  # the RDP conversion loses more than 5 % here
    text = "\n".join(tight.assumptions)
    assert "tightest: ε from pld" in text and f"rdp ε = {rdp.epsilon:.6g}" in text


@pytest.mark.parametrize("K, M", [(20, 100), (5, 10)])
def test_sampled_gaussian_is_the_smaller_of_rdp_and_pld(K, M):
    make = lambda acc: RunAccountant("gaussian", K=K, M=M, accountant=acc, clip_norm=1.0, noise_std=2.0 * 3.0)
    t, r, p = (make(a).epsilon(rounds=50) for a in ("tightest", "rdp", "pld"))
    assert t == min(r, p) and p < r
    assert make("tightest").delta_at(rounds=50, epsilon=t) == pytest.approx(
        min(make("rdp").delta_at(rounds=50, epsilon=t), make("pld").delta_at(rounds=50, epsilon=t)), rel=1e-12)


def test_randomized_response_without_replacement_falls_back_to_fdp_and_says_why():
    make = lambda acc: RunAccountant("ldp", K=5, M=10, accountant=acc, epsilon0=1.0)
    with pytest.raises(ValueError, match="pld does not support"):
        make("pld").report(rounds=10)
    rep = make("tightest").report(rounds=10)
    fdp, rdp = make("fdp").epsilon(rounds=10), make("rdp").epsilon(rounds=10)
    assert rep.epsilon == min(fdp, rdp) == fdp
    note = next(line for line in rep.assumptions if line.startswith("tightest:"))
    assert "ε from fdp" in note and "not used: pld:" in note and "RandomizedResponseRound" in note


def test_floras_with_several_pilot_blocks_and_with_one_takes_the_smaller_of_rdp_and_pld():
    kw = dict(K=20, N=30, M=100, d=1000, normalization="clip", C=2.0, clip_norm=1.0)
    two = FlorasRunAccountant(accountant="tightest", pilot_blocks=2, **kw).report(rounds=20)
    by = {name: FlorasRunAccountant(accountant=name, pilot_blocks=2, **kw).epsilon(rounds=20) for name in ("rdp", "pld")}
    assert two.epsilon == by["pld"] < by["rdp"]  # two blocks: V_min loses little, the PLD's tightness wins
    text = "\n".join(two.assumptions)
    assert "2 pilot blocks" in text and f"ε from {min(by, key=by.get)}" in text
    # with many blocks V_min is small and the Rényi bound's Jensen argument wins (model §9.5, "Several pilots")
    many = {name: FlorasRunAccountant(accountant=name, pilot_blocks=64, **kw).epsilon(rounds=20) for name in ("rdp", "pld")}
    assert FlorasRunAccountant(accountant="tightest", pilot_blocks=64, **kw).epsilon(rounds=20) == many["rdp"] < many["pld"]
    one = FlorasRunAccountant(accountant="tightest", **kw)
    pld = FlorasRunAccountant(accountant="pld", **kw).epsilon(rounds=20)
    assert one.epsilon(rounds=20) == pld < FlorasRunAccountant(accountant="rdp", **kw).epsilon(rounds=20)
    assert "C_q(f)" in "\n".join(one.report(rounds=20).assumptions)


def test_the_name_is_accepted_everywhere_an_accountant_is_named_and_a_scenario_calibrates_under_it():
    from scenarios.config import ACCOUNTANTS as CONFIG_ACCOUNTANTS
    from scenarios.config import scenario_from_dict

    assert "tightest" in ACCOUNTANTS and set(CONFIG_ACCOUNTANTS) == set(ACCOUNTANTS)
    with pytest.raises(ValueError, match="tightest"):
        RunAccountant("gaussian", K=5, M=10, accountant="tighter", clip_norm=1.0, noise_std=3.0)
    with pytest.raises(ValueError, match=r"privacy\.accountant.*tightest"):
        scenario_from_dict({"privacy": {"accountant": "tighter"}})
    key = {}
    for acc in ("rdp", "pld", "tightest"):
        cfg = scenario_from_dict({"partition": {"clients": 50}, "training": {"clients_per_round": 10},
                                  "run": {"rounds": 20},
                                  "phy": {"scheme": "central-gaussian", "normalization": "clip", "clip_norm": 1.0},
                                  "privacy": {"accountant": acc, "target_epsilon": 4}})
        key[acc] = cfg.privacy.calibrated["value"]
        assert cfg.privacy.calibrated["accountant"].startswith(acc)
    assert key["tightest"] == pytest.approx(key["pld"], rel=1e-3) and key["pld"] < 0.9 * key["rdp"]


@pytest.mark.parametrize("scheme, extra, better", [
    ("central-gaussian", {}, "pld"),
    ("sqsgd", {"sqsgd": {"levels": 2, "ratio": 0.1}}, None),
])
def test_calibration_under_tightest_is_the_better_of_its_parts_and_never_builds_the_fdp_curve_for_a_gaussian(
        scheme, extra, better, monkeypatch):
    """ε_tightest = min(ε_rdp, ε_other) with both monotone in the key, so the calibrated key under `tightest` is the
    better of the keys calibrated under rdp and under the first other accountant that handles the round alone: the
    smaller noise multiplier, the larger ε₀. A Gaussian round has a PLD: the f-DP curve is then never built
    (calibrating through the `tightest` engine answered the points whose PLD was too large with rdp (after trying
    f-DP) instead of refusing, so the search visited points whose PLD is just under the size cap: 99 s and 10 GB for
    one Gaussian key at K = 20 of 100, T = 200). sqSGD's randomized response sampled without replacement has
    no PLD: its key is the better of rdp's and fdp's."""
    import privacy.engines as engines
    from scenarios.config import scenario_from_dict

    def calibrated(acc):
        cfg = scenario_from_dict({"partition": {"clients": 100}, "training": {"clients_per_round": 20},
                                  "run": {"rounds": 50},
                                  "phy": {"scheme": scheme, "normalization": "clip", "clip_norm": 1.0, "L": 32, **extra},
                                  "privacy": {"accountant": acc, "target_epsilon": 4}})
        return cfg.privacy.calibrated

    parts = {acc: calibrated(acc)["value"] for acc in ("rdp", "pld" if better else "fdp")}
    if better:
        real = engines._FdpEngine

        def refuse(*a, **k):
            raise AssertionError("the f-DP curve was built while calibrating a round that has a PLD")
        monkeypatch.setattr(engines, "_FdpEngine", refuse)
    got = calibrated("tightest")
    increasing = scheme == "sqsgd"  # ε₀: ε grows with it
    assert got["value"] == (max if increasing else min)(parts.values())
    if better:
        assert parts["pld"] != parts["rdp"] and got["value"] == parts["pld"]
        monkeypatch.setattr(engines, "_FdpEngine", real)
    assert got["achieved_epsilon"] <= 4.0 and got["accountant"].startswith("tightest")
