"""``floras pir``: costs of federated submodel learning with private information retrieval
against the naive scheme, and its verification (Kim & Lee; model §9.6).

Usage::

    floras pir --r 10 --s 1000 --N 2 [--field-bits 31] [--snr-db 20] [--g-th 0.01] [--json FILE | --json -]
    floras pir --r 2 --s 4 --N 2 --verify [--iterations 8] [--seed 0]

--r, --s, --N and --snr-db take several values: the table covers their grid. ``--verify`` (one
r, s, N; s a multiple of N^r, the Sun–Jafar subpacketization) runs the functional simulation and
the exhaustive privacy check; ``--json -`` writes the JSON to standard output instead of the table.
"""

from __future__ import annotations

import argparse
import json
import sys

from scenarios.cli.options import add_memory_option


def register(subparsers) -> None:
    p = subparsers.add_parser("pir", help="federated submodel learning with PIR: costs and verification",
                              description=__doc__.split("\n\n")[0],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--r", type=int, nargs="+", required=True, help="submodels (rows), ≥ 1")
    p.add_argument("--s", type=int, nargs="+", required=True, help="symbols per submodel, ≥ 1")
    p.add_argument("--N", type=int, nargs="+", required=True, help="non-colluding databases, ≥ 2")
    p.add_argument("--field-bits", type=int, default=31, help="q = largest prime below 2^B, B in [2, 62] (default 31)")
    p.add_argument("--snr-db", type=float, nargs="+", default=[20.0], help="SNR = P/sigma^2 in dB (default 20)")
    p.add_argument("--g-th", type=float, default=0.01, help="truncation threshold on |h|^2, > 0 (default 0.01)")
    p.add_argument("--verify", action="store_true", help="functional simulation and exhaustive privacy check")
    p.add_argument("--iterations", type=int, default=8, help="--verify: clients simulated (default 8)")
    p.add_argument("--seed", type=int, default=0, help="--verify: master seed in [0, 2**63)")
    p.add_argument("--json", dest="json_path", default=None, metavar="FILE", help="write JSON to FILE ('-': stdout)")
    add_memory_option(p)
    p.set_defaults(handler=run)


def run(args) -> int:
    from functools import partial

    from phy.digital.uplink import shannon_rate
    from phy.randomness import check_seed, stream
    from privacy.pir.report import (GUARANTEE, LINK_CONVENTION, cost_table, format_costs, format_verification,
                                    validate_request, verify_all)
    from scenarios.cli.options import write_json_atomic

    from scenarios.cli.options import check_json_path
    from scenarios.config.resources import check_memory, pir_terms

    # before the grid is validated point by point (a large grid is itself the cost)
    check_memory(pir_terms(rs=args.r, ss=args.s, Ns=args.N, snr_dbs=args.snr_db, verify=args.verify,
                           iterations=args.iterations), what="this floras pir", option=args.memory_limit)
    q = validate_request(rs=args.r, ss=args.s, Ns=args.N, field_bits=args.field_bits, snr_dbs=args.snr_db,
                         g_th=args.g_th, verify=args.verify, iterations=args.iterations)
    check_seed(args.seed)
    check_json_path(args.json_path)
    # privacy/ takes numbers and generators: the digital uplink's rate and the run's keyed streams come from phy
    rows = cost_table(rs=args.r, ss=args.s, Ns=args.N, q=q, snr_dbs=args.snr_db, g_th=args.g_th, rate=shannon_rate)
    payload = {"parameters": {"r": args.r, "s": args.s, "N": args.N, "field_bits": args.field_bits, "q": q,
                              "snr_db": args.snr_db, "g_th": args.g_th},
               "conventions": {"snr": "SNR = P/sigma^2 (model §5)", "guarantee": GUARANTEE, "link": LINK_CONVENTION},
               "rows": rows}
    if args.verify:
        payload["verify"] = verify_all(r=args.r[0], s=args.s[0], N=args.N[0], field_bits=args.field_bits,
                                       iterations=args.iterations, streams=partial(stream, args.seed))
    if args.json_path == "-":
        json.dump(payload, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    print(format_costs(rows))
    if args.verify:
        print(format_verification(payload["verify"]))
    if args.json_path:
        write_json_atomic(args.json_path, payload)
    return 0
