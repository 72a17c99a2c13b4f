"""``floras audit``: what the base station and the model's consumers can learn (model §7.1, §7.5).

Example::

    floras audit --threat T2 --K 20 --N 30 --L 32 --snr-db 20 --trials 1000 --seed 0 --json audit.json

``--threat T1`` plays the distinguishing game on the released estimate ŝ (an observer of the
aggregates or models); ``--threat T2`` additionally measures, from the raw received signals,
active-sequence detection, per-client decoding and linking across rounds, and plays the game
with the base station's view. Both print the empirical ε lower bound (Clopper–Pearson, stated
confidence) beside the T1 accountant's ε upper bound for the same configuration, each with its
assumptions. ``--sweep-snr-db`` adds detection against SNR (both CSIT modes) and the K, N of
``--sweep-K``/``--sweep-N`` for the ROC figure. JSON keys: see docs/audit.md.

Receive antennas and a cell (model §5.1, §5.2; T2 only): ``--rx-antennas N`` gives the base station N
antennas (energy detector over the antennas, maximum-ratio decodes, pilot-energy, signature, line-of-sight
direction (``--set phy.rician_k=κ``, N ≥ 3) and joint linking);
the cell keys come through ``--set phy.KEY=VALUE`` as in ``floras link``, e.g.
``--set phy.pathloss='"umi"' --set phy.snr_reference='"median-distance"'``; so do coherence blocks
(``--set phy.coherence_symbols=…``: the base station sees the pilot of every block) and chip-timing offsets
(``--set phy.timing_offset=…``, one antenna). ``--sweep-rx-antennas 1 2 4 8``
repeats detection and multi-round linking for each N_r at the SNRs of ``--sweep-snr-db`` (default
``--snr-db``; with it the detection sweep runs only if ``--sweep-K`` or ``--sweep-N`` is given)::

    floras audit --threat T2 --K 10 --N 16 --L 16 --d 64 --rounds 50 --trials 100 \
        --set phy.pathloss='"umi"' --set phy.snr_reference='"median-distance"' \
        --sweep-rx-antennas 1 2 4 8 --sweep-snr-db 10 20 --json link_antennas.json

Key: ``--key-hex`` gives the clients' permutation key (≥ 32 hex digits); without it a
simulation-only key is derived from a public constant and ``--seed`` (reproducible, NOT secret).
"""

from __future__ import annotations

import argparse
import math
import sys

from phy.floras_params import CSIT_MODES, SEQUENCE_FAMILIES
from scenarios.cli.options import (add_geometry_options, add_key_and_json_options, add_phy_set_option, check_json_path,
                                   resolve_key, set_phy_keys, write_json_atomic)

DEFAULT_TRIALS = {"T1": 2000, "T2": 1000}


