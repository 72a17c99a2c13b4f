"""``floras privacy``: ε of a FLORAS run under threat model T1, planning, and privacy curves (SPEC §7).

Usage::

    floras privacy --K 20 --N 30 --M 100 --rounds 200 --delta 1e-5 --level client --d 100000 \
        [--normalization {paper,clip}] [--C C] [--sensitivity S] [--sampling {without-replacement,poisson}] \
        [--json FILE]
    floras privacy plan --target-epsilon E --K 20 --M 100 --rounds 200 --d 100000 [...]
    floras privacy curves --out DIR

The first form prints ε with every assumption (SPEC §7.4); ``--sensitivity`` overrides the S
derived from the normalization. ``plan`` prints the smallest N that reaches the target ε, or says
that none in the searched range does. ``curves`` computes ε against γ and against T through the
accountant, stores them as JSON and draws the figures (PNG and PDF).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

ACTIONS = ("report", "plan", "curves")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "privacy",
        help="ε of a FLORAS run (threat model T1), planning N, privacy curves",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", nargs="?", choices=ACTIONS, default="report",
                   help="report (default): print ε; plan: smallest N for --target-epsilon; curves: write figures")
    p.add_argument("--K", type=int, default=20, help="clients scheduled per round (default 20)")
    p.add_argument("--N", type=int, default=30, help="spreading sequences, γ = N − K (default 30; ignored by plan)")
    p.add_argument("--M", type=int, default=100, help="clients in the population (default 100)")
    p.add_argument("--rounds", type=int, default=200, help="rounds T (default 200)")
    p.add_argument("--delta", type=float, default=1e-5, help="δ in (0, 1) (default 1e-5)")
    p.add_argument("--d", type=int, default=None, help="model dimension d (required for report and plan)")
    p.add_argument("--level", choices=("client", "item"), default="client")
    p.add_argument("--relation", choices=("replace", "add-remove"), default=None,
                   help="neighbouring relation (default: replace; add-remove with --sampling poisson at client level)")
    p.add_argument("--normalization", choices=("paper", "clip"), default="paper")
    p.add_argument("--C", type=float, default=None, help="norm bound C of s_k (default √(d·P))")
    p.add_argument("--power", type=float, default=1.0, help="per-symbol average power P (default 1); b = √P")
    p.add_argument("--clip-norm", type=float, default=None, help="public clip norm R (normalization clip)")
    p.add_argument("--sensitivity", type=float, default=None, help="override the derived sensitivity S")
    p.add_argument("--sampling", choices=("without-replacement", "poisson"), default="without-replacement")
    p.add_argument("--local-steps", type=int, default=None, help="item level: E local steps (default: full epochs)")
    p.add_argument("--batch-size", type=int, default=None, help="item level with --local-steps: batch size B")
    p.add_argument("--local-dataset-size", type=int, default=None, help="item level with --local-steps: records D")
    p.add_argument("--conversion", choices=("tight", "standard"), default="tight", help="RDP → (ε, δ) conversion")
    p.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the report as JSON")
    p.add_argument("--target-epsilon", type=float, default=None, help="plan: the ε to reach")
    p.add_argument("--n-max", type=int, default=10**9, help="plan: largest N searched (default 1e9)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help="curves: output directory")
    p.set_defaults(handler=run)


def _config(args) -> dict:
    if args.d is None:
        raise ValueError("d must be given with --d (the model dimension, an integer ≥ 1)")
    relation = args.relation
    if relation is None:
        relation = "add-remove" if (args.sampling == "poisson" and args.level == "client") else "replace"
    return dict(
        K=args.K, M=args.M, d=args.d, normalization=args.normalization, C=args.C, power=args.power,
        clip_norm=args.clip_norm, level=args.level, relation=relation, sampling=args.sampling, delta=args.delta,
        local_steps=args.local_steps, batch_size=args.batch_size, local_dataset_size=args.local_dataset_size,
        sensitivity=args.sensitivity, conversion=args.conversion,
    )


def _write_json(path: Path | None, payload: dict) -> None:
    if path is None:
        return
    from scenarios.store import atomic_write_text, storage_error

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise storage_error(exc, "create", path.parent) from None
    atomic_write_text(path, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def run(args) -> int:
    from privacy import FlorasRunAccountant, plan_smallest_N

    if args.rounds < 0:
        raise ValueError(f"rounds must be an integer ≥ 0 (got {args.rounds})")
    if args.action == "curves":
        if args.out is None:
            raise ValueError("out must be given with --out DIR for 'floras privacy curves'")
        from scenarios.store import check_output_location

        check_output_location(args.out, need_bytes=16 * 2**20, what="--out")
        from figures.privacy_curves import plot_curves
        from privacy.curves import compute_curves, write_curves

        data = compute_curves()
        path = write_curves(data, args.out / "privacy_curves.json")
        for p in plot_curves(path, args.out):
            print(p)
        return 0
    config = _config(args)
    from scenarios.cli_options import check_json_path

    check_json_path(None if args.json is None else str(args.json))
    if args.action == "plan":
        if args.target_epsilon is None or not (math.isfinite(args.target_epsilon) and args.target_epsilon > 0):
            raise ValueError(f"target-epsilon must be a finite number > 0 (got {args.target_epsilon})")
        result = plan_smallest_N(target_epsilon=args.target_epsilon, rounds=args.rounds, n_max=args.n_max, **config)
        print(result.message)
        print(result.report)
        _write_json(args.json, result.to_dict())
        return 0
    report = FlorasRunAccountant(N=args.N, **config).report(rounds=args.rounds)
    print(report)
    _write_json(args.json, report.to_dict())
    return 0
