"""``floras link`` options of the sqSGD scheme (model §9.3); argparse and the standard library only.

``--sq-levels`` K_q ≥ 2, ``--sq-ratio`` r ∈ (0, 1], ``--epsilon0`` ε₀ > 0 (per client and round),
``--kappa`` (integer; default: the κ that maximizes m), ``--sq-estimator`` {unbiased, sparse}; the
clip norm is the command's ``--clip-norm`` (sqSGD needs ``--normalization clip``). Values are
checked by :meth:`phy.config.PhyConfig.validate` before any work.
"""

from __future__ import annotations

import argparse

__all__ = ["add_sqsgd_options", "sqsgd_config_values", "sqsgd_detail"]


def add_sqsgd_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sq-levels", type=int, default=2, help="sqsgd: quantization levels K_q (>= 2)")
    p.add_argument("--sq-ratio", type=float, default=1.0, help="sqsgd: coordinate subsampling ratio r in (0, 1]")
    p.add_argument("--epsilon0", type=float, default=1.0, help="sqsgd: per-round local DP budget epsilon0 (> 0)")
    p.add_argument("--kappa", type=int, default=None, help="sqsgd: cap kappa (integer; default: the one maximizing m)")
    p.add_argument("--sq-estimator", choices=("unbiased", "sparse"), default="unbiased",
                   help="sqsgd: server estimator (unbiased: scaled by d/d_tilde; sparse: the source's)")


def sqsgd_config_values(args: argparse.Namespace) -> dict:
    """The PhyConfig fields of sqSGD from the parsed options."""
    return {"sq_levels": args.sq_levels, "sq_ratio": args.sq_ratio, "epsilon0": args.epsilon0,
            "kappa": args.kappa, "sq_estimator": args.sq_estimator}


def sqsgd_detail(s: dict) -> str:
    """One table cell of details for the sqsgd scheme."""
    def f(v):
        return "-" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))

    return (f"bias={f(s['bias'])} (unbiased ~{f(s['bias_if_unbiased'])}) along sum={f(s['bias_along_sum'])}"
            f"±{f(s['bias_along_sum_se'])} m={f(s['m'])} kappa={s['kappa']} "
            f"bits/client={s['bits']} uses/round={f(s['channel_uses']['mean'])} admitted mean={f(s['admitted']['mean'])} "
            f"[{s['estimator']}; eps0-LDP vs any observer]")
