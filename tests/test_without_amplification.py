"""ε without client-sampling amplification (model §7.3, "Without sampling amplification";
scenarios/runs/amplification.py): the participation counts replay the run's own sampler, their law is
Binomial(T, K/M), and the unsampled ε is the composed Gaussian mechanism's closed form."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import ndtr

from fl.sampling import participation_counts
from scenarios.config import load_scenario
from scenarios.runs.amplification import without_amplification

from small_scenario import small_scenario  # noqa: E402  (tests/small_scenario.py)


def _chi2_against_binomial(counts: np.ndarray, rounds: int, q: float) -> tuple[float, int]:
    """Pearson χ² of the histogram of ``counts`` against Binomial(rounds, q), tail bins merged until every
    expected count is ≥ 5; returns (statistic, degrees of freedom)."""
    n = counts.size
    pmf = stats.binom.pmf(np.arange(rounds + 1), rounds, q)
    observed = np.bincount(counts, minlength=rounds + 1).astype(float)
    edges, exp_bins, obs_bins, e_acc, o_acc = [], [], [], 0.0, 0.0
    for k in range(rounds + 1):
        e_acc += n * pmf[k]
        o_acc += observed[k]
        if e_acc >= 5.0:
            exp_bins.append(e_acc)
            obs_bins.append(o_acc)
            e_acc = o_acc = 0.0
    exp_bins[-1] += e_acc
    obs_bins[-1] += o_acc
    e, o = np.array(exp_bins), np.array(obs_bins)
    return float(np.sum((o - e) ** 2 / e)), len(e) - 1


@pytest.mark.parametrize("sampling", ["without-replacement", "poisson"])
def test_participation_counts_are_binomial_and_reach_every_client(sampling):
    M, K, T = 4000, 400, 40  # q = 0.1: each count Binomial(40, 0.1), mean 4
    counts = participation_counts(sampling, seed=11, M=M, K=K, rounds=T)
    assert counts.shape == (M,) and counts.dtype == np.int64 and counts.min() >= 0 and counts.max() <= T
    if sampling == "without-replacement":
        assert counts.sum() == K * T  # exactly K distinct clients a round
    else:  # the cohort sizes are Binomial(M, q): their sum is Binomial(M·T, q), std √(MTq(1 − q)) = 240
        assert abs(counts.sum() - K * T) < 5 * math.sqrt(M * T * 0.1 * 0.9)
    # a sampler that never picks some clients (or picks some too often) fails the histogram: χ² at the 0.999 quantile
    # (the counts of sampling without replacement are negatively associated, which narrows the histogram's spread)
    chi2, dof = _chi2_against_binomial(counts, T, K / M)
    assert chi2 < stats.chi2.ppf(0.999, dof), (chi2, dof)
    assert np.array_equal(counts, participation_counts(sampling, seed=11, M=M, K=K, rounds=T))
    assert not np.array_equal(counts, participation_counts(sampling, seed=12, M=M, K=K, rounds=T))
    # the first rounds' counts are a prefix of the run's: a count never decreases with more rounds
    assert np.all(participation_counts(sampling, seed=11, M=M, K=K, rounds=T // 2) <= counts)


def test_participation_counts_refuse_negative_rounds():
    with pytest.raises(ValueError, match="rounds must be an integer ≥ 0"):
        participation_counts("without-replacement", seed=0, M=10, K=2, rounds=-1)
    assert participation_counts("without-replacement", seed=0, M=10, K=2, rounds=0).sum() == 0


def _gdp_epsilon(mu: float, delta: float) -> float:
    """ε of μ-GDP at δ (Dong, Roth & Su, Cor. 2.13): δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2), computed here."""
    def gap(eps):
        return ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2) - delta
    return optimize.brentq(gap, 0.0, 200.0, xtol=1e-12)


def _central(tmp_path, *, accountant: str, z: float, M: int = 50, K: int = 10, rounds: int = 30,
             sampling: str = "without-replacement", relation: str = "replace"):
    scenario = tmp_path / "central.toml"
    scenario.write_text(f"""
