"""Analog Gaussian AirComp: truncated channel inversion with artificial noise (model §9.1, §6.2).

The link is channel inversion (:class:`phy.inversion_link.ChannelInversionLink`, both ρ
rules, both resource conventions) of the clip-normalized vectors; in ŝ units

    ŝ = Σ_{k admitted} s_k + n/√ρ + a,

with receiver noise n of variance σ_n² = σ²/L (equal resource) or σ² (source-literal),
σ² = P/10^(SNR/10), and artificial noise a = Σ_{k admitted} a_k drawn by the K′ admitted clients,
a_k ~ N(0, σ_a²/K′·I) (so a ~ N(0, σ_a²·I) whatever K′; K′ is public since admission depends on
the channel only). The target total std is σ_T = z·S (S = 2C replace-one, C add/remove; z the
noise multiplier):

    σ_a² = max(0, σ_T² − σ_n²/ρ),    effective total std σ_eff = √(σ_n²/ρ + σ_a²) = max(σ_T, σ_n/√ρ).

If the receiver noise alone exceeds the target, no artificial noise is added and the round
records the larger effective std (``noise_std_effective`` > ``noise_std_target``, diagnostic
``receiver_noise_exceeds_target`` = 1). Counting the receiver noise as privacy noise assumes the
base station cannot remove it (threat model: T1 and a single-antenna base station, which sees
only the superposition). With ``phy.rx_antennas`` = N_r > 1 (model §5.2) that assumption fails (the base
station can combine its antennas' noise as it likes), so only the clients' own noise is counted:
σ_a² = σ_T² whatever ρ, and the receiver noise is an extra error, not privacy noise. That count covers the
released ŝ only (T1): a base station that keeps every antenna's signal sees other combinations of the clients'
s_k + ν_k and can separate them in part (:func:`phy.antennas.client_leverage`); against it (T2) each client is
certain only of its own share, :func:`client_noise_floor`.

Chip-timing offsets (``phy.timing_offset`` = τ_max, model §5.1, :mod:`phy.chip_timing`; one block, perfect CSI,
replace-one neighbours; N_r > 1 on the combiner's effective channels, model §5.2): each client's symbols, data and artificial noise alike, reach the matched filter
through its two-tap filter F_k (leakage a_k = τ_k/L_eff ≤ a_max), so the receiver sees Σ_adm F_k(s_k + ν_k) + n.
The clients scale their noise variance by 1/(1 − 2a_max)² (:func:`phy.chip_timing.noise_inflation`), which keeps the
guaranteed noise of §9.1 for the released ŝ (its d symbols): threat model T1 only, since a base station that reads
chip 0 of each symbol apart from the others sees data and noise mixed with other weights. a_max < 1/2 is required.

Simulation (exact in distribution): the sum a of the K′ independent client draws is drawn as
one N(0, σ_a²·I) vector in logical blocks keyed by (seed, "analog-gaussian-artificial-noise",
round, block), so results do not depend on ``chunk_size``. The transmit power of the artificial
noise (σ_a²/K′ per symbol before inversion) is not inside the power budget P that fixes ρ
(model §6.2 budgets the data only); ``max_power_ratio`` reports the total including it.

Channel uses: as channel inversion, d·L (equal resource) or d (source-literal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .aggregation import AggregationResult, aggregate_concatenated, check_updates, clipped_metrics, noise_metrics, relative_error
from .blocks import chunk_ranges, fill_block_noise
from .central_gaussian import CentralGaussianParams, sum_sensitivity
from .inversion_link import ChannelInversionLink, admitted_sums, receiver_noise_variance
from .channel_uses import analog_channel_uses
from .chip_timing import add_filtered_noise, chips_per_symbol, filtered_noise_covariance, max_leakage, noise_inflation
from .csi_error import inversion_weights
from .csit_blocks import aggregate_per_block, per_block_csit
from .config import SNR_DEFINITION, PhyConfig
from .link_records import BaselineRecord, fmt
from .normalization import denormalize, normalize
from .schemes import SchemeSpec, register_scheme

__all__ = ["csi_noise_scale", "artificial_noise_variance", "target_noise_std", "timing_inflation", "guaranteed_noise_std", "client_noise_floor",
           "AnalogGaussianParams", "AnalogGaussianAggregator"]


@dataclass(frozen=True)
class AnalogGaussianParams(CentralGaussianParams):
    """``[phy.analog-gaussian]``: z ≥ 0, the noise multiplier of the total (receiver + artificial) noise (model §9.1)."""

    scheme_name: ClassVar[str] = "analog-gaussian"

    def check(self, phy, *, K: int, d: int | None, active: bool) -> None:
        """Also: with coherence blocks only per-block CSIT (model §5.1; "per-subcarrier" with one time block is the
        same): under CSIT kept over later blocks a client's share
        Re(h_(k,m)/h_(k,0))·s_k is unbounded, so the sensitivity of model §9.1 fails. Timing offsets need
        a_max = τ_max/L_eff < 1/2 (the noise inflation 1/(1 − 2a_max)², module docstring)."""
        super().check(phy, K=K, d=d, active=active)
        if active and phy.timing_offset != 0.0 and max_leakage(phy) >= 0.5:
            raise ValueError(f"timing_offset: scheme 'analog-gaussian' needs τ_max/L_eff < 1/2 (its artificial noise is "
                             f"inflated by 1/(1 − 2τ_max/L_eff)², model §5.1); got τ_max = {phy.timing_offset!r} with "
                             f"L_eff = {chips_per_symbol(phy)} chips per symbol: use timing_offset < "
                             f"{chips_per_symbol(phy) / 2:g} or resource = 'equal'")
        own = phy.inversion_csit == "per-block" or (phy.inversion_csit == "per-subcarrier" and phy.tdl_time_blocks == 1)
        if active and phy.coherence_symbols is not None and not own and (d is None or int(phy.coherence_symbols) < int(d)):
            raise ValueError("inversion_csit: scheme 'analog-gaussian' with coherence_symbols needs inversion_csit = "
                             "'per-block' (with CSIT kept over later blocks its clients' shares "
                             "Re(h_(k,m)/h_(k,0))·s_k are unbounded, so its sensitivity fails, model §5.1)")


def csi_noise_scale(rnd) -> float:
    """√(Σ_adm c_k²/K′), c_k = Re(h_k/ĥ_k) (:func:`phy.csi_error.inversion_weights`): the received artificial noise
    Σ_adm c_k·ν_k, ν_k ~ N(0, σ_a²/K′·I), has std σ_a times this (model §5.1, "Imperfect CSI"); 1 with perfect CSI."""
    if rnd.h_hat is None or rnd.h_hat is rnd.h:
        return 1.0
    adm = rnd.admitted
    c = inversion_weights(rnd.h[adm], rnd.h_hat[adm])
    return float(np.sqrt(np.sum(c * c) / max(1, int(adm.sum()))))


def artificial_noise_variance(*, target_std: float, receiver_variance: float, rho: float) -> float:
    """σ_a² = max(0, σ_T² − σ_n²/ρ) in ŝ units (ρ > 0)."""
    return max(0.0, target_std**2 - receiver_variance / rho)


def target_noise_std(config: PhyConfig, *, d: int, relation: str) -> float:
    """σ_T = z·S [ŝ units]: the noise multiplier times the sum's sensitivity S (2C replace-one, C add/remove)."""
    return float(config.of("analog-gaussian").noise_multiplier) * sum_sensitivity(config.norm_bound(d), relation)


