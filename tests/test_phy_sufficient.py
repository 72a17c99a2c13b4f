"""FLORAS sufficient-statistic path (model §6.1 "Sufficient-statistic path") against the fast path.

Noise levels are predicted from the formulas of docs/model.md and the raw configuration numbers (P, SNR in dB, L):
conditionally on the N pilot outputs r^s, ŝ^i − Σ_k (b·g_k/r^s_{π(k)})·s_k^i is N(0, v) i.i.d. over i with
v = (P·σ²/L)·Σ_j (r_j^s)^{−2}, b = √P, σ² = P/10^(SNR/10).

Power of the two-sample KS tests (level LEVEL = 1e-3, n = ROUNDS per sample): a factor-2 scale error of a
Cauchy-like statistic is rejected with probability ≥ 0.99 already at n = 800 (simulated: 0.995); every
cross-round test below also checks, on its own samples, that doubling the sufficient path's Gaussian term
is rejected, so each test demonstrably fails for that bug.
"""

import numpy as np
import pytest
from scipy import stats

from phy.config import PhyConfig
from phy.floras import SUFFICIENT_BLOCK, FlorasAggregator, FlorasLink, resolve_path
from phy.normalization import normalize
from phy.randomness import stream
from phy.receiver import Receiver
from phy.sequences import make_sequences

KEY = bytes(range(7, 39))
LEVEL = 1e-3
ROUNDS = 1000

# (K, N, L, d, snr_db, csit, sequences, power): default-like, low SNR with phase CSIT on a random
# orthonormal set, γ = 0, and a long set at negative SNR; parameters no other test uses
SETTINGS = [
    (20, 30, 32, 64, 20.0, "none", "walsh-hadamard", 1.0),
    (5, 12, 16, 16, 3.0, "phase", "random-orthonormal", 2.5),
    (6, 6, 8, 8, 10.0, "none", "walsh-hadamard", 1.0),
    (3, 40, 64, 24, -4.0, "phase", "walsh-hadamard", 0.3),
]


def _s(K, d, t, power=1.0):
    x = stream(11, "sufficient-test-vectors", t).standard_normal((K, d))
    return normalize(x, rule="paper", C=np.sqrt(d * power), clip_norm=None).s


def _predicted_variance(r_ref, *, power, snr_db, L):
    """v = (b²σ²/L)·Σ_j (r_j^s)^{−2} from the raw configuration (b² = P, σ² = P/10^(SNR/10))."""
    sigma2 = power / 10.0 ** (snr_db / 10.0)
    return power * sigma2 / L * np.sum(1.0 / np.asarray(r_ref) ** 2)


def _direct_weights(A, active, gains, r_ref, *, power):
    """c_k = b·g_k/r^s_{π(k)} computed through the chip-level receiver: noise-free data slots of unit vectors."""
    K = active.size
    rx = Receiver(A, reference_amplitude=np.sqrt(power))
    y = A[:, active] @ (gains[:, None] * np.eye(K))  # slot i carries s_k^i = δ_ki: y_i = g_i a_{π(i)}
    return rx.estimate_despread(r_ref, rx.despread(y))


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"K{s[0]}N{s[1]}L{s[2]}d{s[3]}snr{s[4]:g}{s[5]}")
def test_sufficient_path_matches_fast_path_in_distribution(setting):
    K, N, L, d, snr_db, csit, sequences, power = setting
    links = {p: FlorasLink(PhyConfig.make(L=L, snr_db=snr_db, power=power, floras={"N": N, "csit": csit, "sequences": sequences, "path": p}),
                           K=K, seed=21, key=KEY) for p in ("fast", "sufficient")}
    nmse, entry, V = {p: [] for p in links}, {p: [] for p in links}, {p: [] for p in links}
    doubled_nmse, doubled_entry = [], []
    for t in range(ROUNDS):
        s = _s(K, d, t, power)
        target = s.sum(axis=0)
        out = {p: link.run_round(s, round_index=t) for p, link in links.items()}
        for p, r in out.items():
            assert r.path == p
            nmse[p].append(np.sum((r.s_hat - target) ** 2) / np.sum(target**2))
            entry[p].append(r.s_hat[0] - target[0])
            V[p].append(r.V)
        f, u = out["fast"], out["sufficient"]
        # pilots from the same keyed streams: active set, gains, r^s and V identical sample by sample
        np.testing.assert_array_equal(u.active, f.active)
        np.testing.assert_array_equal(u.gains, f.gains)
        np.testing.assert_array_equal(u.r_ref, f.r_ref)
        assert u.V == f.V
        c = _direct_weights(links["fast"].A, f.active, f.gains, f.r_ref, power=power)
        bad = u.s_hat + (u.s_hat - c @ s)  # the plausible bug: Gaussian term with twice its standard deviation
        doubled_nmse.append(np.sum((bad - target) ** 2) / np.sum(target**2))
        doubled_entry.append(bad[0] - target[0])
    for stat, bad in ((nmse, doubled_nmse), (entry, doubled_entry)):
        assert stats.ks_2samp(stat["fast"], stat["sufficient"]).pvalue > LEVEL
        assert stats.ks_2samp(stat["fast"], bad).pvalue < LEVEL  # the test has power against a factor 2
    np.testing.assert_array_equal(V["fast"], V["sufficient"])
    if N > K:  # V ~ Lévy(0, γ²) (model §6.1)
        assert stats.kstest(V["sufficient"], "levy", args=(0, (N - K) ** 2)).pvalue > LEVEL


