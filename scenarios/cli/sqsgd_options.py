"""``floras link`` options of the sqSGD scheme (model §9.3); argparse and the standard library only.

``--sq-levels`` K_q ≥ 2, ``--sq-ratio`` r ∈ (0, 1], ``--epsilon0`` ε₀ > 0 (per client and round),
``--kappa`` (integer; default: the κ that maximizes m), ``--sq-estimator`` {unbiased, sparse},
``--sq-norm-bound`` {fixed, adaptive} with ``--epsilon-s`` ε_s > 0 and ``--sq-norm-levels`` k ≥ 1 (the ScalarDP
norm report), ``--sq-mechanism`` {privquant, pm}; the clip norm is the command's ``--clip-norm`` (sqSGD needs
``--normalization clip``). Local accumulation (``phy.sqsgd.accumulation``) keeps state per client id, which the
link study's fresh clients do not have: it is a training option only. Values are checked by
:meth:`phy.config.PhyConfig.validate` before any work.
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
    p.add_argument("--sq-norm-bound", choices=("fixed", "adaptive"), default="fixed",
                   help="sqsgd: quantization bound U = C (fixed) or refined each round by ScalarDP norm reports (adaptive)")
    p.add_argument("--epsilon-s", type=float, default=1.0,
                   help="sqsgd: pure LDP budget of the adaptive bound's norm report per client and round (> 0)")
    p.add_argument("--sq-norm-levels", type=int, default=32, help="sqsgd: steps k of the norm report's grid on [0, C] (>= 1)")
    p.add_argument("--sq-mechanism", choices=("privquant", "pm"), default="privquant",
                   help="sqsgd: client privatizer (privquant: sqSGD; pm: the piecewise-mechanism baseline)")


def sqsgd_config_values(args: argparse.Namespace) -> dict:
    """The ``[phy.sqsgd]`` sub-table from the parsed options."""
    return {"levels": args.sq_levels, "ratio": args.sq_ratio, "epsilon0": args.epsilon0,
            "kappa": args.kappa, "estimator": args.sq_estimator, "norm_bound": args.sq_norm_bound,
            "epsilon_s": args.epsilon_s, "norm_levels": args.sq_norm_levels, "mechanism": args.sq_mechanism}