def register(subparsers) -> None:
    p = subparsers.add_parser("audit", help="empirical privacy audit under threat models T1 and T2",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--threat", choices=("T1", "T2"), required=True,
                   help="T1: observer of the released estimates; T2: base station with the raw signals")
    add_geometry_options(p, N_help="sequences in the set, K ≤ N ≤ L (orthonormal sets)", d_default=16,
                         d_help="model dimension of the audited round (≥ 3)")
    p.add_argument("--csit", choices=CSIT_MODES, default="none", help="none (g = Re h) or phase pre-rotation (g = |h|)")
    p.add_argument("--sequences", choices=SEQUENCE_FAMILIES, default="walsh-hadamard")
    p.add_argument("--C", type=float, default=None, help="norm bound of s_k (default √(d·P))")
    p.add_argument("--trials", type=int, default=None,
                   help="game trials per world (≥ 4; default 2000 for T1, 1000 for T2)")
    p.add_argument("--rounds", type=int, default=300, help="T2 measurement rounds for detection/decoding/linking (≥ 2)")
    p.add_argument("--neighbour", choices=("replace", "zero"), default="replace",
                   help="world 1 of the game: canary replaced by its negative (S = 2C/b) or by zero (S = C/b)")
    p.add_argument("--delta", type=float, default=1e-5, help="δ of both ε values, in (0, 1)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence of the empirical bound and intervals, in (0, 1)")
    p.add_argument("--false-alarm", type=float, default=0.01,
                   help="per-sequence false-alarm probability of the default detector threshold, in (0, 1)")
    p.add_argument("--persistence", type=float, nargs="+", default=[0.0, 0.5, 0.9],
                   help="linking: persistence ρ ∈ [0, 1] of the clients' update directions across rounds")
    p.add_argument("--sweep-snr-db", type=float, nargs="+", default=None, help="T2: detection sweep over these SNRs")
    p.add_argument("--sweep-K", type=int, nargs="+", default=None, help="T2 sweep: K values (default --K)")
    p.add_argument("--sweep-N", type=int, nargs="+", default=None, help="T2 sweep: N values (default --N)")
    p.add_argument("--rx-antennas", type=int, default=None,
                   help="T2: receive antennas N_r ≥ 1 at the base station (default 1; model §5.2)")
    p.add_argument("--sweep-rx-antennas", type=int, nargs="+", default=None,
                   help="T2: detection and multi-round linking for each N_r (at --sweep-snr-db, default --snr-db)")
    p.add_argument("--seed", type=int, default=0, help="master seed in [0, 2**63)")
    add_phy_set_option(p)
    add_key_and_json_options(p, json_help="write the results as JSON")
    p.set_defaults(handler=run)


def _check(args) -> None:
    def pos_int(name, v, low):
        if v < low:
            raise ValueError(f"{name} must be an integer ≥ {low} (got {v})")

    pos_int("K", args.K, 1)
    pos_int("d", args.d, 3)
    pos_int("rounds", args.rounds, 2)
    if args.trials is not None:
        pos_int("trials", args.trials, 4)
    for name, v in (("delta", args.delta), ("confidence", args.confidence), ("false-alarm", args.false_alarm)):
        if not (math.isfinite(v) and 0.0 < v < 1.0):
            raise ValueError(f"{name} must be in (0, 1) (got {v})")
    for rho in args.persistence:
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"persistence must be in [0, 1] (got {rho})")
    if args.threat == "T1" and (args.sweep_snr_db or args.sweep_K or args.sweep_N or args.sweep_rx_antennas):
        raise ValueError("sweep-snr-db, sweep-K, sweep-N and sweep-rx-antennas apply to --threat T2 only")
    if args.rx_antennas is not None:
        pos_int("rx-antennas", args.rx_antennas, 1)
    for v in args.sweep_rx_antennas or []:
        pos_int("sweep-rx-antennas", v, 1)
    for v in args.sweep_snr_db or []:
        if not math.isfinite(v):
            raise ValueError(f"sweep-snr-db must hold finite numbers of dB (got {v})")


def _f(v, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, float) and math.isnan(v):
        return "-"
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    return f"{v:.{digits}g}"


