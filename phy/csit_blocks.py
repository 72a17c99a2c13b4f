"""Truncated channel inversion with the CSIT re-acquired in every coherence block (model §5.1, §6.2, §9.1).

``phy.inversion_csit = "per-block"`` with ``coherence_symbols`` = n_c < d: entry i (one aggregated symbol) lies in
block m(i) = ⌊i/n_c⌋ of B = ⌈d/n_c⌉; in block m client k knows h_{k,m} (perfect CSI), is admitted iff
|h_{k,m}|² ≥ g_th, and sends (√ρ_m/h_{k,m})·s_k^i; ρ_m follows ``rho_rule`` over the block's admitted set A_m. The
real part received is

    y^i = √ρ_m·Σ_{k∈A_m} s_k^i + n^i,   ŝ^i = y^i/√ρ_m   (analog Gaussian: + a^i, a ~ N(0, σ_a,m²), σ_a,m² =
                                                         max(0, σ_T² − σ_n²/ρ_m) as model §9.1 per block),

and nothing in a block with K′_m = |A_m| = 0 (ŝ^i = 0 there). The server knows every A_m (from the channel alone) and
averages each block over its own contributors: x̂^i = (K/K′_m)·(R/C·ŝ^i + Σ_{k∈A_m} μ_k) estimates
(K/K′_m)·Σ_{k∈A_m} x_k^i, so FedAvg's division by K (the round's ``contributors``) gives block m's mean over A_m
(0 where K′_m = 0: those entries keep their value). The sensitivity argument of §9.1 is unchanged: the admitted
sets depend on the channel only, a replaced client moves Σ_m ‖Δ_m‖² ≤ S², and every non-empty block carries noise of
std ≥ σ_T (and ≥ σ_n/√g_th with ρ = g_th), so the analog Gaussian ε holds; the rescaling is post-processing.

Per-subcarrier CSIT, stale in time (``inversion_csit = "per-subcarrier"``, ``fading_correlation = "tdl"`` with
``tdl_time_blocks`` = B_t; model §5.1): block j lies on subcarrier ⌊j/B_t⌋ in time block j mod B_t, and the clients
measure every subcarrier once, at the update's start: block j's CSIT is ĥ_{k,j} = h_{k,c(j)}, c(j) = B_t·⌊j/B_t⌋
(the subcarrier's time block 0). Admission |ĥ_{k,j}|² ≥ g_th and ρ_j follow from ĥ (so they are the same in every
time block of a subcarrier), client k sends (√ρ_j/ĥ_{k,j})·s_k^i, and the real part received is

    y^i = √ρ_j·Σ_{k∈A_j} w_{k,j}·s_k^i + n^i,   w_{k,j} = Re(h_{k,j}/ĥ_{k,j})  (exactly 1 where c(j) = j),

the stale-CSIT law of :mod:`phy.csit_aging` per subcarrier: with the Clarke taps E[w_{k,j} | ĥ] = J₀(x·b),
Var[w_{k,j} | ĥ] = (1 − J₀(x·b)²)/(2|ĥ_{k,j}|²), x = 2π·doppler·n_c, b = j mod B_t (no frequency term: each subcarrier
is its own reference). Transmit power depends on ĥ only; the server averages block j over A_j as above. B_t = 1 is
"per-block" bit for bit (every block is its own reference). One pilot per subcarrier instead of one per block.

Imperfect CSI (``phy.csi_error`` = σ_e², channel inversion and analog Gaussian; model §5.1): every measurement is an estimate,
ĥ_{k,m} = h_{k,m} + e_{k,m}, e ~ CN(0, σ_e²·β_eff,k) i.i.d. over clients and blocks (stream (seed, "csi-error", t) as
a [2, K, B] array), and block j's CSIT is its column's estimate, ĥ_{k,c(j)} + e_{k,c(j)} (one per block with
"per-block", one per subcarrier with "per-subcarrier"); admission and ρ_j on it, and the share of s_k is
w_{k,j} = Re(h_{k,j}/ĥ_{k,j}), Re(h/(h + e)) in a block that measures itself. Analog Gaussian's clients scale their
artificial noise as their data, so block m carries Σ_{A_m} w_{k,m}·ν_k, ν_k ~ N(0, σ_a,m²/K′_m): variance
σ_a,m²·Σ_{A_m} w_{k,m}²/K′_m (the one-block link of model §5.1 per block); its accountant bounds an update split over
the B blocks (:mod:`scenarios.config.analog_csi`, :mod:`privacy.split_mixture`).

Noise: the keyed blocks of :mod:`phy.blocks` (purposes as the one-block link) drawn at unit std and scaled per
entry, so results do not depend on ``chunk_size`` or on how the clients are chunked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .aggregation import AggregationResult, add_rows, noise_metrics, relative_error, stream_chunks
from .blocks import chunk_ranges, fill_block_noise
from .csit_aging import add_weighted_rows, analog_block_lengths
from .normalization import normalize

__all__ = ["CSIT_MODES", "per_block_csit", "csit_columns", "BlockAdmission", "BlockRound", "block_admission",
           "antenna_blocks", "aggregate_per_block"]

CSIT_MODES = ("stale", "per-block", "per-subcarrier")


def per_block_csit(config, d: int) -> bool:
    """True when the round admits per coherence block (``inversion_csit`` "per-block" or "per-subcarrier", B > 1)."""
    return config.inversion_csit in ("per-block", "per-subcarrier") and \
        analog_block_lengths(d, config.coherence_symbols).size > 1


def csit_columns(config, n_blocks: int) -> np.ndarray:
    """c [B] int64: the block whose channel is block j's CSIT: j ("per-block"), or B_t·⌊j/B_t⌋, the subcarrier's
    first time block ("per-subcarrier", B_t = ``tdl_time_blocks``; module docstring)."""
    j = np.arange(int(n_blocks), dtype=np.int64)
    if config.inversion_csit == "per-subcarrier":
        b_t = int(config.tdl_time_blocks)
        return (j // b_t) * b_t
    return j


@dataclass(frozen=True)
class BlockAdmission:
    """One round's per-block admission: h [K, B] complex128, admitted [K, B] bool, rho [B] (0 where K′_m = 0),
    lengths [B] entries per block, h_hat [K, B] the CSIT of every block (h itself with "per-block"); antennas
    [K, B, N_r] the channels to every antenna with N_r > 1 (h is then the combined aᴴh), None with one."""

    h: np.ndarray
    admitted: np.ndarray
    rho: np.ndarray
    lengths: np.ndarray
    h_hat: np.ndarray
    antennas: np.ndarray | None = None

    @property
    def weights(self) -> np.ndarray:
        """[K, B] float64: 1[k ∈ A_j]·w_{k,j}, w = Re(h/ĥ) where the CSIT is another block's, exactly 1 where it is
        the block's own (module docstring)."""
        own = self.h_hat is self.h
        w = np.ones(self.h.shape) if own else np.where(self.h_hat == self.h, 1.0, np.real(self.h / self.h_hat))
        return w * self.admitted

    @property
    def counts(self) -> np.ndarray:
        """K′_m [B] int64."""
        return self.admitted.sum(axis=0)

    def per_entry(self, values: np.ndarray) -> np.ndarray:
        """[d] the block value of every entry."""
        return np.repeat(np.asarray(values, dtype=np.float64), self.lengths)