def timing_inflation(config: PhyConfig) -> float:
    """The clients' noise-variance factor 1/(1 − 2a_max)² with chip-timing offsets (model §5.1); 1 without."""
    return noise_inflation(max_leakage(config)) if config.timing_offset != 0.0 else 1.0


def guaranteed_noise_std(config: PhyConfig, *, d: int, relation: str) -> float:
    """The total noise std [ŝ units] that every admitted round is certain to carry (for the accountant).

    Rule "threshold" (ρ = g_th in every round): exactly max(z·S, σ_n/√g_th). Rule "min-admitted"
    (ρ = min |h_k|², unbounded above, so the receiver share can be arbitrarily small): z·S.
    With N_r = ``rx_antennas`` > 1 the receiver noise is not counted (model §5.2): z·S.
    """
    target = target_noise_std(config, d=d, relation=relation)
    if config.rho_rule == "threshold" and config.rx_antennas == 1:
        return max(target, float(np.sqrt(receiver_noise_variance(config) / config.g_th)))
    return target


def client_noise_floor(config: PhyConfig, *, K: int, d: int, relation: str) -> float:
    """√v_min [ŝ units]: the std of the artificial noise each of the K′ ≤ K admitted clients is certain to add,
    v_min = σ_a,min²/K with σ_a,min² = max(0, σ_T² − σ_n²/g_th)·(inflation) at one antenna (ρ ≥ g_th under both ρ
    rules) and σ_T²·(inflation) with N_r > 1 (model §5.2).

    This is all that protects a client against a base station that can separate the clients' signals (threat T2
    with N_r > 1 receive antennas, or with chip-timing offsets, model §5.1–§5.2): its whole view is a function of
    the clients' s_k + ν_k, ν_k ~ N(0, v·I) independent, and of data-independent channels and noise, so by
    post-processing it learns at most the Gaussian mechanism of std √v on client k's update (derived).
    0 when the receiver noise alone may exceed the target at one antenna (no T2 guarantee).
    """
    target = target_noise_std(config, d=d, relation=relation)
    counted = receiver_noise_variance(config) / config.g_th if config.rx_antennas == 1 else 0.0
    return float(np.sqrt(max(0.0, target**2 - counted) * timing_inflation(config) / int(K)))


