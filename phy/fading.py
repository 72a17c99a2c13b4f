"""Rayleigh block fading through Sionna, keyed by (seed, round) (model §5).

h_k ~ CN(0, 1) i.i.d. over the K clients, constant over the d + 1 slots of one round
(reference slot included). The draw uses Sionna's
``sionna.phy.channel.RayleighBlockFading(num_rx=1, num_rx_ant=1, num_tx=K, num_tx_ant=1)``
in double precision; its output [1, 1, 1, K, 1, 1, 1] complex128 is flattened to [K].

Sionna draws from its global generator ``sionna.phy.config.tf_rng``. To make a draw a pure
function of (seed, round) that generator is reset, under a lock, from the keyed stream
``(seed, "fading", round)`` immediately before the draw, on the CPU device (the draw is K complex
numbers; pinning it keeps results independent of an accelerator). TensorFlow and Sionna are imported
lazily, on the first draw, so importing :mod:`phy` stays light.

Effective real gain (model §5): without CSIT g_k = Re(h_k) ~ N(0, 1/2); with phase-only CSIT
(source Remark 2) client k pre-rotates by e^{−j∠h_k} and g_k = |h_k| (Rayleigh, E g² = 1).
"""

from __future__ import annotations

import os
import threading

import numpy as np

from .randomness import stream

__all__ = ["draw_rayleigh", "draw_rayleigh_antennas", "effective_gain"]

_LOCK = threading.Lock()
_MODELS: dict[int, object] = {}
_CACHE: dict[tuple, np.ndarray] = {}  # last draws: schemes compared on one channel share them
_CACHE_SIZE = 64


def _model(K: int, n_rx_ant: int = 1):
    model = _MODELS.get((K, n_rx_ant))
    if model is None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        from sionna.phy.channel import RayleighBlockFading

        model = RayleighBlockFading(num_rx=1, num_rx_ant=n_rx_ant, num_tx=K, num_tx_ant=1, precision="double")
        _MODELS[(K, n_rx_ant)] = model
    return model


def _draw(cache_key: tuple, tf_seed: int, K: int, n_rx_ant: int) -> np.ndarray:
    """[n_rx_ant, K] complex128 from Sionna (output [1, 1, n_rx_ant, K, 1, 1, 1]), cached under ``cache_key``."""
    with _LOCK:
        h = _CACHE.get(cache_key)
        if h is None:
            model = _model(K, n_rx_ant)
            import tensorflow as tf
            from sionna.phy import config as sionna_config

            with tf.device("/CPU:0"):  # same draws whether or not an accelerator is visible
                sionna_config.tf_rng.reset_from_seed(tf_seed)
                out, _ = model(batch_size=1, num_time_steps=1)
            h = np.asarray(out.numpy(), dtype=np.complex128).reshape(n_rx_ant, K)
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[cache_key] = h
        return h.copy()


def draw_rayleigh(seed: int, round_index: int, *, K: int) -> np.ndarray:
    """Block-fading coefficients of one round.

    Parameters
    ----------
    seed : master seed; round_index : round t ≥ 0; K : number of transmitting clients.

    Returns
    -------
    h : [K] complex128, i.i.d. CN(0, 1) (E|h_k|² = 1), a pure function of (seed, round_index, K).
    """
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or K < 1:
        raise ValueError(f"K must be an integer ≥ 1 (got {K!r})")
    tf_seed = int(stream(seed, "fading", round_index).integers(0, 2**63 - 1))
    return _draw((int(seed), int(round_index), int(K)), tf_seed, int(K), 1).reshape(int(K))


def draw_rayleigh_antennas(seed: int, round_index: int, *, K: int, n_rx: int) -> np.ndarray:
    """Block fading to an N_r-antenna base station (model §5.2): h [K, N_r] complex128, i.i.d. CN(0, 1) entries.

    Antenna 0 is :func:`draw_rayleigh` (so N_r = 1 is the link of model §5 bit for bit, and every N_r shares
    antenna 0's channel); antennas 1..N_r−1 are one Sionna
    ``RayleighBlockFading(num_rx=1, num_rx_ant=N_r−1, num_tx=K, num_tx_ant=1)`` draw, its generator reset
    from the keyed stream ``(seed, "fading-antennas", round)``.
    """
    if isinstance(n_rx, bool) or not isinstance(n_rx, (int, np.integer)) or n_rx < 1:
        raise ValueError(f"n_rx must be an integer ≥ 1 (got {n_rx!r})")
    h0 = draw_rayleigh(seed, round_index, K=K)
    if n_rx == 1:
        return h0[:, None]
    tf_seed = int(stream(seed, "fading-antennas", round_index).integers(0, 2**63 - 1))
    rest = _draw((int(seed), int(round_index), int(K), int(n_rx)), tf_seed, int(K), int(n_rx) - 1)
    return np.concatenate([h0[:, None], rest.T], axis=1)


def effective_gain(h: np.ndarray, *, csit: str, estimate: np.ndarray | None = None) -> np.ndarray:
    """Real effective gain g_k [K] float64: Re(h_k) for csit="none", |h_k| for csit="phase"; with the client's
    channel ``estimate`` ĥ_k (phase CSIT from an estimate, model §5.1 "Imperfect CSI") the pre-rotation e^{−j∠ĥ_k}
    leaves g_k = Re(h_k·ĥ_k*)/|ĥ_k| = |h_k|·cos(∠h_k − ∠ĥ_k)."""
    h = np.asarray(h)
    if csit == "none":
        return np.real(h).astype(np.float64)
    if csit == "phase":
        if estimate is not None:
            e = np.asarray(estimate)
            return (np.real(h * np.conj(e)) / np.abs(e)).astype(np.float64)
        return np.abs(h).astype(np.float64)
    raise ValueError(f"csit must be one of {{none, phase}} (got {csit!r})")