@dataclass(frozen=True)
class BlockRound:
    """The trace of a per-block round for link records: ρ (mean over the non-empty blocks) and the admission."""

    rho: float
    admission: BlockAdmission


def block_admission(link, round_index: int, *, d: int, clients=None) -> BlockAdmission:
    """Draw the round's B blocks (the channel of :class:`phy.link_channel.LinkChannel`) and admit per block on each
    block's CSIT (:func:`csit_columns`)."""
    from .inversion_link import admitted_mask, inversion_factor

    cfg = link.config
    lengths = analog_block_lengths(d, cfg.coherence_symbols)
    cols = csit_columns(cfg, lengths.size)
    own = np.array_equal(cols, np.arange(lengths.size))
    H = None
    if cfg.rx_antennas != 1:  # block j combined with the centroid of its CSIT block's estimates (model §5.2)
        from .antennas import effective_blocks

        H, H_hat = antenna_blocks(link, int(round_index), n_blocks=lengths.size, clients=clients)
        h, h_hat = effective_blocks(H, cols, None if cfg.csi_error == 0.0 else H_hat)
        h_hat = h if own and cfg.csi_error == 0.0 else h_hat
    else:
        h = link.channel.draw(int(round_index), clients=clients, n_blocks=lengths.size)
        h_hat = h if own else h[:, cols]
        if cfg.csi_error != 0.0:  # every measurement has its own error; a block reuses its CSIT column's (module doc)
            from .csi_error import estimate_channel

            est = estimate_channel(h, link.channel.gain(int(round_index), clients=clients), csi_error=cfg.csi_error,
                                   seed=link.seed, round_index=int(round_index))
            h_hat = est[:, cols]
    adm = admitted_mask(h_hat, g_th=cfg.g_th)
    rho = np.array([inversion_factor(h_hat[:, m], adm[:, m], g_th=cfg.g_th, rule=cfg.rho_rule)
                    for m in range(lengths.size)])
    return BlockAdmission(h, adm, rho, lengths, h_hat, H)


