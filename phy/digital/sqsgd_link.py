"""Link-level record of the sqSGD scheme for ``floras link`` (model §5, §9.3).

Per round: the NMSE, the error vector x̂_t − Σ_{admitted} x_t (for the bias), the channel uses.
Summary fields (JSON): ``nmse`` {mean, median, rounds}, ``bias`` = ‖mean_t(x̂_t − x_t)‖ / rms_t‖x_t‖
with ``bias_if_unbiased`` = √(Σ_t ‖x̂_t − x_t‖²)/T / rms_t‖x_t‖, the value the bias has in
expectation (to first order) for an unbiased estimator whose errors are independent over rounds
(a bias well above it is real). Because the client vectors are fresh every round, a bias
proportional to the sum (the sparse estimator's E[x̂_t] = (d̃/d)·x_t) averages out of that
mean; ``bias_along_sum`` = Σ_t⟨x̂_t − x_t, x_t⟩ / Σ_t‖x_t‖² measures it (−(1 − d̃/d) for the
sparse estimator, 0 for the unbiased one) with its standard error ``bias_along_sum_se`` =
√(Σ_t⟨x̂_t − x_t, x_t⟩²) / Σ_t‖x_t‖². Further fields: ``m``, ``kappa`` (None for the piecewise mechanism), ``bits`` (per admitted client), ``channel_uses``
{mean, min, max}, ``admitted``, ``skipped_rounds``, ``mechanism``, ``norm_bound`` and ``final_bound_U`` (U after
the last round: C for the fixed bound).
"""

from __future__ import annotations

import math

import numpy as np

from ..link_records import fmt

__all__ = ["SqsgdLinkRecord"]


class SqsgdLinkRecord:
    """Accumulates the rounds of one sqSGD aggregator in the link simulation."""

    def __init__(self, aggregator, d: int):
        self.aggregator = aggregator
        self.err_sum = np.zeros(int(d))
        self.err_sq = 0.0
        self.target_sq = 0.0
        self.proj_sum = 0.0
        self.proj_sq = 0.0
        self.errors: list[float] = []
        self.uses: list[float] = []
        self.admitted: list[int] = []
        self.skipped = 0
        self.rounds = 0

    def record(self, result, trace, x: np.ndarray) -> None:
        """Add one round: ``result`` the AggregationResult, ``trace`` the SqsgdRound, ``x`` the K×d vectors."""
        self.uses.append(float(result.diagnostics["channel_uses"]))
        self.admitted.append(int(result.contributors))
        if result.contributors == 0:
            self.skipped += 1
            return
        target = x[trace.admitted].sum(axis=0)
        e = result.sum_estimate - target
        self.err_sum += e
        self.err_sq += float(e @ e)
        self.target_sq += float(target @ target)
        proj = float(e @ target)
        self.proj_sum += proj
        self.proj_sq += proj * proj
        self.errors.append(float(result.error))
        self.rounds += 1

    def nmse(self) -> dict:
        T = self.rounds
        nm = np.asarray(self.errors)
        return {"mean": float(nm.mean()) if T else None, "median": float(np.median(nm)) if T else None, "rounds": T}

    def summary(self) -> dict:
        agg = self.aggregator
        nm = np.asarray(self.errors)
        uses = np.asarray(self.uses)
        adm = np.asarray(self.admitted)
        T = self.rounds
        if T:
            rms = math.sqrt(self.target_sq / T)
            bias = float(np.linalg.norm(self.err_sum / T) / rms) if rms > 0 else None
            floor = float(math.sqrt(self.err_sq) / T / rms) if rms > 0 else None
            along = self.proj_sum / self.target_sq if self.target_sq > 0 else None
            along_se = math.sqrt(self.proj_sq) / self.target_sq if self.target_sq > 0 else None
        else:
            bias = floor = along = along_se = None
        return {
            "nmse": self.nmse(),
            "bias": bias,
            "bias_if_unbiased": floor,
            "bias_along_sum": along,
            "bias_along_sum_se": along_se,
            "m": agg.m,
            "kappa": agg.kappa,
            "d_tilde": agg.d_tilde,
            "rotation_length": agg.n,
            "bits": agg.bits,
            "channel_uses": {"mean": float(uses.mean()), "min": float(uses.min()), "max": float(uses.max())},
            "admitted": {"mean": float(adm.mean()), "min": int(adm.min()), "max": int(adm.max())},
            "skipped_rounds": self.skipped,
            "estimator": agg.params.estimator,
            "mechanism": agg.params.mechanism,
            "norm_bound": agg.params.norm_bound,
            "final_bound_U": agg.bound_t,
            "threat_model": "any observer (T1 and T2): each client's message is epsilon0-LDP",
            "nmse_note": "relative to the admitted clients' sum; skipped rounds (K' = 0) excluded",
        }

    @staticmethod
    def detail(s: dict) -> str:
        f = fmt
        return (f"bias={f(s['bias'])} (unbiased ~{f(s['bias_if_unbiased'])}) along sum={f(s['bias_along_sum'])}"
                f"±{f(s['bias_along_sum_se'])} m={f(s['m'])} kappa={s['kappa']} "
                f"bits/client={s['bits']} uses/round={f(s['channel_uses']['mean'])} admitted mean={f(s['admitted']['mean'])} "
                f"[{s['mechanism']}, {s['estimator']}, {s['norm_bound']} U (last {f(s['final_bound_U'])}); "
                f"LDP vs any observer]")
