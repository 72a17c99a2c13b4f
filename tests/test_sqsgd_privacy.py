"""sqSGD privacy, mechanism side (SPEC §9.3): the exact Rényi divergences of PrivQuant never exceed
binary randomized response's with the same ε₀, and reach it (n = 1, K_q = 2), so the RR curve is
the tightest per-round RDP valid for every configuration."""

import itertools
import math

import numpy as np
import pytest

from phy.digital.privquant import privquant_log_prob

ORDERS = (1.5, 2.0, 3.0, 8.0, 32.0)


def rr_rdp(alpha, eps):
    """D_α(RR(0) ‖ RR(1)) with P(truth) = e^ε/(1 + e^ε), from its definition (Mironov 2017, Prop. 5)."""
    p = math.exp(eps) / (1.0 + math.exp(eps))
    return math.log(p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)) / (alpha - 1)


def worst_divergence(n, K, eps, kappa, alpha):
    inputs = np.array(list(itertools.product(range(K), repeat=n)))
    logp = np.array([privquant_log_prob(inputs, v, levels=K, epsilon0=eps, kappa=kappa) for v in inputs])
    worst = -np.inf
    for i in range(len(inputs)):
        for j in range(len(inputs)):
            if i != j:  # D_α(P‖Q) = ln Σ_u P^α Q^{1−α} / (α − 1)
                s = np.logaddexp.reduce(alpha * logp[i] + (1 - alpha) * logp[j])
                worst = max(worst, s / (alpha - 1))
    return worst


@pytest.mark.parametrize("n,K,kappa", [(1, 2, 0), (2, 3, 0), (3, 2, -1), (3, 3, 1)])
def test_privquant_rdp_is_at_most_randomized_response(n, K, kappa):
    eps = 1.7
    for alpha in ORDERS:
        d = worst_divergence(n, K, eps, kappa, alpha)
        bound = rr_rdp(alpha, eps)
        assert d <= bound * (1 + 1e-12)
        if (n, K) == (1, 2):  # PrivQuant with one binary coordinate is randomized response itself
            assert d == pytest.approx(bound, rel=1e-12)
    # and every order's value stays below the pure-DP bound ε₀
    assert rr_rdp(64.0, eps) < eps
