"""Monte-Carlo link-level comparison of the aggregation schemes (model §5, §6).

Each round t draws K random unit-power client vectors x_k ~ N(0, I_d) from the keyed stream
``(seed, "link-client-vectors", t)``; every scheme sees the same vectors and, through the keyed
fading draw, the same channel. Per round and scheme it records the normalized squared error
of the estimated sum (the aggregation interface's ``error``); for FLORAS also V and the
inactive-sequence noise e (in ŝ/b units; not on the sufficient path, which yields ŝ and V only, so
``path = "auto"`` traces with the fast path here), for channel inversion the admitted count, for the
private baselines (model §9) the admitted count and their per-round diagnostics averaged over
non-skipped rounds; for every scheme the channel uses per round (model §5).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from .aggregation import make_aggregator
from .config import SNR_DEFINITION, PhyConfig
from .randomness import stream
from .statistics import QUANTILE_LEVELS, cauchy_scale_mle, excess_kurtosis, levy_quantiles

__all__ = ["simulate_link", "SNR_DEFINITION", "resource_statement", "POOLED_ENTRIES_PER_ROUND"]

POOLED_ENTRIES_PER_ROUND = 2000  # entries per round kept for the pooled Cauchy fit


def resource_statement(resource: str, L: int) -> str:
    """One line stating the resource convention of model §5."""
    if resource == "equal":
        return (f"equal resource: every scheme spends L = {L} chips per aggregated symbol "
                f"(channel inversion repeats its symbol; matched-filter noise variance sigma^2/L)")
    return "source-literal: channel inversion uses one channel use per symbol (noise variance sigma^2)"


def _quantiles(values: np.ndarray) -> dict[str, float]:
    return {str(q): float(np.percentile(values, q)) for q in QUANTILE_LEVELS}


def _nmse_summary(errors: list[float]) -> dict:
    e = np.asarray(errors, dtype=np.float64)
    if e.size == 0:
        return {"mean": None, "median": None, "rounds": 0}
    return {"mean": float(np.mean(e)), "median": float(np.median(e)), "rounds": int(e.size)}


def simulate_link(base: PhyConfig, *, schemes: list[str], K: int, d: int, rounds: int, seed: int,
                  key: bytes, progress=None, relation: str = "replace") -> dict:
    """Run ``rounds`` rounds of every scheme in ``schemes`` and summarise them.

    Parameters
    ----------
    base : PhyConfig whose ``scheme`` is replaced by each entry of ``schemes``.
    K, d, rounds : clients, model dimension, Monte-Carlo rounds (all ≥ 1).
    seed : master seed; key : clients' permutation key (FLORAS).
    progress : optional callable(done_rounds, rounds).
    relation : "replace" or "add-remove", the sensitivity the Gaussian baselines' noise multiplier scales.

    Returns
    -------
    dict: ``schemes`` → per-scheme summary (see docs/physics.md for the fields).
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer ≥ 1 (got {rounds!r})")
    if not schemes:
        raise ValueError("scheme must name at least one of floras, channel-inversion, ideal")
    aggs = {}
    for name in dict.fromkeys(schemes):
        cfg = replace(base, scheme=name)
        cfg.validate(K=K, d=d)
        aggs[name] = make_aggregator(cfg, K=K, d=d, seed=seed, key=key if name == "floras" else None,
                                     relation=relation)

    rec = {name: {"err": [], "time": 0.0, "V": [], "kurt": [], "pooled": [], "admitted": [], "skipped": 0,
                  "rho": [], "power": [], "uses": [], "diag": []} for name in aggs}
    if "sqsgd" in aggs:
        from .digital.sqsgd_link import SqsgdLinkRecord

        rec["sqsgd"]["sqsgd"] = SqsgdLinkRecord(d)
    keep = min(d, POOLED_ENTRIES_PER_ROUND)
    for t in range(rounds):
        x = stream(seed, "link-client-vectors", t).standard_normal((K, d))
        for name, agg in aggs.items():
            r = rec[name]
            t0 = time.perf_counter()
            if name == "floras":  # traced unless the configured path cannot trace (sufficient)
                res, trace = agg.aggregate_traced(x, round_index=t, trace=agg.link.trace_path is not None)
            elif name == "channel-inversion":
                res, trace = agg.aggregate_traced(x, round_index=t)
            elif name == "sqsgd":  # model §9.3
                res, trace = agg.aggregate_traced(x, round_index=t)
            else:
                res, trace = agg.aggregate(x, round_index=t), None
            r["time"] += time.perf_counter() - t0
            r["uses"].append(res.diagnostics["channel_uses"])
            if name == "floras":
                r["err"].append(res.error)
                r["V"].append(trace.V)
                if agg.link.gamma > 0 and trace.inactive_noise is not None:
                    r["pooled"].append(trace.inactive_noise[:keep].copy())
                    if d >= 2:
                        r["kurt"].append(excess_kurtosis(trace.inactive_noise))
            elif name == "channel-inversion":
                r["admitted"].append(res.contributors)
                r["power"].append(res.diagnostics["max_power_ratio"])
                if res.contributors == 0:
                    r["skipped"] += 1
                else:
                    r["err"].append(res.error)
                    r["rho"].append(trace.rho)
            elif name in _BASELINE_DIAGNOSTICS:
                r["admitted"].append(res.contributors)
                if res.diagnostics.get("skipped", 0.0):
                    r["skipped"] += 1
                else:
                    r["err"].append(res.error)
                    r["diag"].append({k: res.diagnostics[k] for k in _BASELINE_DIAGNOSTICS[name] if k in res.diagnostics})
            elif name == "sqsgd":
                r["sqsgd"].record(res, trace, x)
            else:
                r["err"].append(res.error)
        if progress is not None:
            progress(t + 1, rounds)

    out = {}
    for name, agg in aggs.items():
        r = rec[name]
        uses = np.asarray(r["uses"], dtype=np.float64)
        summary = {"nmse": _nmse_summary(r["err"]), "seconds_per_round": r["time"] / rounds,
                   "channel_uses": {"mean": float(uses.mean()), "min": float(uses.min()), "max": float(uses.max())}}
        if name == "floras":
            gamma = agg.link.gamma
            traced = agg.link.trace_path is not None
            summary.update({"path": agg.link.trace_path or agg.link.path, "gamma": gamma,
                            "orthonormal": agg.link.orthonormal,
                            "estimator_biased": not agg.link.orthonormal})
            if gamma > 0 and not traced:  # sufficient path: ŝ and V only (model §6.1)
                summary["inactive_noise"] = {
                    "units": "V is the per-entry conditional variance in (s_hat/b)^2 (b = sqrt(P))",
                    "cauchy_scale": None,
                    "cauchy_scale_expected": float(gamma),
                    "v_quantiles": _quantiles(np.asarray(r["V"])),
                    "v_quantiles_expected_levy": levy_quantiles(gamma),
                    "within_round_excess_kurtosis": None,
                    "note": "sufficient path: no per-sequence trace, so no pooled Cauchy fit or kurtosis",
                }
            elif gamma > 0:
                pooled = np.concatenate(r["pooled"])
                kurt = float(np.median(r["kurt"])) if r["kurt"] else None
                summary["inactive_noise"] = {
                    "units": "s_hat/b (b = sqrt(P)); V is the per-entry conditional variance in (s_hat/b)^2",
                    "cauchy_scale": cauchy_scale_mle(pooled),
                    # the Cauchy(0, γ) / Lévy(0, γ²) laws hold for orthonormal sets only
                    "cauchy_scale_expected": float(gamma) if agg.link.orthonormal else None,
                    "cauchy_scale_estimator": "maximum likelihood, location 0, pooled over rounds",
                    "pooled_entries": int(pooled.size),
                    "v_quantiles": _quantiles(np.asarray(r["V"])),
                    "v_quantiles_expected_levy": levy_quantiles(gamma) if agg.link.orthonormal else None,
                    "within_round_excess_kurtosis": kurt,
                    "within_round_excess_kurtosis_se": float(np.sqrt(24.0 / d)),
                }
            else:
                summary["inactive_noise"] = {
                    "units": "s_hat/b", "cauchy_scale": 0.0, "cauchy_scale_expected": 0.0,
                    "v_quantiles": {str(q): 0.0 for q in QUANTILE_LEVELS},
                    "within_round_excess_kurtosis": None,
                    "note": "gamma = N - K = 0: no inactive sequences, no privacy noise",
                }
        elif name == "channel-inversion":
            adm = np.asarray(r["admitted"])
            summary.update({
                "admitted": {"mean": float(adm.mean()), "min": int(adm.min()), "max": int(adm.max())},
                "skipped_rounds": r["skipped"],
                "rho_mean": float(np.mean(r["rho"])) if r["rho"] else None,
                "max_power_ratio": float(np.max(r["power"])),
                "nmse_note": "relative to the admitted clients' sum; skipped rounds (K' = 0) excluded",
            })
        elif name in _BASELINE_DIAGNOSTICS:
            summary.update(_baseline_summary(agg, r))
        elif name == "sqsgd":
            summary.update(r["sqsgd"].summary(agg))
        out[name] = summary
    return out


