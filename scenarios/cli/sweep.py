"""``floras sweep``: run one or more sweep files (grid × seeds) resumably on dask.distributed.

Examples::

    floras sweep scenarios/fig4.toml                       # local cluster, results/fig4
    floras sweep scenarios/fig4.toml scenarios/fig5.toml --workers 2
    floras sweep scenarios/*.toml --quick                   # the CI set, results/quick/<name>
    floras sweep scenarios/snr_sweep.toml --scheduler tcp://10.0.0.5:8786

Rerunning the same command skips finished runs and resumes unfinished ones. The sweep file
format is documented in ``docs/experiments.md``. Before any run: every scenario is built (an
unknown key is refused before anything starts), the points that set ``privacy.target_epsilon``
are calibrated on the sweep's workers, a line each (``scenarios.experiments.calibrate_points``;
the cluster is started for them when two or more are due and then runs the sweep), every
scenario is validated, the memory of the concurrent runs is estimated against the limit, the
output directories are checked (writable, free space) and locked (a second sweep into one is
refused), the run count is checked against ``--max-runs``, and ``--scheduler`` must answer
within ``--connect-timeout`` seconds. A cluster without a worker for ``--no-workers-timeout``
seconds stops the sweep (finished runs kept); a local cluster is closed on SIGTERM too.
"""

from __future__ import annotations

import os
from pathlib import Path

