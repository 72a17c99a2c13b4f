"""``floras matched``: the matched comparison at equal (ε, δ): calibrate, predict, run (model §10).

Examples::

    floras matched scenarios/matched.toml --quick --tune            # digits, minutes (CI)
    floras matched scenarios/matched.toml scenarios/matched_xdev.toml scenarios/matched_budget.toml \
        scenarios/matched_snr.toml --tune                          # the full set (Fashion-MNIST)
    floras matched scenarios/matched.toml --predict-only            # run count and time, nothing trained
    floras matched scenarios/matched.toml --predict-only --no-calibrate   # the same without calibrating (seconds)
    floras matched scenarios/matched.toml --calibrate-only          # key per scheme, ε and accountant

Each grid point's ``privacy.target_epsilon`` is calibrated into its scheme's noise parameter when
the sweep is loaded; points a scheme cannot reach are listed as infeasible (``matched.json``)
and not run. With ``--tune`` the learning rate of each case is first chosen on a validation
split (``floras tune``, written to ``<out>/<first sweep>_tune/tune.json``) and reused for every
point of that case in every sweep file; ``--tuned FILE`` reuses an earlier choice. Before
anything runs the predicted run count and time are printed. Reruns resume.
"""

from __future__ import annotations

import os
from pathlib import Path

from scenarios.cli.options import (
    add_dask_options,
    check_dask_options,
    check_distinct_names,
    check_run_count,
    make_executor,
)