class AnalogGaussianAggregator:
    """Analog Gaussian AirComp behind the aggregation interface; contributors K′ (admitted).

    Diagnostics: ``admitted``, ``rho``, ``skipped``, ``noise_std_target``, ``receiver_noise_std``
    (σ_n/√ρ), ``artificial_noise_std`` (σ_a), ``noise_std_effective``,
    ``receiver_noise_exceeds_target``, ``max_power_ratio``, ``channel_uses``, ``nmse`` — noise
    stds in ŝ units.
    """

    def __init__(self, config: PhyConfig, *, K: int, d: int, seed: int, relation: str = "replace"):
        self.config = config.validate(K=K, d=d)
        self.K, self.d = int(K), int(d)
        self.relation = relation
        self.link = ChannelInversionLink(config, K=K, seed=seed)
        self.C = config.norm_bound(self.d)
        self.sensitivity = sum_sensitivity(self.C, relation)
        self.target_std = float(config.of("analog-gaussian").noise_multiplier) * self.sensitivity
        self.receiver_variance = receiver_noise_variance(config)
        # the receiver noise counted as privacy noise: only at one antenna (model §5.2)
        self.counted_receiver_variance = self.receiver_variance if config.rx_antennas == 1 else 0.0
        self.channel_uses = analog_channel_uses(d=self.d, L=config.L, resource=config.resource)
        self.per_block = per_block_csit(self.config, self.d)  # CSIT and admission per coherence block (model §5.1)
        # chip-timing offsets: the clients' noise inflation 1/(1 − 2a_max)² (model §5.1; 1 without offsets)
        self.inflation = timing_inflation(config)

    def _per_block(self, chunks, t: int, clients) -> AggregationResult:
        """A round with the CSIT re-acquired per coherence block (:mod:`phy.csit_blocks`): per-block ρ_m, σ_a,m."""
        res, _ = aggregate_per_block(self.link, chunks, K=self.K, d=self.d, round_index=t, clients=clients,
                                     artificial=(self.target_std, self.counted_receiver_variance))
        res.diagnostics.update(noise_std_target=self.target_std, channel_uses=float(self.channel_uses))
        return res

    def aggregate(self, updates: np.ndarray, *, round_index: int, clients=None) -> AggregationResult:
        x = check_updates(updates, K=self.K, d=self.d)
        cfg, t = self.config, int(round_index)
        if self.per_block:
            return self._per_block([(np.arange(self.K), x)], t, clients)
        nz = normalize(x, rule=cfg.normalization, C=self.C, clip_norm=cfg.clip_norm)
        rnd = self.link.run_round(nz.s, round_index=t, clients=clients, energy=nz.energy)  # ŝ = Σ_adm s_k + n/√ρ
        adm = rnd.admitted
        k_adm = int(adm.sum())
        diag = self._base_diagnostics(rnd)
        if k_adm == 0:
            return self._skipped(diag)
        std_a, var_a = self._add_artificial_noise(rnd, t)
        estimate = denormalize(rnd.s_hat, nz, mu_sum=float(nz.mu[adm].sum()))
        err = relative_error(estimate, x[adm].sum(axis=0))
        self._noise_diagnostics(diag, rnd, var_a, std_a, k_adm, err, t)
        diag.update(clipped_metrics(estimate, nz, adm))
        return AggregationResult(estimate, k_adm, err, diag)

    def aggregate_stream(self, chunks, *, round_index: int, clients=None) -> AggregationResult:
        """:meth:`aggregate` from the admitted running sums (:func:`phy.inversion_link.admitted_sums`): the
        artificial noise a is one draw of its sum (module docstring), so ŝ needs Σ_adm s_k only (clip rule)."""
        cfg, t = self.config, int(round_index)
        if cfg.normalization != "clip":  # the scheme requires clip (SchemeSpec.requires_clip)
            return aggregate_concatenated(self, chunks, round_index=round_index, clients=clients)
        if self.per_block:
            return self._per_block(chunks, t, clients)
        sums = admitted_sums(self.link, chunks, d=self.d, round_index=t, clients=clients)
        rnd, adm = sums.rnd, sums.rnd.admitted
        k_adm = int(adm.sum())
        diag = self._base_diagnostics(rnd)
        if k_adm == 0:
            return self._skipped(diag)
        std_a, var_a = self._add_artificial_noise(rnd, t)
        mu_adm = float(sums.mu[adm].sum())
        estimate = sums.scale * rnd.s_hat + mu_adm
        err = relative_error(estimate, sums.raw)
        self._noise_diagnostics(diag, rnd, var_a, std_a, k_adm, err, t)
        diag.update(noise_metrics(estimate, sums.scale * sums.s_sum + mu_adm))
        return AggregationResult(estimate, k_adm, err, diag)

    def _base_diagnostics(self, rnd) -> dict:
        k_adm = int(rnd.admitted.sum())
        return {"admitted": float(k_adm), "rho": rnd.rho, "skipped": float(k_adm == 0),
                "noise_std_target": self.target_std, "channel_uses": float(self.channel_uses)}

    def _skipped(self, diag: dict) -> AggregationResult:
        """A round without admitted clients: nothing is received, the model is unchanged."""
        err = relative_error(np.zeros(self.d), np.zeros(self.d))
        diag.update({"receiver_noise_std": 0.0, "artificial_noise_std": 0.0, "noise_std_effective": 0.0,
                     "receiver_noise_exceeds_target": 0.0, "max_power_ratio": 0.0, "nmse": err,
                     **noise_metrics(np.zeros(self.d), np.zeros(self.d))})
        return AggregationResult(np.zeros(self.d), 0, err, diag)

    def _add_artificial_noise(self, rnd, t: int) -> tuple[float, float]:
        """rnd.s_hat += a, a ~ N(0, σ_a²·I) in keyed blocks; returns (σ_a, σ_a²). With timing offsets σ_a² carries the
        inflation and a = Σ_adm F_k ν_k, ν_k ~ N(0, σ_a²/K′·I) (:func:`phy.chip_timing.add_filtered_noise`)."""
        var_a = self.inflation * artificial_noise_variance(
            target_std=self.target_std, receiver_variance=self.counted_receiver_variance, rho=rnd.rho)
        std_a = float(np.sqrt(var_a))
        if std_a > 0 and self.config.timing_offset != 0.0:
            adm = rnd.admitted
            add_filtered_noise(rnd.s_hat, self.link.leakage(t)[adm], var_a / int(adm.sum()), seed=self.link.seed,
                               purpose="analog-gaussian-artificial-noise", round_index=t,
                               chunk_size=self.config.chunk_size)
        elif std_a > 0:
            received = std_a * csi_noise_scale(rnd)  # Σ_adm c_k·ν_k with imperfect CSI (model §5.1)
            for a, z in chunk_ranges(self.d, self.config.chunk_size):
                rnd.s_hat[a:z] += fill_block_noise(np.empty(z - a), seed=self.link.seed,
                                                   purpose="analog-gaussian-artificial-noise", round_index=t, start=a,
                                                   std=received)
        return std_a, var_a

    def _noise_diagnostics(self, diag: dict, rnd, var_a: float, std_a: float, k_adm: int, err: float, t: int) -> None:
        adm = rnd.admitted
        rx_std = float(np.sqrt(self.receiver_variance / rnd.rho))
        h_tx = rnd.h if rnd.h_hat is None else rnd.h_hat  # the clients invert their estimates
        power = rnd.transmit_power[adm] + rnd.rho * (var_a / k_adm) / np.abs(h_tx[adm]) ** 2
        received = var_a * csi_noise_scale(rnd) ** 2  # per received symbol; through the timing filters (v·Σ[(1 − a)² + a²], symbols i ≥ 1)
        if self.config.timing_offset != 0.0 and var_a > 0:
            var_u, _, var_w = filtered_noise_covariance(self.link.leakage(t)[adm], var_a / k_adm)
            received = var_u + var_w
        diag.update({
            "receiver_noise_std": rx_std, "artificial_noise_std": std_a,
            "noise_std_effective": float(np.sqrt(rx_std**2 + received)),
            "receiver_noise_exceeds_target": float(rx_std > self.target_std),
            "max_power_ratio": float(power.max() / self.config.power), "nmse": err,
        })

    def aggregate_traced(self, updates: np.ndarray, *, round_index: int, clients=None):
        return self.aggregate(updates, round_index=round_index, clients=clients), None

    def describe(self) -> dict:
        return {
            "scheme": "analog-gaussian", **self.config.to_dict(), "relation": self.relation,
            "sensitivity": self.sensitivity, "noise_std_target": self.target_std,
            "receiver_noise_variance": self.receiver_variance, "snr_definition": SNR_DEFINITION,
            "resource_convention": self.config.resource, **self.link.channel.describe(),
            "threat_model": ("T1 only (output observer of ŝ): with chip-timing offsets a base station that reads chip 0 "
                             "of each symbol apart sees data and noise mixed with other weights (model §5.1); against it "
                             "only each client's own share of the artificial noise counts (client_noise_floor)"
                             if self.config.timing_offset != 0.0 else
                             "T1 and a single-antenna base station (sees only the superposition); "
                             "the receiver-noise share assumes the base station cannot remove it"
                             if self.config.rx_antennas == 1 else
                             f"T1 only (output observer of ŝ; only the clients' artificial noise counts): a base station "
                             f"with {self.config.rx_antennas} receive antennas that keeps every antenna's signal can "
                             "separate the clients, and then only each client's own share of the artificial noise "
                             "counts (client_noise_floor, model §5.2)"),
            "client_noise_floor": client_noise_floor(self.config, K=self.K, d=self.d, relation=self.relation),
        }


