"""What a curious base station receives in one FLORAS round (model §5.1, §5.2, §6.1, §7.1 T2).

The T2 adversary knows the public sequence set A and the reference amplitude b, and it sees
the raw chips of the reference slot and of every data slot. :class:`T2Uplink` produces them by
composing the physical-layer blocks of :mod:`phy` — the sequence set
(:func:`phy.sequences.make_sequences`), the clients' keyed assignment
(:class:`phy.assignment.KeyedAssignment`), Sionna Rayleigh block fading keyed by (seed, round), or Rician with
``phy.rician_k`` (:func:`phy.fading.draw_rayleigh`, :mod:`phy.coherence`,
:func:`phy.fading.effective_gain`) and the receiver's
despreading (:meth:`phy.receiver.Receiver.despread`) — around the chip-level superposition of
model §6.1:

    y_s = Σ_k g_k·b·a_{π_t(k)} + n_s ∈ R^L,      y_i = Σ_k g_k·s_k^i·a_{π_t(k)} + n_i ∈ R^L,

with n i.i.d. N(0, σ²/L) per chip, σ² = P/10^(SNR/10) (SNR := P/σ², model §5), and the despread
outputs r^s = Aᵀy_s [N], r^i = Aᵀy_i [N, d].

Split of knowledge: :class:`BaseStationView` holds only what the base station has (A, b, the
noise level it can estimate, the chips and their despread outputs); the clients' key, the
permutation and the gains stay in :class:`RoundTruth`, which only the scorer of an attack reads.

Receive antennas and a cell (model §5.1, §5.2): the channel of client k to antenna r is
h_{k,r} = √β_eff,k·h̃_{k,r}, drawn by :meth:`phy.link_channel.LinkChannel.draw_antennas` — the channel
:class:`phy.floras.FlorasLink` uses with the same configuration and seed (β_eff = 1 without a cell; the
drop fixed across rounds unless ``phy.redrop``; h̃ i.i.d. across rounds) — and g_{k,r} = Re(h_{k,r})
(|h_{k,r}| with phase pre-rotation, one antenna only). With a line of sight (κ = ``phy.rician_k`` > 0) antenna r's
line of sight is antenna 0's times the steering phase e^{jπ·r·sin θ_k} of a half-wavelength array, θ_k the client's
azimuth: the drop's angle in a cell (fixed across rounds, a spatial signature that outlives the keyed permutation),
else drawn afresh every round (model §5.2, "Rician fading with several antennas"). Antenna r receives its own chips

    y_{s,r} = Σ_k g_{k,r}·b·a_{π_t(k)} + n_{s,r},   y_{i,r} = Σ_k g_{k,r}·s_k^i·a_{π_t(k)} + n_{i,r},

noise i.i.d. N(0, σ²/L) over chip, antenna and slot, and despreads them: r_{j,r}^s = a_jᵀy_{s,r},
r_{j,r}^i = a_jᵀy_{i,r}. The clients are the same K (identities 0..K−1) every round.

Chip-timing offsets (``phy.timing_offset`` = τ_max; one block and one antenna, as FLORAS's link models them; model
§5.1, :mod:`phy.chip_timing`): client k's chips arrive τ_k ~ U(0, τ_max) late, the draw of FLORAS's chip path
``(seed, "timing-offset", t)``, so the base station receives Ã = (1 − τ)·a + τ·S·a in place of a, and chip 0 of slot i
carries g_k·τ_k·a_k[L−1]·u_k^{i−1} (u^{−1} of data slot 0 the reference amplitude b): the despread outputs mix the
sequences.

Phase CSIT from an estimate (``phy.csi_error`` = σ_e², model §5.1 "Imperfect CSI"): each block is pre-rotated by its
estimate ĥ = h + e, e ~ CN(0, σ_e²·β_eff), the draw of FLORAS's link, so g = |h|·cos(∠h − ∠ĥ).

Coherence blocks (``phy.coherence_symbols``, model §5.1): the update's entries follow FLORAS's layout
(:func:`phy.coherence.coherence_plan`, ``phy.floras.pilots``): entry i is sent in fading block m(i) with gains
g_{k,m(i),r} from ``draw_antennas(t, n_blocks=B)`` and, with a pilot per block, pilot p is sent in block p; the base
station sees every pilot r_{j,r}^{s,p} (its noise for p ≥ 1 from one [P − 1, N_r, L] draw of
``(seed, "audit-chip-reference-noise-blocks", t)``); with the stale pilot it sees the one pilot of block 0.

The fading of round t is the same draw :class:`phy.floras.FlorasLink` uses with the same seed;
the chip noise of antenna 0 comes from the keyed streams ``(seed, "audit-chip-reference-noise", t)`` and
``(seed, "audit-chip-data-noise", t)`` (so N_r = 1 is the one-antenna audit bit for bit), that of antennas
1..N_r − 1 from one draw each of ``(seed, "audit-chip-reference-noise-antennas", t)`` [N_r − 1, L] and
``(seed, "audit-chip-data-noise-antennas", t)`` [N_r − 1, L, d].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phy.assignment import KeyedAssignment
from phy.chip_timing import draw_offsets, received_chips
from phy.coherence import coherence_plan
from phy.config import PhyConfig
from phy.csi_error import estimate_channel
from phy.fading import effective_gain
from phy.link_channel import LinkChannel
from phy.randomness import check_seed, stream
from phy.receiver import Receiver
from phy.sequences import make_sequences

__all__ = ["BaseStationView", "RoundTruth", "T2Uplink"]


@dataclass(frozen=True)
class BaseStationView:
    """One round as the curious base station sees it (model §7.1 T2, §5.2).

    Attributes
    ----------
    A : [L, N] float64           public sequence set.
    b : float                    reference amplitude √P [√W].
    noise_var : float            per-chip noise variance σ²/L [W] (a receiver estimates it routinely).
    y_ref : [L] float64          reference-slot chips of antenna 0 [√W].
    y_data : [L, d] float64      data-slot chips of antenna 0 [√W].
    r_ref : [N] float64          r^s = Aᵀ y_ref (antenna 0).
    r_data : [N, d] float64      r^i = Aᵀ y_i (antenna 0).
    K : int                      number of scheduled clients (the base station schedules them).
    r_pilots : [N, N_r] float64  r_{j,r}^s of every antenna (column 0 = r_ref).
    r_data_antennas : [N_r, N, d] float64  r_{j,r}^i of every antenna (row 0 = r_data).
    r_pilot_blocks : [P, N, N_r] float64   r_{j,r}^{s,p} of every pilot p (P = 1 without coherence blocks or with the
                                           stale pilot; row 0 = r_pilots).
    pilot_of : [d] int64                   the pilot p(i) FLORAS's layout equalises entry i with (model §5.1).
    """

    A: np.ndarray
    b: float
    noise_var: float
    y_ref: np.ndarray
    y_data: np.ndarray
    r_ref: np.ndarray
    r_data: np.ndarray
    K: int
    r_pilots: np.ndarray
    r_data_antennas: np.ndarray
    r_pilot_blocks: np.ndarray
    pilot_of: np.ndarray

    @property
    def n_rx(self) -> int:
        """N_r, the receive antennas."""
        return int(self.r_pilots.shape[1])

    @property
    def n_pilots(self) -> int:
        """P, the reference slots of the round (one per coherence block with ``pilots = "per-block"``)."""
        return int(self.r_pilot_blocks.shape[0])

    def pilot_energy(self) -> np.ndarray:
        """‖r_j^s‖² = Σ_{p,r} (r_{j,r}^{s,p})² [N] float64 [W]: the energy detector's statistic (model §5.2), over
        every antenna and every pilot."""
        if self.n_pilots == 1:
            return np.einsum("nr,nr->n", self.r_pilots, self.r_pilots)
        return np.einsum("pnr,pnr->n", self.r_pilot_blocks, self.r_pilot_blocks)

    def statistic(self, kind: str) -> np.ndarray:
        """The per-sequence detector statistic [N]: |r_j^s|² / r_j^s at one antenna and one pilot, else the energy
        Σ_{p,r} (r_{j,r}^{s,p})² over the N_r antennas and P pilots (``kind`` must then be "energy")."""
        from .detection import detector_statistic

        if self.n_rx == 1 and self.n_pilots == 1:
            return detector_statistic(self.r_ref, kind=kind)
        if self.n_pilots == 1:
            return detector_statistic(self.r_pilots, kind=kind, antennas=True)
        if kind != "energy":
            raise ValueError(f"kind must be 'energy' with {self.n_pilots} pilots (the energy over pilots; got {kind!r})")
        return self.pilot_energy()

    def decodes(self) -> np.ndarray:
        """Per-sequence decodes [N, d] float64 (model §7.1: s_k up to noise for active j).

        N_r = 1: v_j = b·r_j^i / r_j^s. N_r > 1: maximum ratio on the pilots (model §5.2),
        v_j = b·Σ_r r_{j,r}^s·r_{j,r}^i / Σ_r (r_{j,r}^s)². With several pilots entry i takes its own pilot p(i).
        """
        if self.n_pilots > 1:  # entry i with its own pilot p(i) (model §5.1), maximum ratio over the antennas
            R = self.r_pilot_blocks[self.pilot_of]  # [d, N, N_r]
            num = np.einsum("dnr,rnd->nd", R, self.r_data_antennas)
            return self.b * num / np.einsum("dnr,dnr->nd", R, R)
        if self.n_rx == 1:
            return self.b * self.r_data / self.r_ref[:, None]
        num = np.einsum("nr,rnd->nd", self.r_pilots, self.r_data_antennas)
        return self.b * num / np.einsum("nr,nr->n", self.r_pilots, self.r_pilots)[:, None]


@dataclass(frozen=True)
class RoundTruth:
    """Simulator-side facts of the round, never given to an attack.

    active : [K] int64 (sequence π_t(k) of client k); gains : [K] float64 (g_k at antenna 0); s : [K, d] float64;
    gains_antennas : [K, N_r] float64 (g_{k,r}); beta_eff : [K] float64 (β_eff,k, 1 without a cell);
    angles : [K] float64 (θ_k [rad], the line of sight's azimuth; None without a line of sight);
    gains_blocks : [K, B, N_r] float64 (g_{k,m,r} of every coherence block; B = 1 without coherence blocks).
    """

    active: np.ndarray
    gains: np.ndarray
    s: np.ndarray
    gains_antennas: np.ndarray | None = None
    beta_eff: np.ndarray | None = None
    angles: np.ndarray | None = None
    gains_blocks: np.ndarray | None = None


class T2Uplink:
    """Chip-level FLORAS round generator exposing the base station's raw signals.

    Parameters
    ----------
    config : PhyConfig (scheme "floras"; fields used: N, L, snr_db, sequences, csit, power, rx_antennas and the
             cell keys of model §5.1)
    K : int, scheduled clients
    seed : int, master seed (sequences, fading, noise)
    key : bytes (≥ 16), the clients' shared permutation key
    """

    def __init__(self, config: PhyConfig, *, K: int, seed: int, key: bytes):
        self.config = config.validate(K=K)
        if config.scheme != "floras":
            raise ValueError(f"scheme must be 'floras' for the T2 audit (got {config.scheme!r})")
        self.K = int(K)
        self.seed = check_seed(seed)
        self.A = make_sequences(config.of("floras").sequences, L=config.L, N=config.of("floras").N, seed=self.seed)
        self.b = float(np.sqrt(config.power))
        self.noise_var = float(config.noise_variance / config.L)
        self.receiver = Receiver(self.A, reference_amplitude=self.b)
        self._clients = KeyedAssignment(key, N=config.of("floras").N)
        self.channel = LinkChannel(config, K=self.K, seed=self.seed)  # the simulator's channel (model §5.1, §5.2)
        self.n_rx = int(config.rx_antennas)

    def round(self, s: np.ndarray, *, round_index: int) -> tuple[BaseStationView, RoundTruth]:
        """Transmit the normalized vectors s [K, d] (float64, √W) in round ``round_index``."""
        s = np.asarray(s, dtype=np.float64)
        if s.ndim != 2 or s.shape[0] != self.K:
            raise ValueError(f"s must be a K×d array with K = {self.K} (got shape {s.shape})")
        cfg, t = self.config, int(round_index)
        L, d = cfg.L, s.shape[1]
        active = self._clients.active_set(t, K=self.K)
        plan = self.plan(d)
        B, P = plan.n_blocks, plan.n_pilots
        if B == 1:
            G = self._gains(self.channel.draw_antennas(t), t)  # [K, N_r]
            Gb, fade, pilot = G[:, None, :], np.zeros(d, dtype=np.int64), np.zeros(d, dtype=np.int64)
        else:  # coherence blocks (model §5.1): block m's gains, entry i in block fade[i], equalised with pilot[i]
            Gb = self._gains(self.channel.draw_antennas(t, n_blocks=B), t)  # [K, B, N_r]
            G = np.ascontiguousarray(Gb[:, 0, :])
            fade, pilot = plan.indices()
        beta = (np.ones(self.K) if self.channel.cell is None
                else self.channel.cell.large_scale(None, K=self.K, round_index=t).gain_eff)
        std = np.sqrt(self.noise_var)
        A_act, tail = self.A[:, active], None
        if cfg.timing_offset > 0:  # the same offsets as FlorasLink's chip path: Ã = (1 − τ)·a + τ·S·a and the tail
            A_act, tail = received_chips(A_act, draw_offsets(self.seed, t, K=self.K, max_offset=cfg.timing_offset))
            prev = np.hstack([np.full((self.K, 1), self.b), s[:, :-1]])  # symbol i − 1 of slot i (the reference first)
        n_ref = [stream(self.seed, "audit-chip-reference-noise", t).standard_normal(L)]
        n_data = [stream(self.seed, "audit-chip-data-noise", t).standard_normal((L, d))]
        if self.n_rx > 1:
            n_ref += list(stream(self.seed, "audit-chip-reference-noise-antennas", t).standard_normal((self.n_rx - 1, L)))
            n_data += list(stream(self.seed, "audit-chip-data-noise-antennas", t).standard_normal((self.n_rx - 1, L, d)))
        y_ref, y_data, r_ref, r_data = [], [], [], []
        for r in range(self.n_rx):  # each antenna despreads its own chips (model §5.2)
            g = np.ascontiguousarray(G[:, r])
            y_ref.append(A_act @ (g * self.b) + std * n_ref[r])
            y_data.append(A_act @ (g[:, None] * s if B == 1 else Gb[:, fade, r] * s) + std * n_data[r])
            if tail is not None:  # chip 0 of slot i carries the last chip of slot i − 1 (phy.chip_timing)
                y_data[r][0] += (tail * g) @ prev
            r_ref.append(self.receiver.despread(y_ref[r]))
            r_data.append(self.receiver.despread(y_data[r]))
        r_blocks = np.empty((P, self.A.shape[1], self.n_rx))
        r_blocks[0] = np.stack(r_ref, axis=1)
        if P > 1:  # pilot p ≥ 1, sent in fading block p, on every antenna
            n_blk = stream(self.seed, "audit-chip-reference-noise-blocks", t).standard_normal((P - 1, self.n_rx, L))
            for p in range(1, P):
                y = A_act @ (Gb[:, p, :] * self.b) + std * n_blk[p - 1].T  # [L, N_r]
                r_blocks[p] = self.receiver.despread(y)
        view = BaseStationView(
            A=self.A,
            b=self.b,
            noise_var=self.noise_var,
            y_ref=y_ref[0],
            y_data=y_data[0],
            r_ref=r_ref[0],
            r_data=r_data[0],
            K=self.K,
            r_pilots=r_blocks[0],
            r_data_antennas=np.stack(r_data, axis=0),
            r_pilot_blocks=r_blocks,
            pilot_of=pilot,
        )
        angles = self.channel.los_angles(t) if self.channel.los_k else None
        return view, RoundTruth(active=active, gains=np.ascontiguousarray(G[:, 0]), s=s, gains_antennas=G, beta_eff=beta,
                                angles=angles, gains_blocks=Gb)

    def _gains(self, h: np.ndarray, t: int) -> np.ndarray:
        """g of the channel h [K, …]: Re h, |h|, or with ``phy.csi_error`` the pre-rotation by each block's estimate
        (:func:`phy.csi_error.estimate_channel`, the stream FLORAS's link draws: g = |h|·cos(∠h − ∠ĥ); model §5.1)."""
        csit = self.config.of("floras").csit
        if not self.config.csi_error:
            return effective_gain(h, csit=csit)
        h_hat = estimate_channel(h, self.channel.gain(t), csi_error=float(self.config.csi_error), seed=self.seed,
                                 round_index=t)
        return effective_gain(h, csit=csit, estimate=h_hat)

    def plan(self, d: int):
        """FLORAS's block layout of an update of d entries (:func:`phy.coherence.coherence_plan`; one block without
        ``phy.coherence_symbols``)."""
        return coherence_plan(int(d), self.config.coherence_symbols, self.config.of("floras").pilots)
