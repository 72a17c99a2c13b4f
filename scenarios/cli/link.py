"""``floras link``: Monte-Carlo link-level comparison of the aggregation schemes (model §5, §6).

Example::

    floras link --scheme floras channel-inversion ideal --K 20 --N 30 --L 32 --d 1000 \
        --snr-db 20 --rounds 500 --seed 0 --json link.json

Prints a table (SNR definition and resource convention stated) and, with ``--json FILE``,
writes the summary atomically (temporary file in the same folder, then ``os.replace``).
Several ``--snr-db`` values run the study once per SNR: one table each, and the JSON becomes
``{"by_snr": {"0.0": summary, ...}}``. ``--csv FILE`` writes one row per (SNR, scheme) with the
one-round ε of each scheme that has an accountant (:mod:`scenarios.cli.link_study`).

Key: ``--key-hex`` gives the clients' permutation key (≥ 32 hex digits). Without it a
simulation-only key is derived from a public constant and ``--seed`` (reproducible, NOT
secret; see :func:`phy.assignment.simulation_key`).
"""

from __future__ import annotations

import argparse
import math
import sys

from phy.config import NORMALIZATIONS, RESOURCES, RHO_RULES
from phy.floras_params import CSIT_MODES, NOISE_ESTIMATES, PATHS, RECEIVERS, SEQUENCE_FAMILIES
from scenarios.cli.options import (add_geometry_options, add_key_and_json_options, add_phy_set_option, check_json_path,
                                   resolve_key, set_phy_keys, write_json_atomic)
from scenarios.cli.sqsgd_options import add_sqsgd_options, sqsgd_config_values


def register(subparsers) -> None:
    p = subparsers.add_parser("link", help="link-level Monte-Carlo comparison of aggregation schemes",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--scheme", nargs="+", default=list(DEFAULT_SCHEMES), metavar="SCHEME",
                   help=f"one or more registered schemes to compare (floras, channel-inversion, ideal, central-gaussian, "
                        f"analog-gaussian, ddgauss, sqsgd, ...; default: {' '.join(DEFAULT_SCHEMES)})")
    add_geometry_options(p, N_help="sequences in the set, N ≥ K (FLORAS)", d_default=1000, d_help="model dimension (≥ 1)",
                         several_snr=True)
    p.add_argument("--rounds", type=int, default=500, help="Monte-Carlo rounds (≥ 1)")
    p.add_argument("--seed", type=int, default=0, help="master seed in [0, 2**63)")
    p.add_argument("--csit", choices=CSIT_MODES, default="none", help="FLORAS: none (g=Re h) or phase (g=|h|)")
    p.add_argument("--path", choices=PATHS, default="auto", help="FLORAS implementation (auto: fast iff exact, traced; sufficient: NMSE and V only, no noise trace)")
    p.add_argument("--sequences", choices=SEQUENCE_FAMILIES, default="walsh-hadamard")
    p.add_argument("--receiver", choices=RECEIVERS, default="plain",
                   help="FLORAS receiver rule (model §6.4): plain w=1, inverse-variance w=gamma^2/V_hat, capped min(cap, .)")
    p.add_argument("--receiver-cap", type=float, default=4.0, help="FLORAS: w_max of the capped receiver (> 0)")
    p.add_argument("--noise-estimate", choices=NOISE_ESTIMATES, default="pilots",
                   help="FLORAS: V_hat from the pilot outputs (exact) or the release energy |s_hat|^2/(b^2 d)")
    p.add_argument("--normalization", choices=NORMALIZATIONS, default="paper")
    p.add_argument("--clip-norm", type=float, default=None, help="R for --normalization clip")
    p.add_argument("--resource", choices=RESOURCES, default="equal", help="resource convention (model §5)")
    p.add_argument("--g-th", type=float, default=0.01, help="channel-inversion truncation threshold on |h|^2 (> 0)")
    p.add_argument("--rho-rule", choices=RHO_RULES, default="threshold")
    p.add_argument("--chunk-size", type=int, default=65536, help="slots processed at once (does not change results)")
    add_baseline_options(p)
    add_sqsgd_options(p)  # sqSGD (model §9.3)
    add_cell_options(p)
    add_phy_set_option(p)
    add_key_and_json_options(p, json_help="write the summary as JSON (several SNRs: {\"by_snr\": {\"0.0\": summary, ...}})")
    p.add_argument("--csv", dest="csv_path", default=None, metavar="FILE",
                   help="write one row per (SNR, scheme): NMSE mean, median and dB, clipped NMSE, channel uses, "
                        "and the one-round ε (K = M, T = 1, δ = 1e-5) of schemes with an accountant")
    p.set_defaults(handler=run)


