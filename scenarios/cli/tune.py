"""``floras tune``: each case's learning rate chosen on a validation split (model §10; never the test set).

Example::

    floras tune scenarios/matched.toml --quick            # → results/quick/matched_tune/tune.json

For every case (scheme) of the sweep file, its grid point at ``--tune-at-epsilon`` (default 8)
and ``--tune-snr-db`` (default 20) runs once per η of ``--lr-grid`` with the accuracy measured on
a stratified validation split of the training data; the η with the best mean final validation
accuracy is chosen. ``tune.json`` holds the choice and the whole grid's results;
``floras matched --tuned FILE`` reuses it.

Before the runs start it prints their number and the predicted time, from the timing table that
``floras matched --predict-only`` and ``floras sweep --dry-run`` use
(:mod:`scenarios.experiments.matched_timing`); at the end it prints the ``floras matched``
command that uses the choices.
"""

from __future__ import annotations

import shlex
from pathlib import Path


def register(subparsers) -> None:
    from scenarios.cli.matched import add_cluster_options, add_tune_options

    p = subparsers.add_parser("tune", help="choose each scheme's learning rate on a validation split",
                              description=__doc__.split("\n\n")[0].replace("``", ""))
    p.add_argument("sweep_file", metavar="SWEEP.toml")
    add_cluster_options(p)
    add_tune_options(p)
    p.set_defaults(handler=run)


def predicted_seconds(tune, *, workers: int) -> tuple[float, float, int]:
    """(run time, wall time [s] on ``workers``, runs without a measured time) of the tuning sweep ``tune``.

    Each run: :func:`scenarios.experiments.matched_timing.run_seconds` of its data set, scheme,
    rounds, K, M and batch size (MLP runs on digits, MNIST and Fashion-MNIST are measured); the
    runs spread evenly over the workers, plus one worker start-up (``WORKER_START_S``). The
    scenario is built without calibrating its target ε (that changes no key the time depends on).
    """
    import tomllib

    from scenarios.config.scenario import build_scenario
    from scenarios.experiments.matched_timing import RUN_OVERHEAD_S, WORKER_START_S, run_seconds

    with Path(tune.base).open("rb") as fh:
        data = tomllib.load(fh)
    total, unknown = 0.0, 0
    for point in tune.points:
        for seed in tune.seeds:
            c = build_scenario(data, tune.run_overrides(point, seed))
            if c.data.name in RUN_OVERHEAD_S and c.model.name == "mlp":
                total += run_seconds(dataset=c.data.name, scheme=c.phy.scheme, rounds=c.run.rounds,
                                     K=c.training.clients_per_round, M=c.partition.clients, batch_size=c.training.batch_size)
            else:
                unknown += 1
    wall = total / max(1, workers) + (WORKER_START_S if tune.n_runs else 0.0)
    return total, wall, unknown


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def estimate_line(tune, *, workers: int) -> str:
    from scenarios.experiments.matched_timing import MEASURED_LOAD

    total, wall, unknown = predicted_seconds(tune, workers=workers)
    known = tune.n_runs - unknown
    if known == 0:
        return (f"floras tune: {tune.n_runs} run(s); no predicted time (the timing table has MLP runs on digits, "
                "MNIST and Fashion-MNIST only)")
    part = f" for {known} of them" if unknown else ""
    return (f"floras tune: predicted {_minutes(total)} of run time, about {_minutes(wall)} wall on {workers} worker(s)"
            f"{part} (timing table at load {MEASURED_LOAD})")


def next_command(args, tune_record: Path) -> str:
    """The ``floras matched`` command that runs the sweep with the chosen η (same --quick and --out)."""
    parts = ["floras", "matched", args.sweep_file]
    if args.quick:
        parts.append("--quick")
    if getattr(args, "out", None):
        parts += ["--out", str(args.out)]
    parts += ["--tuned", str(tune_record)]
    return " ".join(shlex.quote(p) for p in parts)


def _numbers(text: str, what: str) -> list[float]:
    """``--lr-grid`` / ``--tune-seeds``: a comma-separated list of numbers (the same rule as floras matched)."""
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{what} must be a comma-separated list of numbers (got {text!r})") from None


def run(args, *, runner=None) -> int:
    """``runner``: the training function of each run (tests pass a fake one)."""
    from scenarios.cli.matched import output_root, run_tuning, workers_of
    from scenarios.config.loading import build_scenario_file
    from scenarios.cli.options import make_executor
    from scenarios.cli.options import check_dask_options
    from scenarios.experiments.sweep_file import load_sweep
    from scenarios.experiments.tune import TUNE_RECORD, tune_sweep

    check_dask_options(args)
    sweep = load_sweep(args.sweep_file, quick=args.quick)
    workers, threads = workers_of(args)
    # the grid run_tuning builds, each case at its point at --tune-at-epsilon: built, not calibrated (the time does
    # not depend on the noise key; run_tuning calibrates on the workers and falls back to ε = ∞ where infeasible)
    grid = _numbers(args.lr_grid, "lr-grid") if args.lr_grid else ([0.03, 0.1, 0.3] if args.quick else [0.01, 0.03, 0.1, 0.3])
    seeds = tuple(int(s) for s in _numbers(args.tune_seeds, "tune-seeds"))
    tune, _ = tune_sweep(sweep, lr_grid=grid, at_epsilon=args.tune_at_epsilon, at_snr_db=args.tune_snr_db, seeds=seeds,
                         rounds=args.tune_rounds, validation_fraction=args.validation_fraction,
                         loader=build_scenario_file)
    print(estimate_line(tune, workers=max(1, workers)), flush=True)
    executor = make_executor(args, workers, threads)
    try:
        run_tuning(args, sweep, output_root(args), executor, threads, runner=runner)
    finally:
        executor.close()
    print(f"next: {next_command(args, output_root(args) / tune.name / TUNE_RECORD)}")
    return 0