@pytest.mark.parametrize("csit,snr_db,power", [("none", 15.0, 1.0), ("phase", -2.0, 3.0)])
def test_weights_and_conditional_noise_against_direct_computation(csit, snr_db, power):
    """Within one round: ŝ − c@s ~ N(0, v) i.i.d. on both paths, c from the chip receiver, v from raw config.

    d = 40000 entries: the sample variance has relative standard error √(2/d) = 0.7 %; a factor 2 in the
    noise standard deviation (4 in v) or wrong weights (residual containing s) fail by far.
    """
    K, N, L, d = 9, 14, 16, 40000
    cfg = dict(L=L, snr_db=snr_db, power=power)
    own = dict(N=N, csit=csit, sequences="random-orthonormal")
    fast = FlorasLink(PhyConfig.make(**cfg, floras={**own, "path": "fast"}), K=K, seed=5, key=KEY)
    suff = FlorasLink(PhyConfig.make(**cfg, floras={**own, "path": "sufficient"}), K=K, seed=5, key=KEY)
    A = make_sequences("random-orthonormal", L=L, N=N, seed=5)
    for t in (0, 3):
        s = _s(K, d, t, power)
        u, f = suff.run_round(s, round_index=t), fast.run_round(s, round_index=t)
        c = _direct_weights(A, u.active, u.gains, u.r_ref, power=power)
        np.testing.assert_allclose(c, np.sqrt(power) * u.gains / u.r_ref[u.active], rtol=1e-12)
        v = _predicted_variance(u.r_ref, power=power, snr_db=snr_db, L=L)
        for r in (u, f):
            resid = r.s_hat - c @ s
            assert abs(np.mean(resid**2) / v - 1) < 5 * np.sqrt(2 / d)
            assert stats.kstest(resid / np.sqrt(v), "norm").pvalue > LEVEL
        assert stats.ks_2samp(u.s_hat - c @ s, f.s_hat - c @ s).pvalue > LEVEL


def test_sufficient_path_does_not_depend_on_chunk_size():
    K, d = 20, 2 * SUFFICIENT_BLOCK + 1234
    s = _s(K, d, 0)
    outs = [FlorasLink(PhyConfig.make(chunk_size=c, floras={"N": 30, "path": "sufficient"}), K=K, seed=3, key=KEY).run_round(s, round_index=2)
            for c in (1, 4096, 65536, 10**6)]
    for o in outs[1:]:
        np.testing.assert_array_equal(o.s_hat, outs[0].s_hat)
        assert o.V == outs[0].V
    again = FlorasLink(PhyConfig.make(floras={"N": 30, "path": "sufficient"}), K=K, seed=3, key=KEY).run_round(s, round_index=2)
    np.testing.assert_array_equal(again.s_hat, outs[0].s_hat)


def test_path_resolution_and_trace_errors():
    assert resolve_path("auto", orthonormal=True) == "sufficient"
    assert resolve_path("auto", orthonormal=True, trace=True) == "fast"
    assert resolve_path("auto", orthonormal=False) == "chip"
    link = FlorasLink(PhyConfig.make(floras={"N": 30, "path": "sufficient"}), K=20, seed=0, key=KEY)
    with pytest.raises(ValueError, match="^trace"):
        link.run_round(_s(20, 10, 0), round_index=0, trace=True)
    with pytest.raises(ValueError, match="^floras.path"):
        PhyConfig.make(floras={"N": 30, "sequences": "pn", "path": "sufficient"}).validate(K=20)
    with pytest.raises(ValueError, match="^path"):
        resolve_path("sufficient", orthonormal=False)
    # learning runs (untraced aggregate) take the sufficient path by default
    agg = FlorasAggregator(PhyConfig.make(floras={"N": 30}), K=20, d=10, seed=0, key=KEY)
    assert agg.link.path == "sufficient" and agg.link.trace_path == "fast"
    assert agg.describe()["path"] == "sufficient"


@pytest.mark.parametrize("rule,clip_norm", [("paper", None), ("clip", 0.5)])
def test_aggregator_folds_normalization_into_the_weights(rule, clip_norm):
    """aggregate() (normalization folded into the weights) = normalize, then the sufficient link round."""
    K, d = 6, 5000
    x = stream(2, "fold-x").standard_normal((K, d)) * 0.02
    x[1] += 3.0  # a mean far above the spread: the centred norm is computed explicitly for that row
    x[2] *= 100.0  # beyond the clip norm
    cfg = PhyConfig.make(L=16, snr_db=12.0, normalization=rule, clip_norm=clip_norm, floras={"N": 10})
    agg = FlorasAggregator(cfg, K=K, d=d, seed=4, key=KEY)
    res, rnd = agg.aggregate_traced(x, round_index=7, trace=False)
    nz = normalize(x, rule=rule, C=np.sqrt(d), clip_norm=clip_norm)
    ref = agg.link.run_round(nz.s, round_index=7)
    assert rnd.path == ref.path == "sufficient"
    np.testing.assert_allclose(rnd.s_hat, ref.s_hat, rtol=1e-9, atol=1e-9 * np.max(np.abs(ref.s_hat)))
    np.testing.assert_allclose(res.sum_estimate, nz.scale * ref.s_hat + nz.mu.sum(), rtol=1e-9)
    assert rnd.V == ref.V
    target = x.sum(axis=0)
    assert res.error == pytest.approx(np.sum((res.sum_estimate - target) ** 2) / np.sum(target**2), rel=1e-9)
    bad = x.copy()
    bad[3, 17] = np.nan
    with pytest.raises(ValueError, match="^updates must be finite"):
        agg.aggregate(bad, round_index=0)