def format_report(res: dict) -> str:
    c = res["config"]
    lines = [
        f"FLORAS privacy audit, threat model {res['threat']}: K={c['K']} N={c['N']} (γ={res['gamma']}) L={c['L']} "
        f"d={c['d']} SNR={c['snr_db']} dB csit={c['csit']} sequences={c['sequences']} seed={res['seed']}",
        f"  {res['snr_definition']}",
        f"  key: {res['key']}",
    ]
    if res["threat"] == "T2":
        det, dec, lk = res["detection"], res["decoding"], res["linking"]
        lines += [
            "",
            "active-sequence detection from the reference slot (curious base station, raw signals):",
            f"  {det['detector']}; {det['threshold_rule']}",
            f"  P_D  = {_f(det['detection_probability'])}  CI {_f(det['detection_probability_ci'][0])}–{_f(det['detection_probability_ci'][1])}"
            f"  (theory {_f(det['detection_probability_theory'])})",
            f"  P_FA = {_f(det['false_alarm_probability'])}  CI {_f(det['false_alarm_probability_ci'][0])}–{_f(det['false_alarm_probability_ci'][1])}"
            f"  ({int(det['ci_confidence'] * 100)}% Clopper–Pearson, {det['active_sequence_rounds']} active / {det['inactive_sequence_rounds']} inactive sequence-rounds)",
            f"  top-K rule (BS knows K): {_f(det['top_k_accuracy'])} of the declared sequences are active",
            "",
            "per-client decoding v_j = b·r_j^i/r_j^s of each active client's normalized update:",
            f"  NMSE median {_f(dec['median'])} (10%: {_f(dec['quantiles']['0.1'])}, 90%: {_f(dec['quantiles']['0.9'])}); "
            f"{_f(100 * dec['fraction_below_0.1'], 3)}% of clients decoded to NMSE < 0.1",
            "",
            "linking across rounds (success rate; chance 1/K = " + _f(lk["chance"]["similarity"]) + ", index chance 1/N = "
            + _f(lk["chance"]["index"]) + "):",
        ]
        for rho, block in lk["by_persistence"].items():
            parts = [f"{m} {_f(v['success_rate'], 3)}±{_f(v['standard_error'], 2)}" for m, v in block.items()]
            lines.append(f"  persistence ρ={rho}: " + ", ".join(parts))
        lines += ["", f"following the same K clients over {res['rounds']} rounds with {lk.get('rx_antennas', 1)} receive "
                  f"antenna(s) (success; chance 1/K):"]
        for rho, tr in res["tracking"]["by_persistence"].items():
            lines.append(f"  persistence ρ={rho}: " + _tracking_line(tr))
        for rec in res.get("linking_sweep", []):
            lines.append(f"  sweep N_r={rec['rx_antennas']} SNR={_f(rec['snr_db'])} dB: P_D {_f(rec['detection_probability'], 3)}; "
                         + _tracking_line(rec["tracking"]))
    g = res["game"]
    up = res["epsilon_upper_report"]
    lines += [
        "",
        f"distinguishing game ({g['neighbour']} neighbour, {g['trials_per_world']} trials per world; statistic: {g['statistic']}):",
        f"  empirical ε lower bound = {_f(res['empirical_epsilon_lower'])} at δ = {res['delta']:g}, confidence {res['confidence']:g}"
        f"  [held-out FP {g['false_positives']}/{g['n_eval_world0']}, FN {g['false_negatives']}/{g['n_eval_world1']};"
        f" largest reportable with these trials {_f(g['max_reportable'])}{'; saturated: more trials could raise it' if g['saturated'] else ''}]",
        f"  method: {g['method']}; assumptions: threat model {res['threat']}, neighbouring pair as above, one round, the canary scheduled",
        "",
        f"accountant ε upper bound = {_f(res['epsilon_upper'])} at δ = {up['delta']:g} (α = {_f(up['best_order'])}); {res['epsilon_upper_applies_to']}",
        "  assumptions:",
    ]
    lines += [f"    - {a}" for a in up["assumptions"]]
    for w in up.get("warnings", []):
        lines.append(f"    ! {w}")
    return "\n".join(lines)