def antenna_blocks(link, round_index: int, *, n_blocks: int, clients=None) -> tuple[np.ndarray, np.ndarray]:
    """(H [K, B, N_r], Ĥ [K, B, N_r]) of a per-block round with N_r > 1 antennas: the channels
    (:meth:`phy.link_channel.LinkChannel.draw_antennas`) and every block's estimate, each antenna's error i.i.d.
    (:func:`phy.csi_error.estimate_channel` over [K, B, N_r]; Ĥ = H with perfect CSI)."""
    from .csi_error import estimate_channel

    t = int(round_index)
    H = link.channel.draw_antennas(t, clients=clients, n_blocks=int(n_blocks))
    H_hat = estimate_channel(H, link.channel.gain(t, clients=clients), csi_error=link.config.csi_error,
                             seed=link.seed, round_index=t)
    return H, H_hat


def _noise(link, purpose: str, t: int, std_entry: np.ndarray) -> np.ndarray:
    d = std_entry.size
    out = np.empty(d)
    for a, z in chunk_ranges(d, link.config.chunk_size):
        fill_block_noise(out[a:z], seed=link.seed, purpose=purpose, round_index=t, start=a, std=1.0)
    return out * std_entry


def aggregate_per_block(link, chunks, *, K: int, d: int, round_index: int, clients=None,
                        artificial: tuple[float, float] | None = None) -> tuple[AggregationResult, BlockRound]:
    """One round with per-block CSIT from the clients' chunks (clip normalization; memory O(chunk·d)).

    ``artificial``: (σ_T, counted receiver variance) of the analog Gaussian scheme, None for channel inversion.
    Returns the result (noise figures in its diagnostics: means over the non-empty blocks) and the round's trace.
    """
    from .inversion_link import receiver_noise_variance

    cfg, t = link.config, int(round_index)
    ba = block_admission(link, t, d=d, clients=clients)
    w = ba.admitted.astype(np.float64)  # 0/1 block weights: Σ_k 1[k ∈ A_m(i)]·x_k^i (the server's reference)
    w_rx = w if ba.h_hat is ba.h else ba.weights  # what the channel applies: 1[k ∈ A_j]·Re(h_{k,j}/ĥ_{k,j})
    s_sum, raw, mu_m, power, scale = np.zeros(d), np.zeros(d), np.zeros(ba.lengths.size), np.zeros(K), 0.0
    y_sum = s_sum if w_rx is w else np.zeros(d)  # Σ_{A_j} w_{k,j}·s_k, what the receiver sees; s_sum: Σ_{A_j} s_k
    for rows, x in stream_chunks(chunks, K=K, d=d):
        nz = normalize(x, rule=cfg.normalization, C=cfg.norm_bound(d), clip_norm=cfg.clip_norm)
        scale = nz.scale
        add_weighted_rows(s_sum, nz.s, w[rows], ba.lengths)
        if y_sum is not s_sum:
            add_weighted_rows(y_sum, nz.s, w_rx[rows], ba.lengths)
        add_weighted_rows(raw, x, w[rows], ba.lengths)
        add_rows(mu_m, w[rows], nz.mu)  # Σ_{k∈A_m} μ_k, row by row (chunk-invariant)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = (ba.rho[None, :] * (nz.energy / d)[:, None] / np.abs(ba.h_hat[rows]) ** 2) * w[rows]  # ‖s_k‖²/d
        power[rows] = np.nan_to_num(p).max(axis=1)
    counts = ba.counts
    live = counts > 0
    rx_var = receiver_noise_variance(cfg)
    rx_std = np.where(live, np.sqrt(rx_var / np.where(live, ba.rho, 1.0)), 0.0)
    s_hat = y_sum + _noise(link, "channel-inversion-noise", t, ba.per_entry(rx_std))
    figures = {"receiver_noise_std": float(rx_std[live].mean()) if live.any() else 0.0}
    if artificial is not None:
        target, counted = artificial
        var_a = np.where(live, np.maximum(0.0, target**2 - counted / np.where(live, ba.rho, 1.0)), 0.0)
        # the clients' shares ν_k ~ N(0, σ_a,m²/K′_m) reach the sum weighted as their data, Σ_{A_m} w_{k,m}·ν_k
        # (module docstring; the factor is exactly 1 with perfect CSI, so that path is untouched)
        received = var_a if w_rx is w else var_a * (w_rx * w_rx).sum(axis=0) / np.maximum(counts, 1)
        s_hat += _noise(link, "analog-gaussian-artificial-noise", t, ba.per_entry(np.sqrt(received)))
        figures.update(artificial_noise_std=float(np.sqrt(var_a[live]).mean()) if live.any() else 0.0,
                       noise_std_effective=float(np.sqrt(rx_std[live] ** 2 + received[live]).mean()) if live.any() else 0.0,
                       receiver_noise_exceeds_target=float(np.mean(rx_std[live] > target)) if live.any() else 0.0)
        power += np.nan_to_num((ba.rho * var_a / np.maximum(counts, 1))[None, :] / np.abs(ba.h_hat) ** 2 * w).max(axis=1)
    factor = np.where(live, K / np.maximum(counts, 1), 0.0)  # K/K′_m: FedAvg's /K is block m's mean over A_m
    f_entry, mu_entry = ba.per_entry(factor), ba.per_entry(mu_m)
    estimate = f_entry * (scale * s_hat + mu_entry)
    reference = f_entry * raw
    err = relative_error(estimate, reference)
    share = ba.lengths / d
    diag = {
        "admitted": float(share @ counts),  # entry-weighted mean K′_m
        "rho": float(ba.rho[live].mean()) if live.any() else 0.0,
        "skipped": float(not live.any()),
        "skipped_blocks": float(share @ (~live)),
        "max_power_ratio": float(power.max() / cfg.power),
        "nmse": err,
        **figures,
        **noise_metrics(estimate, f_entry * (scale * s_sum + mu_entry)),
    }
    return AggregationResult(estimate, K if live.any() else 0, err, diag), BlockRound(diag["rho"], ba)
