"""Poisson-sampled training runs (``training.sampling = "poisson"``, model §1): the sampler, the fixed
denominator x̂/(qM), the accountant of such a run, the refusals, and digits runs of DDGauss and central Gaussian."""

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from fl.federated import FederatedAveraging
from fl.sampling import poisson_clients, sample_clients
from phy.config import PhyConfig
from phy.randomness import stream
from scenarios.config import load_scenario

ROOT = Path(__file__).resolve().parents[1]
QUICK = ROOT / "scenarios" / "examples" / "digits_quick.toml"
POISSON = {"training.sampling": "poisson", "privacy.relation": "add-remove", "phy.normalization": "clip",
           "phy.clip_norm": 1.0}
D_MODEL = 64 * 64 + 64 + 64 * 10 + 10  # the quick scenario's 64-64-10 MLP


def _rows(run_dir):
    with open(Path(run_dir) / "metrics.csv", newline="") as fh:
        return list(csv.DictReader(fh))


class _FixedUpdates:
    """A trainer whose client m always reports the update u_m (rows of a fixed [M, d] table)."""

    def __init__(self, table):
        self.table = np.asarray(table, dtype=np.float64)

    def train(self, w, clients, round_index):
        return self.table[np.asarray(clients)].copy(), np.zeros(len(clients))


def _ideal(K, d):
    from phy.schemes import make_aggregator

    cfg = PhyConfig.from_dict({"scheme": "ideal", "normalization": "clip", "clip_norm": 1e6})
    return cfg, make_aggregator(cfg, K=K, d=d, seed=0)


# ---------------------------------------------------------------- the default is today's sampler, bit for bit
def test_without_replacement_is_the_default_and_draws_today_s_clients():
    cfg = load_scenario(QUICK, {"phy.scheme": "ideal"})
    assert cfg.training.sampling == "without-replacement"
    M, K, d = 50, 10, 3
    table = stream(5, "test-updates").standard_normal((M, d))
    _, agg = _ideal(K, d)
    fedavg = FederatedAveraging(trainer=_FixedUpdates(table), aggregator=agg, M=M, K=K, seed=7)
    w = np.zeros(d)
    for t in range(5):
        # the documented stream (seed, "client-sampling", t): K of M uniformly without replacement
        expected = stream(7, "client-sampling", t).choice(M, size=K, replace=False)
        w_next, out = fedavg.step(w, t)
        assert np.array_equal(out.clients, expected) and out.cohort == K
        assert np.array_equal(sample_clients(seed=7, round_index=t, M=M, K=K), expected)
        # FedAvg's x̂/K' over the K clients (no clipping at clip_norm 1e6), summed in client order
        acc = np.zeros(d)
        for m in expected:
            acc += table[m]
        np.testing.assert_allclose(w_next - w, acc / K, rtol=0, atol=1e-12)
        w = w_next


# ---------------------------------------------------------------- the Poisson sampler
def test_cohort_sizes_follow_binomial_M_q():
    M, K, rounds = 1000, 50, 3000
    q = K / M
    sizes = np.array([poisson_clients(seed=11, round_index=t, M=M, q=q).size for t in range(rounds)])
    mean, var = M * q, M * q * (1 - q)
    # mean: standard error √(var/R); variance: standard error ≈ var·√(2/(R−1)) (near-normal counts); 5 σ each
    assert abs(sizes.mean() - mean) <= 5 * math.sqrt(var / rounds)
    assert abs(sizes.var(ddof=1) - var) <= 5 * var * math.sqrt(2 / (rounds - 1))
    # χ² over the central bins against Binomial(M, q); tails pooled (every expected count ≥ 5)
    from scipy.stats import binom, chi2

    edges = np.arange(int(mean - 3 * math.sqrt(var)), int(mean + 3 * math.sqrt(var)) + 1)
    probs = np.concatenate([[binom.cdf(edges[0] - 1, M, q)], binom.pmf(edges, M, q), [binom.sf(edges[-1], M, q)]])
    counts = np.concatenate([[np.sum(sizes < edges[0])], [np.sum(sizes == e) for e in edges], [np.sum(sizes > edges[-1])]])
    stat = float(np.sum((counts - rounds * probs) ** 2 / (rounds * probs)))
    assert stat < chi2.ppf(1 - 1e-4, df=len(probs) - 1)  # false alarm 10⁻⁴ at this fixed seed