# ---- private baselines (model §9.1, §9.2): per-round diagnostics averaged over non-skipped rounds
_BASELINE_DIAGNOSTICS = {
    "central-gaussian": ("noise_std",),
    "analog-gaussian": ("rho", "noise_std_target", "receiver_noise_std", "artificial_noise_std", "noise_std_effective",
                        "receiver_noise_exceeds_target", "max_power_ratio"),
    "ddgauss": ("grid", "delta2", "local_std_per_client", "redraws", "wrapped_fraction", "bits_per_client"),
}


def _baseline_summary(agg, r: dict) -> dict:
    adm = np.asarray(r["admitted"])
    desc = agg.describe()
    means = {}
    for key in _BASELINE_DIAGNOSTICS[desc["scheme"]]:
        vals = [row[key] for row in r["diag"] if key in row]
        means[key] = float(np.mean(vals)) if vals else None
    out = {"admitted": {"mean": float(adm.mean()), "min": int(adm.min()), "max": int(adm.max())},
           "skipped_rounds": r["skipped"], "diagnostics_mean": means}
    for key in ("threat_model", "relation", "sensitivity", "grid_source", "d_pad"):
        if key in desc:
            out[key] = desc[key]
    if "max_power_ratio" in means:
        out["max_power_ratio"] = float(np.max([row["max_power_ratio"] for row in r["diag"]])) if r["diag"] else None
    return out
