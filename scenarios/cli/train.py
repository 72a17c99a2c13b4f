"""``floras train SCENARIO.toml [--rounds N] [--seed S] [--out DIR] [--resume]``.

Runs one federated-learning scenario (see :mod:`scenarios.config` and ``docs/fl.md``) into a
run directory (see :mod:`scenarios.runs.run`) with a progress bar, and prints a short summary:
accuracy in percent (the files keep the fraction), losses in nats, and the command's whole wall
time since the process started, split into the rounds, the setup, the ``tf.function`` tracing
and the rest (Python and TensorFlow start-up, loading, writing).
The run directory is locked while the run writes it; the FLORAS key comes from ``--key-file``,
``FLORAS_KEY_FILE``, ``FLORAS_KEY_HEX`` or ``run.key_hex`` (else the simulation-only key) and
is never written to it (see :mod:`scenarios.config.keys`).

``--scheduler ADDRESS`` (a running dask scheduler, as for ``floras sweep``) or ``--workers N`` (a local
cluster of N one-thread worker processes) trains each round's client chunks on dask workers
(:mod:`scenarios.runs.sharding`): the metrics are the same as in process; client sampling, the uplink's
draws and the key stay in this process.
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
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="train each round's client chunks on the workers of this running dask scheduler "
                        "(same metrics as in process; sampling, uplink draws and key stay here)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="train each round's client chunks on a local dask cluster of N worker processes")
    p.add_argument("--connect-timeout", type=float, default=5.0, metavar="SECONDS",
                   help="how long to wait for --scheduler to answer (default 5)")
    p.add_argument("--no-workers-timeout", type=float, default=120.0, metavar="SECONDS",
                   help="stop the run (finished rounds kept; --resume continues) when the cluster has had no "
                        "worker this long (default 120)")
    add_key_options(p)
    add_memory_option(p)
    p.set_defaults(handler=run)


def _check_sharding(args) -> None:
    """``--workers`` ≥ 1 and not with ``--scheduler``; finite timeouts > 0 (before any work)."""
    import math

    if args.scheduler is not None and args.workers is not None:
        raise ValueError("--workers must not be given with --scheduler (the cluster decides its workers)")
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be an integer ≥ 1 (got {args.workers}); omit it to train in this process")
    for name in ("connect_timeout", "no_workers_timeout"):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"--{name.replace('_', '-')} must be a finite number of seconds > 0 (got {value})")


def _open_executor(args):
    """The dask executor of a sharded run, or None (in process)."""
    if args.scheduler is None and args.workers is None:
        return None
    import os

    from scenarios.runs.sharding import open_executor

    if args.workers is not None:  # worker processes inherit these before TensorFlow starts: no oversubscription
        threads = str(max(1, (os.cpu_count() or 1) // args.workers))
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TF_NUM_INTRAOP_THREADS"):
            os.environ.setdefault(var, threads)
        os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
    return open_executor(scheduler=args.scheduler, workers=args.workers, connect_timeout=args.connect_timeout,
                         no_workers_timeout=args.no_workers_timeout)



def run(args: argparse.Namespace) -> int:
    import time

    started = time.time()  # the fallback origin of the total time (the process start where it is known)
    from fl.federated import NonFiniteModelError
    from scenarios.config import load_scenario
    from scenarios.runs.run import run_scenario

    _check_sharding(args)
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
    executor = _open_executor(args)
    try:
        summary = run_scenario(config, out, resume=args.resume, progress=not args.no_progress,
                               memory_limit=args.memory_limit, executor=executor)
    except NonFiniteModelError as exc:
        print(f"floras: {exc} (in {out})", file=sys.stderr)
        return 1
    finally:
        if executor is not None:
            executor.close()
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