def test_every_client_is_sampled_with_frequency_q_and_pairs_with_q_squared():
    M, K, rounds = 50, 10, 2000
    q = K / M
    counts = np.zeros(M)
    both = 0
    for t in range(rounds):
        c = poisson_clients(seed=3, round_index=t, M=M, q=q)
        assert np.unique(c).size == c.size and (c.size == 0 or (c.min() >= 0 and c.max() < M))
        counts[c] += 1
        both += int(0 in c and 1 in c)
    sd = math.sqrt(rounds * q * (1 - q))  # each client's count ~ Binomial(R, q)
    assert np.all(np.abs(counts - rounds * q) <= 5 * sd)
    # independence of memberships: P(0 and 1 both in) = q² (a fixed-size sampler gives K(K−1)/(M(M−1)) < q²)
    p2 = q * q
    assert abs(both - rounds * p2) <= 5 * math.sqrt(rounds * p2 * (1 - p2))


def test_a_sampler_that_never_picks_a_client_fails_the_frequency_check():
    """The check above has power: a sampler that leaves client 0 out (all else Poisson) is caught."""
    M, q, rounds = 50, 0.2, 2000
    counts = np.zeros(M)
    for t in range(rounds):
        c = poisson_clients(seed=3, round_index=t, M=M, q=q)
        counts[c[c != 0]] += 1
    sd = math.sqrt(rounds * q * (1 - q))
    assert not np.all(np.abs(counts - rounds * q) <= 5 * sd)


def test_large_populations_are_sampled_in_memory_of_the_cohort():
    M, q = 10**6, 1e-4
    c = poisson_clients(seed=1, round_index=0, M=M, q=q)
    rng = stream(1, "client-sampling-poisson", 0)  # the documented draws: K_t ~ Binomial(M, q), then the members
    n = rng.binomial(M, q)
    assert c.size == n and np.array_equal(c, rng.choice(M, size=n, replace=False))
    assert np.unique(c).size == c.size and abs(c.size - M * q) <= 5 * math.sqrt(M * q)


# ---------------------------------------------------------------- the fixed denominator
def test_the_step_is_the_sum_over_the_cohort_divided_by_qM():
    M, K, d, seed = 40, 8, 5, 2
    q = K / M
    table = stream(9, "test-updates").standard_normal((M, d))
    cfg, base = _ideal(K, d)
    from phy.cohort import cohort_aggregators

    fedavg = FederatedAveraging(trainer=_FixedUpdates(table), aggregator=base, M=M, K=K, seed=seed, sampling="poisson",
                                aggregator_for=cohort_aggregators(cfg, K=K, d=d, seed=seed))
    w = stream(9, "test-w").standard_normal(d)
    sizes = []
    for t in range(6):
        rng = stream(seed, "client-sampling-poisson", t)
        n = rng.binomial(M, q)
        members = rng.choice(M, size=n, replace=False)
        w_next, out = fedavg.step(w, t)
        assert np.array_equal(out.clients, members) and out.cohort == n
        np.testing.assert_allclose(w_next - w, table[members].sum(axis=0) / (q * M), rtol=0, atol=1e-12)
        sizes.append(n)
        w = w_next
    assert len(set(sizes)) > 1  # the cohort varied, the denominator did not


def test_an_empty_cohort_leaves_the_model_unchanged():
    M, K, d = 50, 1, 3  # q = 0.02: P(K_t = 0) = 0.98^50 ≈ 0.36
    t = next(t for t in range(100) if stream(0, "client-sampling-poisson", t).binomial(M, K / M) == 0)
    cfg, base = _ideal(K, d)
    from phy.cohort import cohort_aggregators

    fedavg = FederatedAveraging(trainer=_FixedUpdates(np.ones((M, d))), aggregator=base, M=M, K=K, seed=0,
                                sampling="poisson", aggregator_for=cohort_aggregators(cfg, K=K, d=d, seed=0))
    w = np.arange(d, dtype=float)
    w_next, out = fedavg.step(w, t)
    assert np.array_equal(w_next, w) and out.cohort == 0 and out.contributors == 0