[data]
name = "digits"
[partition]
clients = {M}
[training]
clients_per_round = {K}
sampling = "{sampling}"
[phy]
scheme = "central-gaussian"
normalization = "clip"
clip_norm = 2.5
[phy.central-gaussian]
noise_multiplier = {z}
[privacy]
accountant = "{accountant}"
delta = 1e-5
relation = "{relation}"
[run]
rounds = {rounds}
seed = 5
""")
    return load_scenario(scenario, {})


def test_unsampled_epsilon_is_the_composed_gaussian_mechanism(tmp_path):
    # replace-one: S = 2R and the noise std z·S, so each round a client takes part in is μ = 1/z GDP whatever R, and
    # n rounds compose to μ = √n/z exactly; the PLD accountant at sampling rate 1 must give that ε (pessimistic
    # discretization: at most slightly above), not the amplified one, not T rounds for the most-sampled client
    z, T, M, K = 2.0, 30, 50, 10
    sampling = "without-replacement"
    config = _central(tmp_path, accountant="pld", z=z, M=M, K=K, rounds=T)
    got = without_amplification(config, d=100, D=20, rounds=T)
    n = int(participation_counts(sampling, seed=5, M=M, K=K, rounds=T).max())
    assert got["participations_max"] == n and got["participations_mean"] == pytest.approx(T * K / M)
    assert T * K / M < n < T  # a real maximum: above the mean, below every round
    for key, rounds in (("epsilon_most_sampled", n), ("epsilon_every_round", T)):
        exact = _gdp_epsilon(math.sqrt(rounds) / z, 1e-5)
        assert exact <= got[key] <= exact * (1 + 1e-4), (key, got[key], exact)
    amplified = config.privacy_accountant(d=100, D=20).epsilon(rounds=T)
    assert amplified < got["epsilon_most_sampled"] < got["epsilon_every_round"]
    assert f"{n} of {T} rounds" in got["text"] and "sampling rate 1" in got["text"] and "seed 5" in got["text"]
    assert f"this run's {sampling} sampling" in got["text"]


def test_add_remove_neighbours_get_no_guarantee_once_the_sample_is_known(tmp_path, capsys):
    # Poisson sampling, add/remove: a client sampled in any round (probability 1 − (1 − q)^T) is seen to exist
    from scenarios.cli.output import run_privacy_line

    config = _central(tmp_path, accountant="pld", z=2.0, M=50, K=10, rounds=30, sampling="poisson",
                      relation="add-remove")
    got = without_amplification(config, d=100, D=20, rounds=30)
    assert got["epsilon_most_sampled"] is None and got["participations_max"] is None
    assert "no guarantee under add/remove neighbours" in got["text"]
    assert f"{1 - (1 - 0.2) ** 30:.4g}" in got["text"]  # 0.9988
    line = run_privacy_line({"privacy_report": {"epsilon": 1.0, "delta": 1e-5, "threat_model": "T1",
                                                "accountant": "pld", "without_amplification": got}}, tmp_path)
    assert "no add/remove guarantee (the sample reveals membership)" in line.splitlines()[1]


def test_unsampled_epsilon_under_rdp_is_the_composed_gaussian_curve(tmp_path):
    # the RDP accountant: n rounds of RDP(α) = α/(2z²) each, converted by the tight conversion (model §7.4),
    # minimised here over a continuum of orders (the accountant's grid can only give more, within 1 %)
    z, T = 2.0, 30
    config = _central(tmp_path, accountant="rdp", z=z, rounds=T)
    got = without_amplification(config, d=100, D=20, rounds=T)
    alpha = np.linspace(1.001, 200.0, 400_000)
    for key, n in (("epsilon_most_sampled", got["participations_max"]), ("epsilon_every_round", T)):
        curve = n * alpha / (2 * z**2) + np.log1p(-1 / alpha) - (math.log(1e-5) + np.log(alpha)) / (alpha - 1)
        assert curve.min() - 1e-9 <= got[key] <= curve.min() * 1.01, (key, got[key], curve.min())


def test_unsampled_epsilon_is_absent_where_nothing_was_amplified(tmp_path):
    assert without_amplification(_central(tmp_path, accountant="rdp", z=1.0, M=10, K=10), d=100, D=20, rounds=30) is None
    ideal = _central(tmp_path, accountant="rdp", z=1.0)
    import dataclasses

    ideal = dataclasses.replace(ideal, phy=dataclasses.replace(ideal.phy, scheme="ideal"))
    assert without_amplification(ideal, d=100, D=20, rounds=30) is None


def test_an_unsampled_accountant_that_fails_is_reported_not_raised(tmp_path, monkeypatch, capsys):
    # a figure that cannot be computed (e.g. a PLD too large at rate 1) leaves the run and its amplified ε alone
    import scenarios.config.schemes as schemes
    from scenarios.cli.output import run_privacy_line

    config = _central(tmp_path, accountant="rdp", z=1.0)
    amplified = config.privacy_accountant(d=100, D=20).epsilon(rounds=30)

    def refuse(cfg, *, d, D):
        assert cfg.partition.clients == cfg.training.clients_per_round  # asked at sampling rate 1 only
        raise ValueError("privacy: the grid is too large")

    monkeypatch.setattr(schemes, "scheme_accountant", refuse)
    got = without_amplification(config, d=100, D=20, rounds=30)
    assert got["epsilon_most_sampled"] is None and got["epsilon_every_round"] is None
    assert "ε not computed (privacy: the grid is too large)" in got["text"] and got["participations_max"] > 6
    line = run_privacy_line({"privacy_report": {"epsilon": amplified, "delta": 1e-5, "threat_model": "T1",
                                                "accountant": "rdp", "without_amplification": got}}, tmp_path)
    assert line.splitlines()[1] == ("privacy if the sampled clients are known (no amplification): not computed, see "
                                    "privacy_report.without_amplification")


def test_a_run_records_the_counts_of_the_clients_it_trained(tmp_path, monkeypatch, capsys):
    # the replay must be the loop's own sampling: record every round's clients as the run draws them
    import fl.federated
    from scenarios.cli.main import main

    drawn = []
    real = fl.federated.round_clients

    def spy(*args, **kwargs):
        clients = real(*args, **kwargs)
        drawn.append(np.asarray(clients).copy())
        return clients

    monkeypatch.setattr(fl.federated, "round_clients", spy)
    scenario = tmp_path / "small.toml"
    scenario.write_text(small_scenario(6))  # FLORAS, K = 5 of M = 20, seed 3
    assert main(["train", str(scenario), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert len(drawn) == 6
    counts = np.bincount(np.concatenate(drawn), minlength=20)
    report = json.loads((tmp_path / "run" / "config.json").read_text())["privacy_report"]
    bare = report["without_amplification"]
    assert bare["participations_max"] == counts.max() and bare["rounds"] == 6
    line = [x for x in out.splitlines() if x.startswith("privacy if the sampled clients are known")]
    assert len(line) == 1 and f"({counts.max()} of 6 rounds)" in line[0]


def _gdp_delta(eps: float, mu: float) -> float:
    return float(ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2)) if mu > 0 else 0.0


def test_ex_ante_epsilon_is_the_binomial_mixture_of_composed_gaussians(tmp_path):
    # an observer that learns the sampled sets sees n ~ Binomial(T, q) unsampled rounds of a client: for the Gaussian
    # δ(ε) = Σ_n P(n)·δ_GDP(ε; √n/z) exactly (model §7.3); the run's figure is the PLD accountant's, at most one grid
    # step (≤ 0.4 %) above the root and never below it. Bugs it catches: n_max or T rounds instead of the mixture,
    # averaging ε instead of δ, the amplified rate.
    z, T, M, K = 2.0, 30, 50, 10
    got = without_amplification(_central(tmp_path, accountant="pld", z=z, M=M, K=K, rounds=T), d=100, D=20, rounds=T)
    pmf = stats.binom.pmf(np.arange(T + 1), T, K / M)
    exact = optimize.brentq(lambda e: sum(p * _gdp_delta(e, math.sqrt(n) / z) for n, p in enumerate(pmf)) - 1e-5,
                            0.01, 100.0, xtol=1e-10)
    assert exact <= got["epsilon_ex_ante"] <= exact * 1.005, (got["epsilon_ex_ante"], exact)
    assert got["epsilon_ex_ante"] < got["epsilon_every_round"]
    assert "n ~ Binomial(T, K/M)" in got["text"]


def test_known_sample_epsilon_at_rate_one_is_every_round_and_checks_its_input():
    from privacy.known_sample import known_sample_epsilon

    mu1 = 0.5  # each round 0.5-GDP: T rounds are √T·0.5-GDP

    def delta_at(n, eps):
        return _gdp_delta(eps, math.sqrt(n) * mu1)

    exact = _gdp_epsilon(math.sqrt(40) * mu1, 1e-5)
    got = known_sample_epsilon(delta_at, rounds=40, rate=1.0, delta=1e-5, epsilon_hi=2 * exact)
    assert exact <= got <= exact * 1.005
    # an upper end below the root is widened until δ(ε_hi) ≤ δ holds: the answer is still the root, never below
    assert exact <= known_sample_epsilon(delta_at, rounds=40, rate=1.0, delta=1e-5, epsilon_hi=exact / 10) <= exact * 1.005
    assert known_sample_epsilon(delta_at, rounds=0, rate=0.3, delta=1e-5, epsilon_hi=1.0) == 0.0
    with pytest.raises(ValueError, match="rate in \\(0, 1\\]"):
        known_sample_epsilon(delta_at, rounds=10, rate=1.5, delta=1e-5, epsilon_hi=1.0)


def test_floras_privacy_sample_known_prints_and_writes_the_figure(tmp_path, capsys):
    # the command line's figure is the run's: the same accountant at rate 1 and the Binomial mixture (Gaussian, PLD)
    from scenarios.cli.main import main

    out = tmp_path / "eps.json"
    args = ["privacy", "--mechanism", "gaussian", "--noise-multiplier", "2", "--K", "10", "--M", "50", "--rounds", "30",
            "--accountant", "pld", "--clip-norm", "2.5", "--sample-known", "--json", str(out)]
    assert main(args) == 0
    got = json.loads(out.read_text())["sample_known"]
    run = without_amplification(_central(tmp_path, accountant="pld", z=2.0), d=100, D=20, rounds=30)
    assert got["epsilon"] == pytest.approx(run["epsilon_ex_ante"], rel=1e-9)
    assert got["epsilon_every_round"] == pytest.approx(run["epsilon_every_round"], rel=1e-9)
    assert "n ~ Binomial(30, 0.2)" in capsys.readouterr().out
    assert main([*args[:-2], "--sampling", "poisson", "--relation", "add-remove"]) == 2
    assert "replace-one neighbours" in capsys.readouterr().err


def test_revealed_sample_rdp_is_the_pairs_renyi_divergence():
    # one round of (sample, release): with probability q the unsampled round, else nothing about the client, so
    # e^{(α−1)D} = 1 − q + q·e^{(α−1)ε(α)}; computed here directly where it does not overflow, and its asymptote
    from privacy.known_sample import revealed_sample_rdp

    a = np.array([1.5, 2.0, 4.0, 16.0, 64.0])
    rho = np.array([0.02, 0.1, 0.5, 3.0, np.inf])
    got = revealed_sample_rdp(a, rho, rate=0.2)
    direct = np.log(1 - 0.2 + 0.2 * np.exp((a[:4] - 1) * rho[:4])) / (a[:4] - 1)
    assert np.allclose(got[:4], direct, rtol=1e-12) and got[4] == np.inf
    assert np.array_equal(revealed_sample_rdp(a, rho, rate=1.0), rho)
    big = revealed_sample_rdp(np.array([1000.0]), np.array([50.0]), rate=0.2)[0]  # e^{49 950} overflows a float
    assert big == pytest.approx(50.0 + math.log(0.2) / 999.0, rel=1e-12)
    with pytest.raises(ValueError, match="rate must be in"):
        revealed_sample_rdp(a, rho, rate=0.0)


def _ddgauss(accountant: str, local_std: float, M: int = 100):
    from privacy import RunAccountant

    return RunAccountant("ddgauss", K=20, M=M, accountant=accountant, d=159010, clip_norm=1.0, grid=3.5e-4,
                         local_std=local_std)


def test_rdp_revealed_takes_the_smaller_curve_order_by_order_and_tightest_uses_it():
    # DDGauss at K = 20 of 100 (generic sampled bound): the revealed-sample curve of the unsampled round wins;
    # recomputed here from the unsampled accountant's own curve and the closed form, then converted
    from privacy.known_sample import revealed_sample_rdp
    from privacy.rdp import epsilon_from_rdp

    T, sigma = 200, 2.0
    sampled, unsampled = _ddgauss("rdp", sigma), _ddgauss("rdp", sigma, M=20)
    orders = sampled._engine.orders
    known = revealed_sample_rdp(orders, unsampled._engine.round_rdp, rate=0.2)
    with np.errstate(over="ignore"):  # the direct form where e^{(α−1)ε(α)} fits a float
        direct = np.log1p(0.2 * np.expm1((orders - 1) * unsampled._engine.round_rdp)) / (orders - 1)
    fits = np.isfinite(direct)
    assert fits.sum() > 20 and np.allclose(known[fits], direct[fits], rtol=1e-12)
    expected = epsilon_from_rdp(orders, T * np.minimum(sampled._engine.round_rdp, known), delta=1e-5)[0]
    revealed = _ddgauss("rdp-revealed", sigma)
    assert revealed.epsilon(rounds=T) == pytest.approx(expected, rel=1e-12)
    assert revealed.epsilon(rounds=T) < 0.9 * sampled.epsilon(rounds=T)  # 7.59 against 9.05
    rep = _ddgauss("tightest", sigma).report(rounds=T)
    note = next(line for line in rep.assumptions if line.startswith("tightest:"))
    assert rep.epsilon == pytest.approx(expected, rel=1e-12) and "with the revealed-sample curve" in note
    # the Gaussian's tight sampled bound is never worse: rdp-revealed leaves its ε unchanged
    from privacy import RunAccountant

    g = {a: RunAccountant("gaussian", K=20, M=100, accountant=a, clip_norm=1.0, noise_std=2 * 3.744).epsilon(rounds=T)
         for a in ("rdp", "rdp-revealed")}
    assert g["rdp-revealed"] == g["rdp"]
