"""The probe that reads channel inversion's stale-CSIT weights off the link (tests of model §5.1's aging laws)."""

import numpy as np


def stale_weights(link, *, K: int, n_c: int, B: int, T: int) -> np.ndarray:
    """w [Σ_t K′_t, B]: w_{k,m} = Re(h_{k,m}/h_{k,0}) of every admitted client k in each of T rounds.

    Client k sends 1 on entry k of every block of n_c entries (K ≤ n_c) and 0 elsewhere, so at a high SNR the
    received entry (m, k) of ŝ is w_{k,m}: block m's weight of client k."""
    s = np.zeros((K, n_c * B))
    for k in range(K):
        s[k, k::n_c] = 1.0
    w = []
    for t in range(T):
        rnd = link.run_round(s, round_index=t)
        w.append(rnd.s_hat.reshape(B, n_c)[:, :K].T[rnd.admitted])  # [K′, B]
    return np.concatenate(w)