# ---- a cell, coherence blocks, timing offsets (model §5.1): the [phy] keys of the same names
CELL_FLAGS = (("--pathloss", str, "pathloss", "cell path-loss model: log-distance, umi, uma, rma (default none: no cell)"),
              ("--cell-radius", float, "cell_radius", "cell radius R [m] (default 250)"),
              ("--snr-reference", str, "snr_reference", "cell-edge (default) or median-distance: where --snr-db holds"),
              ("--power-control", str, "power_control", "full-power (default) or pathloss-inversion"),
              ("--coherence-symbols", int, "coherence_symbols", "slots per fading block n_c (default: one block per update)"),
              ("--pilots", str, "floras.pilots", "FLORAS with coherence blocks: per-block (default) or stale"),
              ("--timing-offset", float, "timing_offset", "FLORAS (chip path) and channel inversion: max fractional-chip offset in [0, 1) (default 0)"),
              ("--rx-antennas", int, "rx_antennas", "receive antennas N_r ≥ 1 at the base station (default 1)"))


def add_cell_options(p: argparse.ArgumentParser) -> None:
    """Named flags for the most used cell and coherence keys (all of them: --set phy.KEY=VALUE)."""
    for flag, kind, _, text in CELL_FLAGS:
        p.add_argument(flag, type=kind, default=None, help=text + " (model §5.1)")


def put_cell_options(table: dict, args: argparse.Namespace) -> None:
    from scenarios.cli.options import put_phy_key

    for flag, _, key, _ in CELL_FLAGS:
        value = getattr(args, flag.lstrip("-").replace("-", "_"))
        if value is not None:
            put_phy_key(table, key, value)


# ---- private baselines (model §9.1, §9.2)
DEFAULT_SCHEMES = ("floras", "channel-inversion", "ideal")


def add_baseline_options(p: argparse.ArgumentParser) -> None:
    """Options of the central/analog Gaussian and DDGauss schemes (need --normalization clip)."""
    p.add_argument("--relation", choices=("replace", "add-remove"), default="replace",
                   help="neighbouring relation: sensitivity S = 2C (replace) or C (add-remove) of the Gaussian baselines")
    p.add_argument("--noise-multiplier", type=float, default=None,
                   help="central-gaussian/analog-gaussian: z >= 0, total noise std z*S in units of the estimate of sum s_k")
    p.add_argument("--bits", type=int, default=16, help="ddgauss: bits per coordinate B (2..48)")
    p.add_argument("--grid", type=float, default=None, help="ddgauss: grid gamma [model units] (default: from --bits)")
    p.add_argument("--local-std", type=float, default=0.0, help="ddgauss: each client's noise std sigma [model units]")
    p.add_argument("--beta", type=float, default=math.exp(-0.5), help="ddgauss: conditional-rounding bound beta in [0, 1) (0: unconditional rounding)")
    p.add_argument("--k-stddevs", type=float, default=4.0, help="ddgauss: standard deviations k kept inside the modulus")


def baseline_config_values(args: argparse.Namespace) -> dict:
    """The sub-tables of the private baselines from the parsed options."""
    z = {} if args.noise_multiplier is None else {"noise_multiplier": args.noise_multiplier}
    return {"central-gaussian": z, "analog-gaussian": z,
            "ddgauss": {"bits": args.bits, "grid": args.grid, "local_std": args.local_std, "beta": args.beta,
                        "k_stddevs": args.k_stddevs}}


