"""The FLORAS uplink of one round (model §5–§6.1): keyed assignment, fading, the chip-level, fast and
sufficient-statistic paths, pilots and the conditional noise variance V.

:class:`FlorasLink` sends the K normalized vectors s_k over their sequences and returns the despread
estimate (:class:`FlorasRound`); :class:`phy.floras.FlorasAggregator` puts it behind the aggregation
interface (normalization, receiver rules, diagnostics). The equations are in :mod:`phy.floras`'s docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .assignment import KeyedAssignment
from .blocks import BLOCK, block_noise, block_ranges, chunk_ranges
from .chip_timing import draw_offsets, received_chips
from .coherence import coherence_plan
from .config import SNR_DEFINITION, PhyConfig
from .fading import effective_gain
from .floras_antennas import run_antennas
from .floras_blocks import run_blocks
from .link_channel import LinkChannel
from .randomness import check_seed, stream
from .receiver import Receiver
from .sequences import is_orthonormal, make_sequences, orthogonality_defect

__all__ = ["FlorasRound", "FlorasLink", "resolve_path", "SUFFICIENT_BLOCK"]

SUFFICIENT_BLOCK = 16 * BLOCK  # entries of ν per keyed stream on the sufficient path (fewer, longer streams)
_TRACE_ERROR = ("trace: the sufficient path yields ŝ and V only, not the per-sequence outputs (model §6.1); "
                "use path = 'fast', 'chip' or 'auto' for link traces")


def resolve_path(path: str, *, orthonormal: bool, trace: bool = False) -> str:
    """The FLORAS implementation to use for a round (model §6.1).

    "auto" → "chip" unless AᵀA = I; with AᵀA = I, "fast" when a trace is wanted and
    "sufficient" otherwise. "fast" and "sufficient" are exact only when AᵀA = I, and
    "sufficient" cannot produce a trace; both cases raise ValueError.
    """
    if path == "auto":
        if not orthonormal:
            return "chip"
        return "fast" if trace else "sufficient"
    if path not in ("fast", "chip", "sufficient"):
        raise ValueError(f"path must be one of {{auto, fast, chip, sufficient}} (got {path!r})")
    if path in ("fast", "sufficient") and not orthonormal:
        raise ValueError(f"path must be 'chip' or 'auto' for non-orthogonal sequences: the {path} path is exact only when AᵀA = I")
    if path == "sufficient" and trace:
        raise ValueError(_TRACE_ERROR)
    return path


@dataclass(frozen=True)
class FlorasRound:
    """What one FLORAS round produced (the simulator's view; the BS sees only ŝ).

    Attributes
    ----------
    s_hat : [d] float64      ŝ, estimate of Σ_k s_k [√W].
    active : [K] int64       sequence index π_t(k) of client k.
    gains : [K] float64      effective real gains g_k.
    r_ref : [N] float64      despread reference slot r^s [√W].
    V : float                conditional inactive-noise variance per entry [(ŝ/b)², dimensionless].
    path : str               "fast", "chip" or "sufficient".
    inactive_noise : [d] float64 or None   e in ŝ/b units (only when traced).
    gain_blocks : [K, B] or None   g_{k,m} per coherence block (model §5.1; None: one block, ``gains``).
    r_ref_blocks : [P, N] or None  the despread reference slot of each pilot (None: one pilot, ``r_ref``).
    pilot_share : [P] or None      fraction of the d entries equalised with each pilot.
    r_ref_antennas : [N_r, N] or None   the pilots of every receive antenna (model §5.2; None: one antenna); with
                                   coherence blocks [P, N_r, N], every pilot's (:mod:`phy.floras_antenna_blocks`).
    gain_antennas : [K, N_r] or None    g_{k,r} per receive antenna (None: one antenna, ``gains``); with coherence
                                   blocks [K, B, N_r].
    pilot_loss : [K] or None       Λ_k, the privacy loss per unit S² given the pilots (chip path with timing offsets
                                   and γ > 0 only; :mod:`phy.floras_leakage`).
    """

    s_hat: np.ndarray
    active: np.ndarray
    gains: np.ndarray
    r_ref: np.ndarray
    V: float
    path: str
    inactive_noise: np.ndarray | None = None
    gain_blocks: np.ndarray | None = None
    r_ref_blocks: np.ndarray | None = None
    pilot_share: np.ndarray | None = None
    r_ref_antennas: np.ndarray | None = None
    gain_antennas: np.ndarray | None = None
    pilot_loss: np.ndarray | None = None


class FlorasLink:
    """Composition of the FLORAS transmit chain, channel and receiver for K clients.

    Parameters
    ----------
    config : PhyConfig (scheme "floras"); K : scheduled clients; seed : master seed;
    key : bytes (≥ 16) shared by the clients (never passed to the receiver).
    """

    def __init__(self, config: PhyConfig, *, K: int, seed: int, key: bytes):
        self.config = config.validate(K=K)
        self.params = p = config.of("floras")
        self.K = int(K)
        self.seed = check_seed(seed)
        self.A = make_sequences(p.sequences, L=config.L, N=p.N, seed=self.seed)
        self.orthonormal = is_orthonormal(self.A)
        self.path = resolve_path(p.path, orthonormal=self.orthonormal)  # untraced rounds
        # traced rounds (link summaries): None when the configured path cannot trace
        self.trace_path = None if p.path == "sufficient" else resolve_path(p.path, orthonormal=self.orthonormal, trace=True)
        self.b = float(np.sqrt(config.power))
        self.noise_std = float(np.sqrt(config.noise_variance / config.L))  # per chip / per despread output
        self._clients = KeyedAssignment(key, N=p.N)  # client side
        self.receiver = Receiver(self.A, reference_amplitude=self.b)  # base-station side: A and b only
        self._gram = self.A.T @ self.A
        self.channel = LinkChannel(config, K=K, seed=self.seed)  # cell gains × fading blocks (model §5.1)
        self.timing_offset = float(config.timing_offset)
        if self.timing_offset > 0:  # chip-level offsets need the chip path (FlorasParams.check refuses fast/sufficient)
            self.path = self.trace_path = "chip"

    def plan(self, d: int):
        """The coherence-block layout of an update of d entries (:func:`phy.coherence.coherence_plan`)."""
        return coherence_plan(d, self.config.coherence_symbols, self.params.pilots)

    @property
    def gamma(self) -> int:
        """γ = N − K, the number of inactive sequences."""
        return self.params.N - self.K

    def conditional_variance(self, r_ref: np.ndarray, inactive: np.ndarray) -> float:
        """V = (σ²/L)·Σ_{j,l∈I} G_jl/(r_j^s r_l^s) [dimensionless]; Σ_{j∈I} 1/w_j² when AᵀA = I."""
        if inactive.size == 0:
            return 0.0
        inv = 1.0 / r_ref[inactive]
        G = self._gram[np.ix_(inactive, inactive)]
        return float(self.noise_std**2 * (inv @ G @ inv))

    def run_round(self, s: np.ndarray, *, round_index: int, trace: bool = False, clients=None) -> FlorasRound:
        """Send the normalized vectors s [K, d] (float64, √W) through one round (``clients``: identities, model §5.1).

        Returns a :class:`FlorasRound`; ``trace=True`` adds the inactive-sequence noise e [d]
        (not available on the sufficient path: ValueError).
        """
        path = self.path
        if trace:
            if self.trace_path is None:
                raise ValueError(_TRACE_ERROR)
            path = self.trace_path
        s = np.asarray(s, dtype=np.float64)
        if s.ndim != 2 or s.shape[0] != self.K:
            raise ValueError(f"s must be a K×d array with K = {self.K} (got shape {s.shape})")
        d = s.shape[1]
        cfg, seed, t = self.config, self.seed, int(round_index)
        plan = self.plan(d)
        if cfg.rx_antennas > 1 and not plan.single:  # antennas over coherence blocks (model §5.2)
            from .floras_antenna_blocks import run_antenna_blocks

            return run_antenna_blocks(self, s, plan, round_index=t, clients=clients, trace=trace, path=path)
        if cfg.rx_antennas > 1:  # per-antenna despreading, maximum-ratio on the pilots (model §5.2)
            return run_antennas(self, s, round_index=t, clients=clients, trace=trace, path=path)
        if not plan.single:
            return run_blocks(self, s, plan, round_index=t, clients=clients, trace=trace, path=path)
        s_hat = np.empty(d)
        e = np.empty(d) if trace else None

        if path in ("fast", "sufficient"):
            active, inactive, g, r_ref, w = self.pilots(t, clients=clients)
        else:
            active, inactive, g, A_act, tail, r_ref, w = self.chip_pilots(t, clients=clients)
        gs = g[:, None]
        if path == "sufficient":
            np.einsum("k,kd->d", w[active] * g, s, out=s_hat)  # not BLAS: steady under CPU contention
            self.add_sufficient_noise(s_hat, w, round_index=t)
        elif path == "fast":
            w_in = w[inactive] / self.b
            for c0, c1 in chunk_ranges(d, cfg.chunk_size):
                for a, z, m in block_ranges(c0, c1):
                    # despread outputs Aᵀy = (AᵀA = I) g_k s_k on row π(k) + N(0, σ²/L) noise
                    r = block_noise((self.params.N,), z - a, seed=seed, purpose="floras-despread-noise",
                                    round_index=t, block=m, std=self.noise_std)
                    if trace:
                        e[a:z] = w_in @ r[inactive]
                    r[active] += gs * s[:, a:z]
                    s_hat[a:z] = self.receiver.combine(w, r)
        else:
            w_in = w[inactive] / self.b
            A_in_T = np.ascontiguousarray(self.A[:, inactive].T)
            for c0, c1 in chunk_ranges(d, cfg.chunk_size):
                y = A_act @ (gs * s[:, c0:c1])  # chips of the chunk's data slots, [L, c]
                if tail is not None:  # chip 0 of slot i carries the last chip of slot i − 1 (the reference before slot 1)
                    prev = s[:, c0 - 1 : c1 - 1] if c0 > 0 else np.hstack([np.full((self.K, 1), self.b), s[:, : c1 - 1]])
                    y[0] += tail @ prev
                for a, z, m in block_ranges(c0, c1):
                    n = block_noise((cfg.L,), z - a, seed=seed, purpose="floras-chip-noise",
                                    round_index=t, block=m, std=self.noise_std)
                    if trace:
                        e[a:z] = w_in @ (A_in_T @ n)
                    y[:, a - c0 : z - c0] += n
                s_hat[c0:c1] = self.receiver.combine(w, self.receiver.despread(y))
        V = self.conditional_variance(r_ref, inactive)
        loss = None
        if path == "chip" and self.timing_offset > 0 and self.gamma > 0:  # what the offsets cost in privacy (measured)
            from .floras_leakage import PilotRelease, pilot_weights

            loss = PilotRelease(*pilot_weights(self.A, A_act, g, tail, w, self.noise_std), self.b, V, active).loss
        return FlorasRound(s_hat, active, g, r_ref, V, path, e, pilot_loss=loss)

    def chip_pilots(self, round_index: int, *, clients=None):
        """The round's assignment, gains, received chips and despread reference slot on the chip path (one block).

        Returns (active [K], inactive [N−K], g [K], Ã [L, K], tail [K] or None, r^s [N], c [N]): Ã = A[:, π] without
        timing offsets, else (1 − τ)·a + τ·S·a per client with τ from ``(seed, "timing-offset", t)`` and tail_k =
        g_k·τ_k·a_k[L−1] the share of symbol i − 1 in chip 0 of slot i (:func:`phy.chip_timing.received_chips`);
        r^s = Aᵀ(Ã·g·b + n), n from ``(seed, "floras-chip-reference-noise", t)``; c_j = b/r_j^s.
        """
        t = int(round_index)
        active = self._clients.active_set(t, K=self.K)
        inactive = np.setdiff1d(np.arange(self.params.N), active)
        g = self.gains(t, clients=clients)
        A_act, tail = self.A[:, active], None
        if self.timing_offset > 0:  # fractional-chip offsets (phy.chip_timing): Ã and the inter-slot tail
            A_act, tail = received_chips(A_act, draw_offsets(self.seed, t, K=self.K, max_offset=self.timing_offset))
            tail = tail * g
        n_ref = self.noise_std * stream(self.seed, "floras-chip-reference-noise", t).standard_normal(self.config.L)
        r_ref = self.receiver.despread(A_act @ (g * self.b) + n_ref)
        return active, inactive, g, A_act, tail, r_ref, self.receiver.weights(r_ref)

    def gains(self, round_index: int, *, clients=None) -> np.ndarray:
        """g [K] of the round (one block): :meth:`block_gains` of its only block."""
        return self.block_gains(round_index, clients=clients)[:, 0]

    def block_gains(self, round_index: int, *, clients=None, n_blocks: int = 1) -> np.ndarray:
        """g [K, B] of the round's B coherence blocks: Re(h) without CSIT, |h| with phase CSIT, and with
        ``phy.csi_error`` > 0 (phase CSIT only) |h|·cos(∠h − ∠ĥ) for each block's estimate ĥ of
        :func:`phy.csi_error.estimate_channel` (the keyed stream (seed, "csi-error", t) as [2, K, B], as for channel
        inversion; model §5.1)."""
        t = int(round_index)
        h = self.channel.draw(t, clients=clients, n_blocks=int(n_blocks))
        if self.config.csi_error == 0.0:
            return effective_gain(h, csit=self.params.csit)
        from .csi_error import estimate_channel

        h_hat = estimate_channel(h, self.channel.gain(t, clients=clients), csi_error=float(self.config.csi_error),
                                 seed=self.seed, round_index=t)
        return effective_gain(h, csit=self.params.csit, estimate=h_hat)

    def pilots(self, round_index: int, *, clients=None):
        """The round's assignment, gains and despread reference slot (fast and sufficient paths, AᵀA = I).

        Returns (active [K], inactive [N−K], g [K], r^s [N], c [N]) with r^s_j = g_k·b·[j = π(k)] + N(0, σ²/L)
        from the keyed stream ``(seed, "floras-reference-noise", t)`` and c_j = b/r_j^s.
        """
        t = int(round_index)
        active = self._clients.active_set(t, K=self.K)
        inactive = np.setdiff1d(np.arange(self.params.N), active)
        g = self.gains(t, clients=clients)
        r_ref = self.noise_std * stream(self.seed, "floras-reference-noise", t).standard_normal(self.params.N)
        r_ref[active] += g * self.b
        return active, inactive, g, r_ref, self.receiver.weights(r_ref)

    def add_sufficient_noise(self, out: np.ndarray, w: np.ndarray, *, round_index: int) -> np.ndarray:
        """out += ν, ν^i ~ N(0, (σ²/L)·Σ_j c_j²) i.i.d. (c_j = b/r_j^s): the receiver noise of ŝ given r^s.

        Σ_j c_j·(a_jᵀn_i) with a_jᵀn_i i.i.d. N(0, σ²/L) (AᵀA = I) is that Gaussian (model §6.1); ν is drawn
        in keyed blocks ``(seed, "floras-sufficient-noise", t, m)`` of SUFFICIENT_BLOCK entries.
        """
        std = self.noise_std * float(np.sqrt(np.dot(w, w)))
        d = out.shape[0]
        for a in range(0, d, SUFFICIENT_BLOCK):
            z = min(a + SUFFICIENT_BLOCK, d)
            out[a:z] += block_noise((), z - a, seed=self.seed, purpose="floras-sufficient-noise",
                                    round_index=int(round_index), block=a // SUFFICIENT_BLOCK, std=std)
        return out

    def describe(self) -> dict:
        return {
            "path": self.path,
            "trace_path": self.trace_path,
            "gamma": self.gamma,
            "orthonormal": self.orthonormal,
            "orthogonality_defect": orthogonality_defect(self.A),
            "estimator_biased": not self.orthonormal,
            "snr_definition": SNR_DEFINITION,
            "noise_variance_per_chip": self.noise_std**2,
            "pilots": self.params.pilots,
            "timing_offset_max_chips": self.timing_offset,
            **self.channel.describe(),
        }
