"""``floras tune``: each case's learning rate chosen on a validation split (model §10; never the test set).

Example::

    floras tune scenarios/matched.toml --quick            # → results/quick/matched_tune/tune.json

For every case (scheme) of the sweep file, its grid point at ``--tune-at-epsilon`` (default 8)
and ``--tune-snr-db`` (default 20) runs once per η of ``--lr-grid`` with the accuracy measured on
a stratified validation split of the training data; the η with the best mean final validation
accuracy is chosen. ``tune.json`` holds the choice and the whole grid's results;
``floras matched --tuned FILE`` reuses it.
"""

from __future__ import annotations


def register(subparsers) -> None:
    from scenarios.cli.matched import add_cluster_options, add_tune_options

    p = subparsers.add_parser("tune", help="choose each scheme's learning rate on a validation split",
                              description=__doc__.split("\n\n")[0].replace("``", ""))
    p.add_argument("sweep_file", metavar="SWEEP.toml")
    add_cluster_options(p)
    add_tune_options(p)
    p.set_defaults(handler=run)


def run(args) -> int:
    from scenarios.cli.matched import make_executor, output_root, run_tuning, workers_of
    from scenarios.experiments.sweep_file import load_sweep

    from scenarios.cli.options import check_dask_options

    check_dask_options(args)
    sweep = load_sweep(args.sweep_file, quick=args.quick)
    workers, threads = workers_of(args)
    executor = make_executor(args, workers, threads)
    try:
        run_tuning(args, sweep, output_root(args), executor, threads)
    finally:
        executor.close()
    return 0