# ---------------------------------------------------------------- DDGauss: n = K noise shares whatever the cohort
def test_ddgauss_rounds_carry_n_shares_at_sigma_whatever_the_cohort():
    from phy.cohort import cohort_aggregators

    n, d, sigma, B, k = 10, 1000, 0.05, 18, 4.0
    cfg = PhyConfig.from_dict({"scheme": "ddgauss", "normalization": "clip", "clip_norm": 1.0, "snr_db": 30.0,
                               "ddgauss": {"bits": B, "local_std": sigma}})
    agg_for = cohort_aggregators(cfg, K=n, d=d, seed=4)
    d_pad = 1024
    gamma = 2 * k * math.sqrt(1.0 * n**2 / d_pad + n * sigma**2) / math.sqrt(4.0**B - k**2 * n)  # bit budget at n = K
    noise = {}
    for K_t in (3, 10, 25):
        agg = agg_for(K_t)
        assert agg.grid == pytest.approx(gamma, rel=1e-12)
        est = np.concatenate([agg.aggregate(np.zeros((K_t, d)), round_index=t).sum_estimate for t in range(6)])
        noise[K_t] = est
    # zero updates round to zero: the estimate is the noise alone, the same n = 10 shares for every cohort
    assert np.array_equal(noise[3], noise[25]) and np.array_equal(noise[3], noise[10])
    # its variance per coordinate is n·σ² (σ/γ ≫ 1: the discrete Gaussian's variance is σ² to 1e-300);
    # 6000 coordinates: standard error of the sample variance √(2/6000) ≈ 1.8 %, 5 σ
    assert np.var(noise[3]) == pytest.approx(n * sigma**2, rel=5 * math.sqrt(2 / noise[3].size))
    # the link-level path: the admitted clients draw the n shares themselves (round robin), same variance
    for K_t in (3, 25):
        agg = agg_for(K_t)
        traced = np.concatenate([agg.aggregate_traced(np.zeros((K_t, d)), round_index=t)[0].sum_estimate
                                 for t in range(6)])
        assert np.var(traced) == pytest.approx(n * sigma**2, rel=5 * math.sqrt(2 / traced.size))


# ---------------------------------------------------------------- the accountant of a Poisson run
def test_the_accountant_is_privacy_s_poisson_event_for_q():
    from privacy import DDGaussRound, GaussianRound, PoissonSampled, RdpAccountant

    K, M, R, T, delta = 10, 50, 1.0, 40, 1e-5
    q = K / M
    z = 0.9
    cfg = load_scenario(QUICK, {**POISSON, "phy.scheme": "central-gaussian", "phy.central-gaussian.noise_multiplier": z})
    acc = cfg.privacy_accountant(d=D_MODEL, D=20)
    # add/remove: S = R, σ = z·R; the Poisson-subsampled Gaussian of rate q, composed T times
    direct = RdpAccountant().compose(PoissonSampled(GaussianRound(noise_std=z * R, sensitivity=R), rate=q), T)
    assert acc.epsilon(rounds=T) == pytest.approx(direct.get_epsilon(delta), rel=1e-12)
    wor = load_scenario(QUICK, {"phy.scheme": "central-gaussian", "phy.normalization": "clip", "phy.clip_norm": R,
                                "phy.central-gaussian.noise_multiplier": z}).privacy_accountant(d=D_MODEL, D=20)
    assert wor.epsilon(rounds=T) != acc.epsilon(rounds=T)  # a different event: K of M, replace-one

    sigma, B, k = 0.3, 16, 4.0
    cfg = load_scenario(QUICK, {**POISSON, "phy.scheme": "ddgauss", "phy.ddgauss.local_std": sigma, "phy.ddgauss.bits": B})
    acc = cfg.privacy_accountant(d=D_MODEL, D=20)
    d_pad = 8192
    gamma = 2 * k * math.sqrt(R**2 * K**2 / d_pad + K * sigma**2) / math.sqrt(4.0**B - k**2 * K)
    event = DDGaussRound(n=K, d=D_MODEL, clip=R, grid=gamma, local_std=sigma, relation="add-remove")
    direct = RdpAccountant().compose(PoissonSampled(event, rate=q), T)
    assert acc.epsilon(rounds=T) == pytest.approx(direct.get_epsilon(delta), rel=1e-9)
    text = " ".join(acc.report(rounds=T).assumptions)
    assert "Poisson" in text and "add or remove" in text


