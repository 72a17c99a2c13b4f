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

__all__ = ["CSIT_MODES", "per_block_csit", "BlockAdmission", "BlockRound", "block_admission", "aggregate_per_block"]

CSIT_MODES = ("stale", "per-block")


def per_block_csit(config, d: int) -> bool:
    """True when the round re-acquires the CSIT per coherence block (``inversion_csit = "per-block"``, B > 1)."""
    return config.inversion_csit == "per-block" and analog_block_lengths(d, config.coherence_symbols).size > 1


@dataclass(frozen=True)
class BlockAdmission:
    """One round's per-block admission: h [K, B] complex128, admitted [K, B] bool, rho [B] (0 where K′_m = 0),
    lengths [B] entries per block."""

    h: np.ndarray
    admitted: np.ndarray
    rho: np.ndarray
    lengths: np.ndarray

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
    """Draw the round's B blocks (the channel of :class:`phy.link_channel.LinkChannel`) and admit per block."""
    from .channel_inversion import admitted_mask, inversion_factor

    cfg = link.config
    lengths = analog_block_lengths(d, cfg.coherence_symbols)
    h = link.channel.draw(int(round_index), clients=clients, n_blocks=lengths.size)
    adm = admitted_mask(h, g_th=cfg.g_th)
    rho = np.array([inversion_factor(h[:, m], adm[:, m], g_th=cfg.g_th, rule=cfg.rho_rule) for m in range(lengths.size)])
    return BlockAdmission(h, adm, rho, lengths)


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
    from .channel_inversion import receiver_noise_variance

    cfg, t = link.config, int(round_index)
    ba = block_admission(link, t, d=d, clients=clients)
    w = ba.admitted.astype(np.float64)  # 0/1 block weights: Σ_k 1[k ∈ A_m(i)]·s_k^i
    s_sum, raw, mu_m, power, scale = np.zeros(d), np.zeros(d), np.zeros(ba.lengths.size), np.zeros(K), 0.0
    for rows, x in stream_chunks(chunks, K=K, d=d):
        nz = normalize(x, rule=cfg.normalization, C=cfg.norm_bound(d), clip_norm=cfg.clip_norm)
        scale = nz.scale
        add_weighted_rows(s_sum, nz.s, w[rows], ba.lengths)
        add_weighted_rows(raw, x, w[rows], ba.lengths)
        add_rows(mu_m, w[rows], nz.mu)  # Σ_{k∈A_m} μ_k, row by row (chunk-invariant)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = (ba.rho[None, :] * np.mean(nz.s**2, axis=1)[:, None] / np.abs(ba.h[rows]) ** 2) * w[rows]
        power[rows] = np.nan_to_num(p).max(axis=1)
    counts = ba.counts
    live = counts > 0
    rx_var = receiver_noise_variance(cfg)
    rx_std = np.where(live, np.sqrt(rx_var / np.where(live, ba.rho, 1.0)), 0.0)
    s_hat = s_sum + _noise(link, "channel-inversion-noise", t, ba.per_entry(rx_std))
    figures = {"receiver_noise_std": float(rx_std[live].mean()) if live.any() else 0.0}
    if artificial is not None:
        target, counted = artificial
        var_a = np.where(live, np.maximum(0.0, target**2 - counted / np.where(live, ba.rho, 1.0)), 0.0)
        s_hat += _noise(link, "analog-gaussian-artificial-noise", t, ba.per_entry(np.sqrt(var_a)))
        figures.update(artificial_noise_std=float(np.sqrt(var_a[live]).mean()) if live.any() else 0.0,
                       noise_std_effective=float(np.sqrt(rx_std[live] ** 2 + var_a[live]).mean()) if live.any() else 0.0,
                       receiver_noise_exceeds_target=float(np.mean(rx_std[live] > target)) if live.any() else 0.0)
        power += np.nan_to_num((ba.rho * var_a / np.maximum(counts, 1))[None, :] / np.abs(ba.h) ** 2 * w).max(axis=1)
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
