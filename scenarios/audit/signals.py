"""What a curious base station receives in one FLORAS round (model §6.1, §7.1 T2).

The T2 adversary knows the public sequence set A and the reference amplitude b, and it sees
the raw chips of the reference slot and of every data slot. :class:`T2Uplink` produces them by
composing the physical-layer blocks of :mod:`phy` — the sequence set
(:func:`phy.sequences.make_sequences`), the clients' keyed assignment
(:class:`phy.assignment.KeyedAssignment`), Sionna Rayleigh block fading keyed by (seed, round)
(:func:`phy.fading.draw_rayleigh`, :func:`phy.fading.effective_gain`) and the receiver's
despreading (:meth:`phy.receiver.Receiver.despread`) — around the chip-level superposition of
model §6.1:

    y_s = Σ_k g_k·b·a_{π_t(k)} + n_s ∈ R^L,      y_i = Σ_k g_k·s_k^i·a_{π_t(k)} + n_i ∈ R^L,

with n i.i.d. N(0, σ²/L) per chip, σ² = P/10^(SNR/10) (SNR := P/σ², model §5), and the despread
outputs r^s = Aᵀy_s [N], r^i = Aᵀy_i [N, d].

Split of knowledge: :class:`BaseStationView` holds only what the base station has (A, b, the
noise level it can estimate, the chips and their despread outputs); the clients' key, the
permutation and the gains stay in :class:`RoundTruth`, which only the scorer of an attack reads.

The fading of round t is the same draw :class:`phy.floras.FlorasLink` uses with the same seed;
the chip noise comes from the keyed streams ``(seed, "audit-chip-reference-noise", t)`` and
``(seed, "audit-chip-data-noise", t)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phy.assignment import KeyedAssignment
from phy.config import PhyConfig
from phy.fading import draw_rayleigh, effective_gain
from phy.randomness import check_seed, stream
from phy.receiver import Receiver
from phy.sequences import make_sequences

__all__ = ["BaseStationView", "RoundTruth", "T2Uplink"]


@dataclass(frozen=True)
class BaseStationView:
    """One round as the curious base station sees it (model §7.1 T2).

    Attributes
    ----------
    A : [L, N] float64           public sequence set.
    b : float                    reference amplitude √P [√W].
    noise_var : float            per-chip noise variance σ²/L [W] (a receiver estimates it routinely).
    y_ref : [L] float64          reference-slot chips [√W].
    y_data : [L, d] float64      data-slot chips [√W].
    r_ref : [N] float64          r^s = Aᵀ y_ref.
    r_data : [N, d] float64      r^i = Aᵀ y_i.
    K : int                      number of scheduled clients (the base station schedules them).
    """

    A: np.ndarray
    b: float
    noise_var: float
    y_ref: np.ndarray
    y_data: np.ndarray
    r_ref: np.ndarray
    r_data: np.ndarray
    K: int

    def decodes(self) -> np.ndarray:
        """Per-sequence decodes v_j = b·r_j^i / r_j^s, [N, d] float64 (model §7.1: s_k up to noise for active j)."""
        return self.b * self.r_data / self.r_ref[:, None]


@dataclass(frozen=True)
class RoundTruth:
    """Simulator-side facts of the round, never given to an attack.

    active : [K] int64 (sequence π_t(k) of client k); gains : [K] float64 (g_k); s : [K, d] float64.
    """

    active: np.ndarray
    gains: np.ndarray
    s: np.ndarray


class T2Uplink:
    """Chip-level FLORAS round generator exposing the base station's raw signals.

    Parameters
    ----------
    config : PhyConfig (scheme "floras"; fields used: N, L, snr_db, sequences, csit, power)
    K : int, scheduled clients
    seed : int, master seed (sequences, fading, noise)
    key : bytes (≥ 16), the clients' shared permutation key
    """

    def __init__(self, config: PhyConfig, *, K: int, seed: int, key: bytes):
        self.config = config.validate(K=K)
        if config.scheme != "floras":
            raise ValueError(f"scheme must be 'floras' for the T2 audit (got {config.scheme!r})")
        if config.has_cell or config.coherence_symbols is not None or config.rician_k != 0.0:
            raise ValueError("the T2 audit models the block-fading link of model §5 only: remove phy.pathloss, "
                             "phy.coherence_symbols and phy.rician_k for floras audit")
        if config.rx_antennas != 1:
            raise ValueError(f"rx_antennas: the T2 audit models a single-antenna base station (got {config.rx_antennas}); "
                             "the multi-antenna linking experiment is not implemented: use rx_antennas = 1 for floras audit")
        self.K = int(K)
        self.seed = check_seed(seed)
        self.A = make_sequences(config.of("floras").sequences, L=config.L, N=config.of("floras").N, seed=self.seed)
        self.b = float(np.sqrt(config.power))
        self.noise_var = float(config.noise_variance / config.L)
        self.receiver = Receiver(self.A, reference_amplitude=self.b)
        self._clients = KeyedAssignment(key, N=config.of("floras").N)

    def round(self, s: np.ndarray, *, round_index: int) -> tuple[BaseStationView, RoundTruth]:
        """Transmit the normalized vectors s [K, d] (float64, √W) in round ``round_index``."""
        s = np.asarray(s, dtype=np.float64)
        if s.ndim != 2 or s.shape[0] != self.K:
            raise ValueError(f"s must be a K×d array with K = {self.K} (got shape {s.shape})")
        cfg, t = self.config, int(round_index)
        L, d = cfg.L, s.shape[1]
        active = self._clients.active_set(t, K=self.K)
        g = effective_gain(draw_rayleigh(self.seed, t, K=self.K), csit=cfg.of("floras").csit)
        std = np.sqrt(self.noise_var)
        A_act = self.A[:, active]
        y_ref = A_act @ (g * self.b) + std * stream(self.seed, "audit-chip-reference-noise", t).standard_normal(L)
        y_data = A_act @ (g[:, None] * s) + std * stream(self.seed, "audit-chip-data-noise", t).standard_normal((L, d))
        view = BaseStationView(
            A=self.A,
            b=self.b,
            noise_var=self.noise_var,
            y_ref=y_ref,
            y_data=y_data,
            r_ref=self.receiver.despread(y_ref),
            r_data=self.receiver.despread(y_data),
            K=self.K,
        )
        return view, RoundTruth(active=active, gains=g, s=s)