class AnalogGaussianRecord(BaselineRecord):
    diagnostics = ("rho", "noise_std_target", "receiver_noise_std", "artificial_noise_std", "noise_std_effective",
                   "receiver_noise_exceeds_target", "max_power_ratio")

    @staticmethod
    def detail(s: dict) -> str:
        m, adm = s.get("diagnostics_mean", {}), s["admitted"]
        return (f"admitted mean={fmt(adm['mean'])} skipped={s['skipped_rounds']} target std={fmt(m.get('noise_std_target'))} "
                f"effective std={fmt(m.get('noise_std_effective'))} rx>target frac={fmt(m.get('receiver_noise_exceeds_target'))}")


register_scheme(SchemeSpec(
    name="analog-gaussian",
    aggregator=lambda config, *, K, d, seed, key, relation: AnalogGaussianAggregator(config, K=K, d=d, seed=seed, relation=relation),
    link_record=AnalogGaussianRecord, params=AnalogGaussianParams, requires_clip=True,
    example={"normalization": "clip", "clip_norm": 1.0, "analog-gaussian": {"noise_multiplier": 0.5}},
    description="analog AirComp with channel inversion and artificial Gaussian noise (model §9.1)",
    channel="cell-coherence", rx_antennas=True, chip_timing=True, antennas_with=("coherence_symbols", "timing_offset"),
))
