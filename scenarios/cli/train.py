"""``floras train SCENARIO.toml [--rounds N] [--seed S] [--out DIR] [--resume]``.

Runs one federated-learning scenario (see :mod:`scenarios.config` and ``docs/fl.md``) into a
run directory (see :mod:`scenarios.runs.run`) with a progress bar, and prints a short summary:
accuracy in percent (the files keep the fraction), losses in nats, and the command's whole wall
time since the process started, split into the rounds, the setup, the ``tf.function`` tracing
and the rest (Python and TensorFlow start-up, loading, writing).
The run directory is locked while the run writes it; the FLORAS key comes from ``--key-file``,
``FLORAS_KEY_FILE``, ``FLORAS_KEY_HEX`` or ``run.key_hex`` (else the simulation-only key) and
is never written to it (see :mod:`scenarios.config.keys`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scenarios.cli.options import add_key_options, add_memory_option, parse_override  # noqa: F401  (--set, used below)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "train",
        help="run one federated-learning scenario",
        description="Run one federated-learning scenario (TOML) and write config.json, metrics.csv and DONE.",
    )
    p.add_argument("scenario", type=Path, help="scenario TOML file")
    p.add_argument("--rounds", type=int, default=None, help="override run.rounds")
    p.add_argument("--seed", type=int, default=None, help="override run.seed")
    p.add_argument("--out", type=Path, default=None, help="run directory (default runs/<scenario>-seed<S>)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="TABLE.KEY=VALUE",
                   help="override any scenario key (value parsed as TOML, e.g. --set phy.snr_db=0); repeatable")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print the full epsilon assumptions (default: one privacy line; config.json keeps them all)")
    add_key_options(p)
    add_memory_option(p)
    p.set_defaults(handler=run)



def run(args: argparse.Namespace) -> int:
    import time

    started = time.time()  # the fallback origin of the total time (the process start where it is known)
    from fl.federated import NonFiniteModelError
    from scenarios.config import load_scenario
    from scenarios.runs.run import run_scenario

    overrides = dict(parse_override(s) for s in args.overrides)
    if args.rounds is not None:
        overrides["run.rounds"] = args.rounds
    if args.seed is not None:
        overrides["run.seed"] = args.seed
    config = load_scenario(args.scenario, overrides)
    if args.key_hex is not None or args.key_file is not None:
        import dataclasses

        from scenarios.config.keys import resolve_key

        key = resolve_key(seed=config.run.seed, key_hex=args.key_hex, key_file=args.key_file)
        config = dataclasses.replace(config, run=dataclasses.replace(config.run, key_hex=key.key.hex()))
    out = args.out or Path("runs") / f"{args.scenario.stem}-seed{config.run.seed}"
    try:
        summary = run_scenario(config, out, resume=args.resume, progress=not args.no_progress,
                               memory_limit=args.memory_limit)
    except NonFiniteModelError as exc:
        print(f"floras: {exc} (in {out})", file=sys.stderr)
        return 1
    from scenarios.cli.output import percent, process_seconds, run_privacy_line, shorten, time_line
    from scenarios.store import read_config

    record = read_config(out)
    print(shorten(
        f"floras train: {summary['rounds']} rounds, scheme {config.phy.scheme}, "
        f"test accuracy {percent(summary['final_test_accuracy'])}, test loss {summary['final_test_loss']:.4f} nats, "
        f"train loss {summary['final_train_loss']:.4f} nats; run directory {out}", 200))
    timing = record.get("timing") if isinstance(record.get("timing"), dict) else {}
    print(time_line(total_s=process_seconds(started), rounds_s=float(summary["wall_time_s"]),
                    setup_s=None if args.resume else timing.get("setup_s"),
                    tracing_s=None if args.resume else timing.get("tracing_s")))
    print(run_privacy_line(record, out))
    if args.verbose:
        print(f"epsilon assumptions: {record.get('epsilon_assumptions', 'see config.json')}")
        for warning in (record.get("privacy_report") or {}).get("warnings", []) or []:
            print(f"epsilon warning: {warning}")
    return 0