from scenarios.cli.options import (
    add_dask_options,
    add_memory_option,
    check_dask_options,
    check_distinct_names,
    check_run_count,
    make_executor,
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="run a grid of scenario overrides × seeds (resumable, dask.distributed)",
        description=__doc__.split("\n\n")[0].replace("``", ""),
    )
    p.add_argument("sweep_files", nargs="+", metavar="SWEEP.toml", help="sweep file(s); several share one cluster")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="address of a running dask scheduler (default: start a local cluster)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="local worker processes, one thread each (default: number of CPU cores; 0 runs in this process)")
    p.add_argument("--quick", action="store_true",
                   help="use each sweep file's [quick] variant (digits, few rounds; what CI runs)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="output root; each sweep writes to DIR/<name> (default: results, or results/quick with --quick)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print the full epsilon assumptions of every grid point (default: one line; summary.csv and "
                        "each run's config.json keep them all)")
    p.add_argument("--key-file", default=None, metavar="FILE",
                   help="file holding the FLORAS key as hex digits, mode 600 (overrides FLORAS_KEY_FILE, "
                        "FLORAS_KEY_HEX and run.key_hex; default: simulation-only key derived from each seed)")
    p.add_argument("--dry-run", action="store_true",
                   help="load and validate every sweep file, print the runs per sweep and a predicted time where the "
                        "timing table covers the setting; start nothing, write nothing")
    add_dask_options(p)
    add_memory_option(p)
    p.set_defaults(handler=run)


def run(args) -> int:
    from scenarios.experiments.sweep import load_sweep, run_sweep

    cores = os.cpu_count() or 1
    if args.workers is not None and args.workers < 0:
        raise ValueError(f"--workers must be an integer ≥ 0 (got {args.workers})")
    if args.scheduler is not None and args.workers is not None:
        raise ValueError("--workers must not be given with --scheduler (the cluster decides its workers)")
    check_dask_options(args)
    root = Path(args.out) if args.out else (Path("results") / "quick" if args.quick else Path("results"))
    sweeps = [load_sweep(f, quick=args.quick) for f in args.sweep_files]
    check_distinct_names(sweeps)
    check_run_count({s.name: s.n_runs for s in sweeps}, args.max_runs)
    jobs = [(s, root / s.name) for s in sweeps]
    workers = cores if args.workers is None else args.workers
    threads = max(1, cores // max(1, workers)) if args.scheduler is None else 1
    if args.key_file is not None:
        from scenarios.config.keys import KEY_FILE_ENV, KEY_HEX_ENV, read_key_file

        read_key_file(args.key_file)  # checked here (mode, contents); the runs read it through the environment
        os.environ[KEY_FILE_ENV] = str(Path(args.key_file).absolute())
        os.environ.pop(KEY_HEX_ENV, None)
    if args.memory_limit is not None:
        from scenarios.config.resources import MEMORY_LIMIT_ENV, parse_size

        os.environ[MEMORY_LIMIT_ENV] = str(parse_size(args.memory_limit))  # the runs check it again
    from scenarios.experiments.calibrate_points import prefetch_calibrations, seed_from_finished_runs
    from scenarios.experiments.executors import InProcessExecutor
    from scenarios.experiments.sweep import lock_sweep_dirs, validate_sweep
    from scenarios.store import run_status

    seed_from_finished_runs(jobs, prefix="floras sweep")  # a rerun: finished points' stored calibrations

    if args.dry_run:  # start nothing: the calibrations here, a line each
        prefetch_calibrations(sweeps, prefix="floras sweep --dry-run")
        configs = [c for s in sweeps for c in validate_sweep(s)]
        return _dry_run(sweeps, configs, jobs, workers=1 if workers == 0 else workers)
    # every point built (an unknown key is one line, before anything), then the grid's calibrations at once on the
    # workers (a line each; the cluster starts for them only when two or more are due and is kept for the runs),
    # then validation, the memory and disk estimates and the output locks, before any run
    built = _built(sweeps)
    started = []

    def executor_once():
        if not started:
            started.append(_start_executor(args, built, workers=workers, threads=threads))
        return started[0]

    try:
        prefetch_calibrations(sweeps, executor=executor_once, workers=None if args.scheduler else workers,
                              prefix="floras sweep")
        configs = [c for s in sweeps for c in validate_sweep(s)]
        _check_resources(configs, jobs, concurrent=1 if workers == 0 else (workers if args.scheduler is None else 1),
                         memory_limit=args.memory_limit)
        locks = lock_sweep_dirs(jobs)
    except BaseException:
        if started:
            started[0].close()
        raise
    try:  # nothing left to run (a rerun of a finished sweep): no cluster to start for the summary
        pending = started or any(run_status(out, s.run_name(p, seed)) != "done"
                                 for s, out in jobs for p in s.points for seed in s.seeds)
        executor = executor_once() if pending else InProcessExecutor()
    except BaseException:
        for lock in locks:
            lock.release(remove_directory_if_empty=True)
        raise
    total = sum(s.n_runs for s in sweeps)
    print(f"floras sweep: {len(sweeps)} sweep(s), {total} runs, "
          f"{'scheduler ' + args.scheduler if args.scheduler else f'{workers} local worker(s)'}; output under {root}")
    try:
        outcomes = run_sweep(jobs, executor=executor, progress=not args.no_progress, threads=threads, locks=locks,
                             echo=print if args.verbose else _terse_echo(jobs))
    finally:
        executor.close()
    failed = [o for o in outcomes if o.status == "failed"]
    done = sum(o.status == "done" for o in outcomes)
    skipped = sum(o.status == "skipped" for o in outcomes)
    copied = sum(o.status == "copied" for o in outcomes)
    print(f"floras sweep: {done} run(s) finished, {copied} copied from identical runs, {skipped} already done, {len(failed)} failed"
          + (" (error.json in each .partial directory; rerun to retry)" if failed else ""))
    return 1 if failed else 0


def _start_executor(args, built, *, workers: int, threads: int):
    """The sweep's executor (:func:`scenarios.cli.options.make_executor`), after the simulation-key warning: local
    workers inherit that it was given."""
    _warn_once(built)
    return make_executor(args, workers, threads)


def _built(sweeps):
    """Every run's scenario, built but neither calibrated nor validated (enough for the key warning); a point that
    does not build (an unknown key, a value of the wrong type) is refused in one line that names it."""
    from scenarios.config.loading import build_scenario_file
    from scenarios.experiments.sweep import validate_sweep

    return [c for s in sweeps for c in validate_sweep(s, loader=build_scenario_file)]


def _dry_run(sweeps, configs, jobs, *, workers: int) -> int:
    """The plan of ``floras sweep --dry-run``: runs per sweep and, where measured, the predicted time."""
    from scenarios.experiments.matched_timing import MEASURED_LOAD, RUN_OVERHEAD_S, WORKER_START_S, run_seconds

    start = 0
    total_s, unknown = 0.0, 0
    for sweep, (_, out) in zip(sweeps, jobs):
        mine = configs[start:start + sweep.n_runs]
        start += sweep.n_runs
        covered = [c for c in mine if c.data.name in RUN_OVERHEAD_S and c.model.name == "mlp"]
        seconds = sum(run_seconds(dataset=c.data.name, scheme=c.phy.scheme, rounds=c.run.rounds,
                                  K=c.training.clients_per_round, M=c.partition.clients,
                                  batch_size=c.training.batch_size) for c in covered)
        total_s += seconds
        unknown += len(mine) - len(covered)
        time = f"predicted {seconds:.0f} s of run time" if covered else "no predicted time"
        if covered and len(covered) < len(mine):
            time += f" for {len(covered)} of them"
        if len(covered) < len(mine):
            time += " (the timing table has MLP runs on digits, MNIST and Fashion-MNIST only)"
        print(f"{sweep.name}: {sweep.n_runs} run(s) ({len(sweep.points)} grid point(s) × {len(sweep.seeds)} seed(s)) "
              f"into {out}; {time}")
    runs = sum(s.n_runs for s in sweeps)
    wall = total_s / max(1, workers) + (WORKER_START_S if runs else 0.0)
    print(f"floras sweep --dry-run: {len(sweeps)} sweep(s), {runs} run(s) valid"
          + (f"; predicted {total_s:.0f} s of run time, about {wall:.0f} s wall on {workers} worker(s) "
             f"(timing table of scenarios.experiments.matched_timing, load {MEASURED_LOAD})" if runs > unknown else "")
          + "; nothing written")
    return 0


def _warn_once(configs) -> None:
    """The simulation-key warning, once for the whole sweep (not once per worker process)."""
    from scenarios.config.keys import resolve_key, warn_simulation_key

    for c in configs:
        run, phy = getattr(c, "run", None), getattr(c, "phy", None)
        if run is None or getattr(phy, "scheme", None) != "floras":
            continue
        if resolve_key(seed=run.seed, scenario_key_hex=run.key_hex).simulated:
            warn_simulation_key("this sweep")
            return


def _terse_echo(jobs):
    """``print`` with each sweep summary's ε-assumption block replaced by one line naming summary.csv."""
    from scenarios.cli.output import MAX_LINE, shorten, terse_summary
    from scenarios.store.runs import SUMMARY

    def echo(text: str) -> None:
        out = next((out for sweep, out in jobs if f"({out})" in text.split("\n", 1)[0]), None)
        if "\n" in text and out is not None:
            print(terse_summary(text, where=out / SUMMARY, privacy=_privacy_terms(out)))
        else:
            print(shorten(text, MAX_LINE))

    return echo


def _privacy_terms(out) -> str:
    """δ, threat model(s) and accountant(s) of the finished runs of the sweep in ``out`` (one short phrase)."""
    from scenarios.cli.output import shorten
    from scenarios.store import read_config, read_manifest, run_status

    seen: dict[str, list] = {"δ": [], "threat model": [], "accountant": []}
    try:
        for point in read_manifest(out)["points"]:
            for run in point["runs"]:
                if run_status(out, run["dir"]) != "done":
                    continue
                rep = read_config(out / run["dir"]).get("privacy_report") or {}
                if rep.get("threat_model") is None:
                    continue  # no privacy noise: ε = ∞ in the table
                for name, value in (("δ", rep.get("delta")), ("threat model", rep.get("threat_model")),
                                    ("accountant", rep.get("accountant"))):
                    text = f"{value:g}" if isinstance(value, float) else str(value)
                    if text not in seen[name]:
                        seen[name].append(text)
                break  # one seed per grid point is enough
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if not seen["δ"]:
        return ""
    return ", ".join(f"{name} {shorten(' / '.join(values), 40)}" for name, values in seen.items())


def _check_resources(configs, jobs, *, concurrent: int, memory_limit) -> None:
    """Memory of the largest run × the runs that execute at once, and disk for every run (estimates)."""
    from scenarios.config.resources import check_memory, model_dimension, training_terms
    from scenarios.runs.run_dir import disk_estimate
    from scenarios.store import check_output_location

    if not configs:
        return
    terms = [training_terms(c) for c in configs]
    largest = max(terms, key=lambda t: sum(t.values()))
    check_memory(largest, what="the largest run of this sweep", option=memory_limit,
                 copies=max(1, min(concurrent, len(configs))))
    per_run = max(disk_estimate(c, model_dimension(c)) for c in configs)
    for sweep, out in jobs:
        check_output_location(out, need_bytes=per_run * sweep.n_runs, what="sweep output directory")
