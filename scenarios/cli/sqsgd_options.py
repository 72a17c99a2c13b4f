"""``floras link`` options of the sqSGD scheme (model §9.3); argparse and the standard library only.

``--sq-levels`` K_q ≥ 2, ``--sq-ratio`` r ∈ (0, 1], ``--epsilon0`` ε₀ > 0 (per client and round),
``--kappa`` (integer; default: the κ that maximizes m), ``--sq-estimator`` {unbiased, sparse}; the
clip norm is the command's ``--clip-norm`` (sqSGD needs ``--normalization clip``). Values are
checked by :meth:`phy.config.PhyConfig.validate` before any work.
"""

from __future__ import annotations

import argparse

__all__ = ["add_sqsgd_options", "sqsgd_config_values"]


def add_sqsgd_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sq-levels", type=int, default=2, help="sqsgd: quantization levels K_q (>= 2)")
    p.add_argument("--sq-ratio", type=float, default=1.0, help="sqsgd: coordinate subsampling ratio r in (0, 1]")
    p.add_argument("--epsilon0", type=float, default=1.0, help="sqsgd: per-round local DP budget epsilon0 (> 0)")
    p.add_argument("--kappa", type=int, default=None, help="sqsgd: cap kappa (integer; default: the one maximizing m)")
    p.add_argument("--sq-estimator", choices=("unbiased", "sparse"), default="unbiased",
                   help="sqsgd: server estimator (unbiased: scaled by d/d_tilde; sparse: the source's)")


def sqsgd_config_values(args: argparse.Namespace) -> dict:
    """The ``[phy.sqsgd]`` sub-table from the parsed options."""
    return {"levels": args.sq_levels, "ratio": args.sq_ratio, "epsilon0": args.epsilon0,
            "kappa": args.kappa, "estimator": args.sq_estimator}