def add_cluster_options(p) -> None:
    p.add_argument("--quick", action="store_true", help="use each sweep file's [quick] variant (digits, minutes)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None, help="address of a running dask scheduler")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="local worker processes (default: CPU cores; 0 runs in this process)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="output root (default: results, or results/quick with --quick)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_dask_options(p)


def add_tune_options(p) -> None:
    p.add_argument("--lr-grid", default=None, metavar="η,η,…",
                   help="learning rates tried (default 0.01,0.03,0.1,0.3; quick 0.03,0.1,0.3)")
    p.add_argument("--tune-at-epsilon", default="8", metavar="ε", help="target ε of the tuning runs (default 8)")
    p.add_argument("--tune-snr-db", type=float, default=20.0, metavar="DB", help="SNR of the tuning runs (default 20)")
    p.add_argument("--tune-rounds", type=int, default=None, metavar="T", help="rounds of each tuning run (default: the sweep's)")
    p.add_argument("--tune-seeds", default="0", metavar="S,S,…", help="seeds of the tuning runs (default 0)")
    p.add_argument("--validation-fraction", type=float, default=0.1, help="share of the training data held out (default 0.1)")


def register(subparsers) -> None:
    p = subparsers.add_parser("matched", help="matched comparison at equal (ε, δ): calibrate, tune, predict, run",
                              description=__doc__.split("\n\n")[0].replace("``", ""))
    p.add_argument("sweep_files", nargs="+", metavar="SWEEP.toml")
    add_cluster_options(p)
    p.add_argument("--tune", action="store_true", help="choose each case's η on a validation split first")
    p.add_argument("--tuned", default=None, metavar="FILE", help="reuse the η of a tune.json")
    p.add_argument("--predict-only", action="store_true",
                   help="print the plan and predicted time; train nothing (the points' noise keys are calibrated "
                        "first, as for a real run, since the plan needs to know which are feasible, and kept in the "
                        "calibration store: a later run reads them)")
    p.add_argument("--no-calibrate", action="store_true",
                   help="with --predict-only: calibrate nothing; a point whose noise key is not in the calibration store "
                        "is planned as feasible and marked so (seconds instead of minutes; the run count is then an "
                        "upper bound)")
    p.add_argument("--calibrate-only", action="store_true",
                   help="print each scheme's calibrated key per target ε under every accountant of --accountants; run nothing")
    p.add_argument("--accountants", default="rdp,rdp-generic,pld", metavar="A,A,…",
                   help="accountants of --calibrate-only (default rdp,rdp-generic,pld)")
    add_tune_options(p)
    p.set_defaults(handler=run)


def output_root(args) -> Path:
    return Path(args.out) if args.out else (Path("results") / "quick" if args.quick else Path("results"))


def workers_of(args) -> tuple[int, int]:
    cores = os.cpu_count() or 1
    if args.workers is not None and args.workers < 0:
        raise ValueError(f"--workers must be an integer ≥ 0 (got {args.workers})")
    if args.scheduler is not None and args.workers is not None:
        raise ValueError("--workers must not be given with --scheduler (the cluster decides its workers)")
    workers = cores if args.workers is None else args.workers
    threads = max(1, cores // max(1, workers)) if args.scheduler is None else 1
    return workers, threads


def _floats(text: str, what: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{what} must be a comma-separated list of numbers (got {text!r})") from None


def prefetch_tuning_calibrations(sweep, executor) -> int:
    """The calibrations of ``sweep``'s points on ``executor``'s workers, a line each, so that loading them finds them in
    the loader's cache; returns how many were computed (none when they are cached already)."""
    from scenarios.experiments.calibrate_points import prefetch_calibrations

    threads_now = getattr(executor, "worker_threads", None)  # a dask cluster's worker threads; in process: none
    return prefetch_calibrations([sweep], executor=lambda: executor, workers=threads_now() if threads_now else 0,
                                 prefix="floras tune")


def run_tuning(args, sweep, root: Path, executor, threads: int, *, runner=None) -> dict[str, float]:
    """Run the learning-rate grid of ``sweep``'s cases; write and return the choices (``runner``: tests)."""
    from scenarios.experiments.calibrate_points import seed_from_finished_runs
    from scenarios.store import atomic_write_json, summarize
    from scenarios.experiments.sweep import run_sweep
    from scenarios.experiments.tune import (TUNE_RECORD, check_tuning_grid, choose_lr, tune_record, tune_sweep,
                                            tuning_points)

    grid = _floats(args.lr_grid, "lr-grid") if args.lr_grid else ([0.03, 0.1, 0.3] if args.quick else [0.01, 0.03, 0.1, 0.3])
    seeds = tuple(int(s) for s in _floats(args.tune_seeds, "tune-seeds"))
    at_eps = args.tune_at_epsilon
    check_tuning_grid(grid, args.validation_fraction)  # before any calibration
    # a rerun: a case whose tuning runs have all finished takes their stored calibration (its runs as named when its
    # point at --tune-at-epsilon is feasible; nothing is loaded to name them)
    named, _ = tune_sweep(sweep, lr_grid=grid, at_epsilon=at_eps, at_snr_db=args.tune_snr_db, seeds=seeds,
                          rounds=args.tune_rounds, validation_fraction=args.validation_fraction, loader=lambda *a: None)
    seed_from_finished_runs([(named, root / named.name)], prefix="floras tune")
    # each case's point at --tune-at-epsilon (picking it loads it; η cannot change ε) on the workers
    prefetch_tuning_calibrations(tuning_points(sweep, at_epsilon=at_eps, at_snr_db=args.tune_snr_db), executor)
    tune, tuned_at = tune_sweep(sweep, lr_grid=grid, at_epsilon=at_eps, at_snr_db=args.tune_snr_db, seeds=seeds,
                                rounds=args.tune_rounds, validation_fraction=args.validation_fraction)
    out = root / tune.name
    print(f"floras tune: {len(tune.points)} case × η point(s) × {len(seeds)} seed(s) = {tune.n_runs} runs; output {out}")
    # the runs share their case's calibration unless --tune-rounds changes ε: those on the workers too
    prefetch_tuning_calibrations(tune, executor)
    run_sweep([(tune, out)], executor=executor, runner=runner, progress=not args.no_progress, threads=threads, echo=None)
    choices = choose_lr(summarize(out))
    atomic_write_json(out / TUNE_RECORD, tune_record(tune, choices, tuned_at, at_snr_db=args.tune_snr_db,
                                                    validation_fraction=args.validation_fraction))
    for label, c in choices.items():
        grid_txt = ", ".join(f"{g['lr']:g}: {100 * g['validation_accuracy']:.1f} %" for g in c["grid"])
        edge = ("; at the edge of the grid: the best η may lie outside it, extend --lr-grid" if c.get("at_edge") else "")
        print(f"  {label}: η = {c['lr']} (validation accuracy at ε = {tuned_at.get(label)}; {grid_txt}){edge}")
    print(f"floras tune: choices in {out / TUNE_RECORD}")
    return {label: c["lr"] for label, c in choices.items() if c["lr"] is not None}


def calibrate_only(args, sweeps) -> int:
    """The accountant-sensitivity table of every sweep (calibration only, no training)."""
    from scenarios.config import ACCOUNTANTS

    from scenarios.experiments.matched_accountants import accountant_rows, format_accountant_table

    accs = tuple(a.strip() for a in args.accountants.split(",") if a.strip())
    bad = [a for a in accs if a not in ACCOUNTANTS]
    if not accs or bad:
        raise ValueError(f"--accountants must be a comma-separated list of {', '.join(ACCOUNTANTS)} (got {args.accountants!r})")
    for s in sweeps:
        print(format_accountant_table(s, accountant_rows(s, accs), accs))
        print()
    return 0


def run(args) -> int:
    from scenarios.experiments.tune import read_tuned

    if args.tune and args.tuned:
        raise ValueError("--tune and --tuned exclude each other (tune now, or reuse a tune.json)")
    if getattr(args, "no_calibrate", False) and not args.predict_only:
        raise ValueError("--no-calibrate plans without calibrating, which only --predict-only does (a run needs every "
                         "noise key): add --predict-only, or remove --no-calibrate")
    check_dask_options(args)
    workers, threads = workers_of(args)
    tuned = read_tuned(args.tuned) if args.tuned else None  # a bad record is refused before the sweeps load
    cluster: dict = {}
    if args.scheduler is not None and not (args.predict_only or getattr(args, "calibrate_only", False)):
        # before the sweeps are loaded and calibrated: a scheduler that does not answer fails in --connect-timeout
        cluster["executor"] = make_executor(args, workers, threads)
    try:
        outcomes = _run(args, cluster, tuned, workers, threads)
    finally:
        if cluster.get("executor") is not None:
            cluster["executor"].close()
    if outcomes is None:
        return 0
    failed = [o for o in outcomes if o.status == "failed"]
    print(f"floras matched: {sum(o.status == 'done' for o in outcomes)} run(s) finished, "
          f"{sum(o.status == 'copied' for o in outcomes)} copied from identical runs, "
          f"{sum(o.status == 'skipped' for o in outcomes)} already done, {len(failed)} failed")
    return 1 if failed else 0


def _run(args, cluster: dict, tuned, workers: int, threads: int):
    """Load, plan and run; the executor is made (once) in ``cluster``. None: nothing was to run."""
    from scenarios.experiments.matched import (
        MATCHED_RECORD,
        count_identical,
        format_plan,
        matched_record,
        plan_sweep,
        predict,
    )
    from scenarios.store import atomic_write_json
    from scenarios.experiments.executors import InProcessExecutor
    from scenarios.experiments.sweep import lock_sweep_dirs, run_sweep
    from scenarios.experiments.sweep_file import load_sweep

    def executor():
        if cluster.get("executor") is None:
            cluster["executor"] = make_executor(args, workers, threads)
        return cluster["executor"]

    root = output_root(args)
    sweeps = [load_sweep(f, quick=args.quick) for f in args.sweep_files]
    check_distinct_names(sweeps)
    check_run_count({s.name: s.n_runs for s in sweeps}, args.max_runs)
    if getattr(args, "calibrate_only", False):
        calibrate_only(args, sweeps)
        return None
    if not args.predict_only:  # before tuning or calibration work: a file or a source folder as --out is refused
        from scenarios.experiments.matched import with_tuned_lr
        from scenarios.experiments.sweep_dirs import precheck_sweep_dir
        from scenarios.store import check_output_location

        for s in sweeps:
            check_output_location(root / s.name, what="sweep output directory")
            # a folder of another sweep, before minutes of calibration; the runs as the tuned η will name them
            precheck_sweep_dir(with_tuned_lr(s, tuned), root / s.name, runs_named=not args.tune)
    if args.tune and not args.predict_only:
        tuned = run_tuning(args, sweeps[0], root, executor(), threads)
    from scenarios.experiments.calibrate_points import prefetch_calibrations, seed_from_finished_runs
    from scenarios.experiments.matched import reused_at_snr, with_tuned_lr

    # points whose runs have all finished: their stored calibrations; the others' at once on the workers, a line
    # each; planning then finds them cached
    seed_from_finished_runs([(with_tuned_lr(s, tuned), root / s.name) for s in sweeps],
                            runs_of=lambda s, point, config: not reused_at_snr(s, point, config.phy.scheme))
    calibrate = not getattr(args, "no_calibrate", False)
    if calibrate:
        prefetch_calibrations(sweeps, executor=executor, workers=None if args.scheduler else workers)
    plans = []
    for s in sweeps:
        feasible, planned = plan_sweep(s, tuned_lr=tuned, calibrate=calibrate)
        pred = predict(planned, seeds=len(s.seeds), workers=workers if args.scheduler is None else 1)
        plans.append((s, feasible, planned, pred))
    from scenarios.experiments.sweep_dirs import finished_runs

    finished = [finished_runs(feasible, planned, root / s.name) for s, feasible, planned, _ in plans]
    done = frozenset().union(*(runs for runs, _ in finished))
    for i, (copies, seconds) in enumerate(count_identical([(p[0], p[2]) for p in plans], finished=done)):
        s, feasible, planned, pred = plans[i]
        plans[i] = (s, feasible, planned, pred.without_copies(copies, seconds).without_finished(
            len(finished[i][0]), finished[i][1]))
        print(plans[i][3].line(s.name))
        print(format_plan(planned))
    total = sum(p[3].wall_seconds for p in plans)
    print(f"floras matched: predicted total {total / 60:.1f} min wall ({sum(p[3].runs for p in plans)} runs)")
    pending = sum(bool(q.pending) and q.status == "feasible" for p in plans for q in p[2])
    if pending:
        print(f"floras matched: {pending} grid point(s) not calibrated (--no-calibrate: their noise keys are not in the "
              "calibration store), planned as feasible, so the run count and time are upper bounds; without "
              "--no-calibrate (or with --calibrate-only) they are computed and kept in the store")
    if args.predict_only:
        return None
    jobs = [(feasible, root / s.name) for s, feasible, _, _ in plans]
    locks = lock_sweep_dirs(jobs)
    try:
        for (s, feasible, planned, pred), (_, out) in zip(plans, jobs):
            atomic_write_json(out / MATCHED_RECORD, matched_record(s, planned, tuned=tuned, prediction=pred))
        # nothing left to run (every run finished or copied): no cluster to start for the summary
        pending = sum(p[3].runs - p[3].copied - p[3].finished for p in plans)
        ex = executor() if pending or cluster.get("executor") is not None else InProcessExecutor()
    except BaseException:
        for lock in locks:
            lock.release()
        raise
    return run_sweep(jobs, executor=ex, progress=not args.no_progress, threads=threads, locks=locks)