def _tracking_line(tr: dict) -> str:
    m = tr["methods"]
    parts = [f"{name} {_f(m[name]['pairwise']['success_rate'], 3)}" for name in ("pilot", "signature", "steering", "joint", "similarity")]
    for name in ("cumulative", "cumulative-joint"):
        for score in ("link", "followed"):
            cum = m[name][score]
            parts.append(f"{name} {score} after " + ", ".join(f"{R}: {_f(v['success_rate'], 3)}" for R, v in cum.items()))
    parts.append(f"clustered link {_f(m['clustered']['link']['success_rate'], 3)}, followed through all "
                 f"{m['clustered']['rounds']} rounds {_f(m['clustered']['followed']['success_rate'], 3)}")
    chain = m["pilot"]["chain"]
    parts.append("pilot chains " + ", ".join(f"{R}: {_f(v['success_rate'], 3)}" for R, v in chain.items()))
    return "; ".join(parts)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from phy.config import PhyConfig
    from phy.randomness import check_seed

    check_seed(args.seed)
    _check(args)
    trials = DEFAULT_TRIALS[args.threat] if args.trials is None else args.trials
    table = {"scheme": "floras", "L": args.L, "snr_db": args.snr_db, "C": args.C, "normalization": "clip", "clip_norm": 1.0,
             "floras": {"N": args.N, "sequences": args.sequences, "csit": args.csit}}
    if args.rx_antennas is not None:
        table["rx_antennas"] = args.rx_antennas
    set_phy_keys(table, args.overrides)
    config = PhyConfig.from_dict(table)
    config.validate(K=args.K, d=args.d)
    if args.threat == "T1" and (config.rx_antennas != 1 or config.has_cell):
        raise ValueError("rx-antennas and phy.pathloss apply to --threat T2 only: the T1 game's Cauchy likelihood ratio "
                         "is derived for the one-antenna link without a cell (model §6.1)")
    link_sweep = None
    if args.sweep_rx_antennas:
        link_sweep = {"rx_antennas": list(dict.fromkeys(args.sweep_rx_antennas)), "snr_dbs": args.sweep_snr_db or [args.snr_db]}
        for n_rx in link_sweep["rx_antennas"]:
            replace(config, rx_antennas=n_rx).validate(K=args.K, d=args.d)
    sweep = None
    if args.sweep_K or args.sweep_N or (args.sweep_snr_db and not args.sweep_rx_antennas):
        sweep = {
            "snr_dbs": args.sweep_snr_db or [args.snr_db],
            "Ks": args.sweep_K or [args.K],
            "Ns": args.sweep_N or [args.N],
            "rounds": args.rounds,
        }
        pairs = [(K, N) for K in sweep["Ks"] for N in sweep["Ns"] if K <= N]
        if not pairs:
            raise ValueError(f"sweep-K must hold a value ≤ some N of the sweep (K ≤ N; got sweep-K {sweep['Ks']}, "
                             f"N {sweep['Ns']}): every pair would be skipped and the sweep would be empty")
        for K, N in pairs:
            config.with_params("floras", N=N).validate(K=K)
        if config.rx_antennas != 1:
            raise ValueError(f"sweep-snr-db/sweep-K/sweep-N: the detection sweep covers csit = phase, which needs "
                             f"rx_antennas = 1 (got {config.rx_antennas}); use --sweep-rx-antennas for several antennas")

    from scenarios.config.resources import audit_terms, check_memory

    check_memory(audit_terms(K=args.K, N=args.N, L=args.L, d=args.d, sequences=args.sequences, threat=args.threat,
                             sweep_Ns=tuple(sweep["Ns"]) if sweep else (), trials=trials,
                             rounds=args.rounds if args.threat == "T2" else 0,
                             rx_antennas=max([config.rx_antennas, *(args.sweep_rx_antennas or [])])),
                 what="floras audit", option=args.memory_limit)
    check_json_path(args.json_path)
    resolved = resolve_key(args.key_hex, args.seed, key_file=args.key_file)
    key, key_note = resolved.key, resolved.note()
    from scenarios.audit.experiment import run_audit

    res = run_audit(config, threat=args.threat, K=args.K, d=args.d, trials=trials, rounds=args.rounds, seed=args.seed,
                    key=key, delta=args.delta, confidence=args.confidence, neighbour=args.neighbour,
                    false_alarm=args.false_alarm, persistence=tuple(args.persistence), sweep=sweep, link_sweep=link_sweep)
    res["key"] = key_note
    print(format_report(res), file=sys.stderr if args.json_path == "-" else sys.stdout)
    if args.json_path:
        write_json_atomic(args.json_path, res)
        if args.json_path != "-":
            print(f"\nwritten: {args.json_path}")
    return 0