def format_table(summary: dict) -> str:
    from phy.link_records import fmt as _fmt
    from phy.schemes import scheme_spec

    p = summary["parameters"]
    lines = [
        f"link-level comparison: K={p['K']} N={p['N']} L={p['L']} d={p['d']} SNR={p['snr_db']} dB "
        f"rounds={p['rounds']} seed={p['seed']} csit={p['csit']} sequences={p['sequences']}",
        f"  {summary['conventions']['snr']}",
        f"  {summary['conventions']['resource']}",
        f"  key: {p['key']}",
        "",
        f"{'scheme':<18} {'NMSE mean':>11} {'NMSE median':>12} {'NMSE dB':>8} {'clipped mean':>12} "
        f"{'clipped med':>12} {'clip dB':>8} {'uses/round':>11} {'s/round':>9}  details",
    ]
    for name, s in summary["schemes"].items():
        detail = scheme_spec(name).link_record.detail(s)  # the scheme's own cell (phy.link_records)
        c = s.get("clipped_nmse", {})
        lines.append(f"{name:<18} {_fmt(s['nmse']['mean']):>11} {_fmt(s['nmse']['median']):>12} "
                     f"{_fmt(s.get('nmse_db', {}).get('mean')):>8} {_fmt(c.get('mean')):>12} {_fmt(c.get('median')):>12} "
                     f"{_fmt(s.get('clipped_nmse_db', {}).get('mean')):>8} "
                     f"{_fmt(s['channel_uses']['mean']):>11} {s['seconds_per_round']:>9.2g}  {detail}")
    lines.append("")
    lines.append("NMSE = ||x_hat - sum x||^2 / ||sum x||^2 per round against the raw sum (schemes with truncation: admitted clients' sum)")
    lines.append("clipped = ||x_hat - sum x~||^2 / ||sum x~||^2 against the clipped sum x~ (what the channel is asked to deliver); "
                 "dB = 10 log10 of the mean")
    lines.append("uses/round = real channel uses per round (model §5): FLORAS (d+1)L, analog d*L or d, digital sum ceil(bits/r_k)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from phy.config import PhyConfig
    from phy.link_simulation import SNR_DEFINITION, resource_statement, simulate_link
    from phy.randomness import check_seed

    check_seed(args.seed)
    if args.rounds < 1:
        raise ValueError(f"rounds must be an integer ≥ 1 (got {args.rounds})")
    if args.d < 1:
        raise ValueError(f"d must be an integer ≥ 1 (got {args.d})")

    snrs = list(args.snr_db) if isinstance(args.snr_db, list) else [args.snr_db]
    table = {"scheme": "ideal", "L": args.L, "snr_db": snrs[0], "normalization": args.normalization,
             "clip_norm": args.clip_norm, "g_th": args.g_th, "rho_rule": args.rho_rule, "resource": args.resource,
             "chunk_size": args.chunk_size,
             "floras": {"N": args.N, "sequences": args.sequences, "csit": args.csit, "path": args.path,
                        "receiver": args.receiver, "receiver_cap": args.receiver_cap, "noise_estimate": args.noise_estimate},
             **baseline_config_values(args), "sqsgd": sqsgd_config_values(args)}
    put_cell_options(table, args)
    set_phy_keys(table, args.overrides)
    base = PhyConfig.from_dict(table)
    from dataclasses import replace

    from phy.schemes import scheme_spec

    schemes = list(dict.fromkeys(args.scheme))
    for name in schemes:
        scheme_spec(name, where="--scheme")  # a registered scheme, or the list of them
    bases = [replace(base, snr_db=float(snr)) for snr in snrs]
    for b in bases:
        for name in schemes:  # validate everything before any work
            replace(b, scheme=name).validate(K=args.K, d=args.d)
    from scenarios.config.resources import check_memory, link_terms

    check_memory(link_terms(K=args.K, N=base.of("floras").N, L=args.L, d=args.d, sequences=args.sequences, chunk_size=args.chunk_size,
                            path=args.path, schemes=schemes), what="floras link", option=args.memory_limit)
    check_json_path(args.json_path)
    if args.csv_path:
        from scenarios.store import check_output_location

        check_output_location(args.csv_path, need_bytes=2**20, kind="file", what="--csv")
    resolved = resolve_key(args.key_hex, args.seed, key_file=args.key_file, warn="floras" in schemes)
    key, key_note = resolved.key, resolved.note()

    out = sys.stderr if args.json_path == "-" else sys.stdout
    blocks, summaries = [], {}
    for b in bases:
        results = simulate_link(b, schemes=schemes, K=args.K, d=args.d, rounds=args.rounds,
                                seed=args.seed, key=key, relation=args.relation)
        summary = _summary(args, b, schemes, results, key_note, SNR_DEFINITION, resource_statement(args.resource, args.L))
        if len(bases) > 1 and summaries:
            print("", file=out)
        print(format_table(summary), file=out)
        summaries[str(float(b.snr_db))] = summary
        if args.csv_path:
            from scenarios.cli.link_study import one_round

            blocks.append((float(b.snr_db), results, {name: one_round(b, scheme=name, K=args.K, d=args.d, relation=args.relation,
                                                                       seed=args.seed) for name in schemes}))
    if args.json_path:
        write_json_atomic(args.json_path, summary if len(bases) == 1 else {"by_snr": summaries})
        if args.json_path != "-":
            print(f"summary written to {args.json_path}", file=sys.stderr)
    if args.csv_path:
        from scenarios.cli.link_study import csv_rows, csv_text
        from scenarios.store import atomic_write_text

        atomic_write_text(args.csv_path, csv_text(csv_rows(blocks)))
        print(f"rows written to {args.csv_path}", file=sys.stderr)
    return 0


def _summary(args, base, schemes, results, key_note, snr_definition, resource) -> dict:
    return {
        "parameters": {
            "schemes": schemes, "K": args.K, "N": args.N, "L": args.L, "d": args.d, "snr_db": float(base.snr_db),
            "rounds": args.rounds, "seed": args.seed, "csit": args.csit, "path": args.path,
            "sequences": args.sequences, "normalization": args.normalization, "clip_norm": args.clip_norm,
            "receiver": args.receiver, "receiver_cap": args.receiver_cap, "noise_estimate": args.noise_estimate,
            "resource": args.resource, "g_th": args.g_th, "rho_rule": args.rho_rule, "power": base.power,
            "C": "sqrt(d*P)", "chunk_size": args.chunk_size, "key": key_note,
            "client_vectors": "x_k ~ N(0, I_d) per round (unit power per entry)",
            "relation": args.relation, "noise_multiplier": args.noise_multiplier, "dd_bits": args.bits,
            "dd_grid": args.grid, "dd_local_std": args.local_std, "dd_beta": args.beta, "dd_k_stddevs": args.k_stddevs,
            "phy": base.to_dict(),
            **({"sqsgd": sqsgd_config_values(args)} if "sqsgd" in schemes else {}),
        },
        "conventions": {"snr": base.snr_definition, "resource": resource},
        "schemes": results,
    }