# ---------------------------------------------------------------- refusals
@pytest.mark.parametrize("over, match", [
    ({"phy.scheme": "floras"}, r"training\.sampling = 'poisson' is not supported for phy\.scheme = 'floras'.*without-replacement"),
    ({"phy.scheme": "central-gaussian", "phy.central-gaussian.noise_multiplier": 1.0, "privacy.relation": "replace"},
     r"privacy\.relation must be 'add-remove' with training\.sampling = 'poisson'"),
    ({"phy.scheme": "ddgauss", "phy.ddgauss.local_std": 0.1, "phy.ddgauss.dropout": 0.1},
     r"training\.sampling = 'poisson' needs phy\.ddgauss\.dropout = 0"),
    ({"phy.scheme": "sqsgd", "phy.sqsgd.epsilon0": 2.0, "phy.sqsgd.norm_bound": "adaptive"},
     r"training\.sampling = 'poisson' needs phy\.sqsgd\.norm_bound = 'fixed'"),
])
def test_unsupported_poisson_runs_are_refused_naming_the_key(over, match):
    with pytest.raises(ValueError, match=match):
        load_scenario(QUICK, {**POISSON, **over})


def test_prifedsync_refuses_poisson_sampling():
    with pytest.raises(ValueError, match=r"training\.sampling = 'poisson' needs training\.mode = 'fedavg'"):
        load_scenario(ROOT / "scenarios" / "examples" / "digits_prifedsync.toml", {"training.sampling": "poisson"})


def test_add_remove_without_replacement_points_to_the_poisson_run():
    with pytest.raises(ValueError, match=r"relation must be 'replace'.*training\.sampling = 'poisson'"):
        load_scenario(QUICK, {"phy.scheme": "central-gaussian", "phy.normalization": "clip", "phy.clip_norm": 1.0,
                              "phy.central-gaussian.noise_multiplier": 1.0, "privacy.relation": "add-remove"})


# ---------------------------------------------------------------- digits runs
@pytest.mark.parametrize("scheme, noise", [("ddgauss", {"phy.ddgauss.local_std": 0.1, "phy.ddgauss.bits": 16}),
                                           ("central-gaussian", {"phy.central-gaussian.noise_multiplier": 0.3})])
def test_poisson_digits_runs_train_and_report_epsilon(scheme, noise, tmp_path):
    from scenarios.runs.run import run_scenario

    rounds, M, K, seed = 8, 50, 10, 0
    cfg = load_scenario(QUICK, {**POISSON, "phy.scheme": scheme, **noise, "run.rounds": rounds})
    summary = run_scenario(cfg, tmp_path / scheme, progress=False)
    rows = _rows(tmp_path / scheme)
    assert summary["final_test_accuracy"] > 0.3  # 10 classes: chance is 0.1
    eps = [float(r["epsilon"]) for r in rows]
    assert all(0 < a < b < math.inf for a, b in zip(eps, eps[1:]))
    acc = cfg.privacy_accountant(d=D_MODEL, D=20)
    assert eps[-1] == pytest.approx(acc.epsilon(rounds=rounds), rel=1e-12)
    sizes = [int(stream(seed, "client-sampling-poisson", t).binomial(M, K / M)) for t in range(rounds)]
    assert [int(r["cohort"]) for r in rows] == sizes and len(set(sizes)) > 1
    record = json.loads((tmp_path / scheme / "config.json").read_text())
    assert "Poisson sampling, q = K/M = 10/50 = 0.2, add/remove, fixed denominator qM = 10" in record["epsilon_assumptions"]
    assert "cohort" in record["metrics"]


@pytest.mark.parametrize("scheme, extra", [("analog-gaussian", {"phy.analog-gaussian.noise_multiplier": 0.3}),
                                           ("channel-inversion", {}), ("sqsgd", {"phy.sqsgd.epsilon0": 5.0}),
                                           ("ideal", {})])
def test_the_other_supported_schemes_run_poisson_cohorts(scheme, extra, tmp_path):
    from scenarios.runs.run import run_scenario

    rounds, M, K = 3, 50, 10
    cfg = load_scenario(QUICK, {**POISSON, "phy.scheme": scheme, **extra, "run.rounds": rounds})
    run_scenario(cfg, tmp_path / scheme, progress=False)
    rows = _rows(tmp_path / scheme)
    sizes = [int(stream(0, "client-sampling-poisson", t).binomial(M, K / M)) for t in range(rounds)]
    assert [int(r["cohort"]) for r in rows] == sizes
    if scheme not in ("ideal", "central-gaussian"):  # the uplink admits K′ ≤ K_t of the round's cohort
        assert all(0 <= int(r["admitted"]) <= n for r, n in zip(rows, sizes))
    eps = float(rows[-1]["epsilon"])
    acc = cfg.privacy_accountant(d=D_MODEL, D=20)
    assert (eps == math.inf) if acc is None else eps == pytest.approx(acc.epsilon(rounds=rounds), rel=1e-12)
