"""Link-level record of FLORAS (model §6.1, §7.2): V, the inactive-sequence noise and its Cauchy fit.

Per round: the NMSE, V (the per-entry conditional variance of the inactive-sequence noise, in
(ŝ/b)² units) and, on a traced path, up to :data:`POOLED_ENTRIES_PER_ROUND` entries of the noise e
for the pooled Cauchy(0, γ) fit and its within-round excess kurtosis. The sufficient path yields
ŝ and V only, so its summary has the V quantiles and no fit.
"""

from __future__ import annotations

import numpy as np

from .link_records import LinkRecord, fmt

__all__ = ["FlorasLinkRecord", "POOLED_ENTRIES_PER_ROUND"]

POOLED_ENTRIES_PER_ROUND = 2000  # entries per round kept for the pooled Cauchy fit


def _quantiles(values: np.ndarray) -> dict[str, float]:
    from .statistics import QUANTILE_LEVELS

    return {str(q): float(np.percentile(values, q)) for q in QUANTILE_LEVELS}


class FlorasLinkRecord(LinkRecord):
    """V of every round and the pooled inactive-sequence noise of traced rounds."""

    def __init__(self, aggregator, d: int):
        super().__init__(aggregator, d)
        self.V: list[float] = []
        self.pooled: list[np.ndarray] = []
        self.kurt: list[float] = []
        self.weights: list[float] = []
        self.keep = min(self.d, POOLED_ENTRIES_PER_ROUND)
        self.loss: list[np.ndarray] = []  # γ²·Λ_k given the pilots, with timing offsets (phy.floras_leakage)

    def record(self, result, trace, x: np.ndarray) -> None:
        from .statistics import excess_kurtosis  # scipy: loaded by a link study, not by every command line

        self.errors.append(result.error)
        self.V.append(trace.V)
        self.weights.append(result.diagnostics["weight"])
        if trace.pilot_loss is not None:
            self.loss.append(float(self.aggregator.link.gamma) ** 2 * trace.pilot_loss)
        if self.aggregator.link.gamma > 0 and trace.inactive_noise is not None:
            self.pooled.append(trace.inactive_noise[:self.keep].copy())
            if self.d >= 2:
                self.kurt.append(excess_kurtosis(trace.inactive_noise))

    def summary(self) -> dict:
        from .statistics import QUANTILE_LEVELS, cauchy_scale_mle, levy_quantiles

        link = self.aggregator.link
        gamma, traced = link.gamma, link.trace_path is not None
        n_rx = int(link.config.rx_antennas)
        levy = link.orthonormal and n_rx == 1  # the Cauchy(0, γ) / Lévy(0, γ²) laws: orthonormal, one antenna
        out = {"path": link.trace_path or link.path, "gamma": gamma, "orthonormal": link.orthonormal,
               "estimator_biased": not link.orthonormal}
        w = np.asarray(self.weights)
        out["receiver"] = {"rule": link.params.receiver, "noise_estimate": link.params.noise_estimate,
                           "cap": link.params.receiver_cap, "weight_mean": float(w.mean()),
                           "weight_median": float(np.median(w)), "weight_max": float(w.max())}
        if gamma > 0 and not traced:  # sufficient path: ŝ and V only (model §6.1)
            out["inactive_noise"] = {
                "units": "V is the per-entry conditional variance in (s_hat/b)^2 (b = sqrt(P))",
                "cauchy_scale": None,
                "cauchy_scale_expected": float(gamma) if levy else None,
                "v_quantiles": _quantiles(np.asarray(self.V)),
                "v_quantiles_expected_levy": levy_quantiles(gamma) if levy else None,
                "within_round_excess_kurtosis": None,
                "note": "sufficient path: no per-sequence trace, so no pooled Cauchy fit or kurtosis",
            }
        elif gamma > 0:
            pooled = np.concatenate(self.pooled)
            kurt = float(np.median(self.kurt)) if self.kurt else None
            out["inactive_noise"] = {
                "units": "s_hat/b (b = sqrt(P)); V is the per-entry conditional variance in (s_hat/b)^2",
                "cauchy_scale": cauchy_scale_mle(pooled),
                # the Cauchy(0, γ) / Lévy(0, γ²) laws hold for orthonormal sets only
                "cauchy_scale_expected": float(gamma) if levy else None,
                "cauchy_scale_estimator": "maximum likelihood, location 0, pooled over rounds",
                "pooled_entries": int(pooled.size),
                "v_quantiles": _quantiles(np.asarray(self.V)),
                "v_quantiles_expected_levy": levy_quantiles(gamma) if levy else None,
                "within_round_excess_kurtosis": kurt,
                "within_round_excess_kurtosis_se": float(np.sqrt(24.0 / self.d)),
            }
        if gamma > 0 and n_rx > 1:  # model §5.2: V = Σ_{j∈I} 1/χ²_{N_r}, E V = γ/(N_r − 2) for N_r > 2
            out["inactive_noise"].update({
                "rx_antennas": n_rx, "v_mean": float(np.mean(self.V)),
                "v_mean_expected": float(gamma) / (n_rx - 2) if n_rx > 2 else None,
                "law": "each inactive sequence adds t_{N_r}/sqrt(N_r) (maximum-ratio combining on the pilots, model §5.2)"})
        elif gamma <= 0:
            out["inactive_noise"] = {
                "units": "s_hat/b", "cauchy_scale": 0.0, "cauchy_scale_expected": 0.0,
                "v_quantiles": {str(q): 0.0 for q in QUANTILE_LEVELS},
                "within_round_excess_kurtosis": None,
                "note": "gamma = N - K = 0: no inactive sequences, no privacy noise",
            }
        if self.loss:  # chip-timing offsets with γ > 0: the loss given the pilots (model §5.1, docs/cell.md)
            q = np.concatenate(self.loss)
            out["loss_given_pilots"] = {
                "units": "gamma^2 * Lambda_k per client and round: the order-alpha Renyi divergence given the pilots is "
                         "at most alpha * Lambda_k * S^2 / 2 (phy/floras_leakage.py); no epsilon is derived with offsets",
                "quantiles": {str(p): float(np.percentile(q, p)) for p in (50, 90, 99)},
                "synchronous_reference": {"50": 0.455, "90": 2.706, "99": 6.635,
                                          "law": "chi-square with 1 degree of freedom: c_k^2 * gamma^2 / V at c_k = 1"},
                "values": int(q.size)}
        return out

    @staticmethod
    def detail(s: dict) -> str:
        inn = s["inactive_noise"]
        vq = inn["v_quantiles"]
        out = (f"path={s['path']} gamma={s['gamma']} cauchy_scale={fmt(inn['cauchy_scale'])} "
               f"(expected {fmt(inn['cauchy_scale_expected'])}) V median={fmt(vq['50'])} "
               f"within-round excess kurtosis={fmt(inn['within_round_excess_kurtosis'])}")
        if inn.get("rx_antennas"):
            out += f" rx_antennas={inn['rx_antennas']} V mean={fmt(inn['v_mean'])} (expected {fmt(inn['v_mean_expected'])})"
        if s.get("loss_given_pilots"):
            lq = s["loss_given_pilots"]["quantiles"]
            out += f" loss given pilots gamma^2*Lambda median={fmt(lq['50'])} p99={fmt(lq['99'])} (synchronous 0.455, 6.63)"
        if s.get("estimator_biased"):
            out += " [non-orthogonal sequences: estimator biased]"
        return out
