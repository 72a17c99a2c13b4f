"""Analog Gaussian against a base station that keeps its raw signals (threat T2, model §5.2).

With one antenna and synchronous chips the base station sees only the superposition Σ_k (s_k + ν_k) + n/√ρ, the
released aggregate itself, so the aggregate's guarantee covers it. With N_r > 1 antennas (or chip-timing offsets) it
sees other linear combinations of the clients' s_k + ν_k: client k is then protected by v/ℓ_k per symbol
(:func:`phy.antennas.client_leverage`), not by the aggregate's K′·v, and in every case by at least its own share v.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from phy.antennas import client_leverage
from phy.fading import draw_rayleigh_antennas

DELTA, K, M, T = 1e-5, 20, 100, 200


def _leverage_by_pseudoinverse(h: np.ndarray) -> np.ndarray:
    """ℓ_k = g_kᵀ(GᵀG)⁺g_k from the model's formula: g_k = h_k/(aᴴh_k), a the principal eigenvector of Σ u_k u_kᴴ,
    real and imaginary parts stacked; an eigendecomposition and a pseudo-inverse of its own."""
    u = h / np.linalg.norm(h, axis=1, keepdims=True)
    w, V = np.linalg.eig(u.T @ u.conj())
    a = V[:, np.argmax(w.real)]
    g = h / (h @ a.conj())[:, None]
    G = np.hstack([g.real, g.imag])
    P = np.linalg.pinv(G.T @ G, rcond=1e-10, hermitian=True)
    return np.einsum("ki,ij,kj->k", G, P, G)


@pytest.mark.parametrize("n_rx", [1, 2, 4])
def test_leverage_is_the_formula_and_sums_to_the_derived_rank(n_rx):
    """At one antenna every client is seen at 1/K′ (the aggregate's noise); with N_r antennas the leverages sum to
    2N_r − 1 (one real direction, Im aᴴg_k = 0, carries nothing), so the mean client is seen with (2N_r − 1)× less
    noise than the aggregate counts. A receiver model that dropped the imaginary part would sum to N_r."""
    for t in range(20):
        h = draw_rayleigh_antennas(3, t, K=K, n_rx=n_rx)
        lev = client_leverage(h)
        np.testing.assert_allclose(lev, _leverage_by_pseudoinverse(h), rtol=1e-8, atol=1e-12)
        assert lev.sum() == pytest.approx(2 * n_rx - 1, rel=1e-10)
        assert lev.min() >= -1e-12 and lev.max() <= 1 + 1e-12
        if n_rx == 1:
            np.testing.assert_allclose(lev, 1.0 / K, rtol=1e-12)


def test_few_clients_are_separated_completely():
    """K′ ≤ 2N_r − 1 clients with generic channels: G has full row rank, every ℓ_k = 1 — each client seen with its
    own noise v alone (the lower end of the T2 bound, attained)."""
    h = draw_rayleigh_antennas(5, 0, K=3, n_rx=2)
    np.testing.assert_allclose(client_leverage(h), 1.0, rtol=1e-10)


def _config(**phy):
    from scenarios.config import scenario_from_dict

    table = {"scheme": "analog-gaussian", "normalization": "clip", "clip_norm": 1.0, "snr_db": 20.0, "L": 32,
             "analog-gaussian": {"noise_multiplier": 3.0}, **phy}
    return scenario_from_dict({"phy": table, "partition": {"clients": M}, "training": {"clients_per_round": K},
                               "run": {"rounds": T}, "privacy": {"relation": "replace", "delta": DELTA}})


def _dp_accounting_epsilon(noise_multiplier: float) -> float:
    from dp_accounting import NeighboringRelation, dp_event, rdp

    acc = rdp.RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_event.SampledWithoutReplacementDpEvent(M, K, dp_event.GaussianDpEvent(noise_multiplier)), T)
    return acc.get_epsilon(DELTA)


def _t2_epsilon(threat: str) -> float:
    return float(threat.split("ε_T2 ≤ ")[1].split(" ")[0])


def test_the_accountant_states_t1_only_and_the_t2_bound_with_several_antennas():
    """N_r = 2: the ε covers the released aggregate only, and the T2 line is the same sampled Gaussian with each
    client's own share, std z·S/√K (S = 2R replace-one, R = 1), computed here with dp_accounting's own RDP."""
    from scenarios.config.schemes import scheme_accountant

    one = scheme_accountant(_config(), d=1000, D=1)
    two = scheme_accountant(_config(rx_antennas=2), d=1000, D=1)
    assert one.threat_model.startswith("T1 and a single-antenna base station") and "ε_T2" not in one.threat_model
    assert two.threat_model.startswith("T1 only") and "2 receive antennas" in two.threat_model
    std = 3.0 * 2.0 / math.sqrt(K)
    assert f"std ≥ {std:.6g} per client" in two.threat_model
    expected = _dp_accounting_epsilon(std / 2.0)
    assert _t2_epsilon(two.threat_model) == pytest.approx(expected, rel=0.02)
    assert _t2_epsilon(two.threat_model) > 4 * two.epsilon(rounds=T)  # the aggregate's ε says little about T2


def test_the_t2_bound_with_timing_offsets_counts_the_inflated_share_or_nothing():
    """One antenna with offsets: σ_a,min² = (σ_T² − σ_n²/g_th)/(1 − 2τ_max/L)² shared by K, in ŝ units (the link
    carries s_k scaled to ‖s_k‖ ≤ C = √(d·P), so σ_T = z·2C), reported in model units (× R/C); at an SNR where the
    receiver noise alone may exceed the target, the clients may add nothing and there is no T2 guarantee."""
    from scenarios.config.schemes import scheme_accountant

    tau, L, g_th = 0.5, 32, 0.1
    acc = scheme_accountant(_config(timing_offset=tau, g_th=g_th), d=1000, D=1)
    sigma_n2 = 1.0 / 10 ** (20.0 / 10) / L  # σ²/L, P = 1 (model §5)
    C = math.sqrt(1000 * 1.0)  # √(d·P), d = 1000
    var = (9.0 * 4.0 * C**2 - sigma_n2 / g_th) / (1 - 2 * tau / L) ** 2 / K / C**2
    assert acc.threat_model.startswith("T1 only")
    assert f"std ≥ {math.sqrt(var):.6g} per client" in acc.threat_model
    # z = 0.01, −10 dB: σ_T² = (0.02·C)² = 0.4 < σ_n²/g_th = (10/32)/0.1 = 3.1
    low = scheme_accountant(_config(timing_offset=tau, g_th=g_th, snr_db=-10.0,
                                    **{"analog-gaussian": {"noise_multiplier": 0.01}}), d=1000, D=1)
    assert "no T2 guarantee" in low.threat_model and "ε_T2" not in low.threat_model
