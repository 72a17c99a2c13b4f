"""``floras sweep``: run one or more sweep files (grid × seeds) resumably on dask.distributed.

Examples::

    floras sweep scenarios/fig4.toml                       # local cluster, results/fig4
    floras sweep scenarios/fig4.toml scenarios/fig5.toml --workers 2
    floras sweep scenarios/*.toml --quick                   # the CI set, results/quick/<name>
    floras sweep scenarios/snr_sweep.toml --scheduler tcp://10.0.0.5:8786

Rerunning the same command skips finished runs and resumes unfinished ones. The sweep file
format is documented in ``docs/experiments.md``. Before any cluster starts: every scenario is
validated, the memory of the concurrent runs is estimated against the limit, the output
directories are checked (writable, free space) and locked (a second sweep into one is
refused), and ``--scheduler`` must answer within ``--connect-timeout`` seconds.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from scenarios.cli_options import add_memory_option


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
    p.add_argument("--connect-timeout", type=float, default=5.0, metavar="SECONDS",
                   help="how long to wait for --scheduler to answer (default 5)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--key-file", default=None, metavar="FILE",
                   help="file holding the FLORAS key as hex digits, mode 600 (overrides FLORAS_KEY_FILE, "
                        "FLORAS_KEY_HEX and run.key_hex; default: simulation-only key derived from each seed)")
    add_memory_option(p)
    p.set_defaults(handler=run)


def run(args) -> int:
    from .sweep import DaskExecutor, InProcessExecutor, load_sweep, run_sweep

    cores = os.cpu_count() or 1
    if args.workers is not None and args.workers < 0:
        raise ValueError(f"--workers must be an integer ≥ 0 (got {args.workers})")
    if args.scheduler is not None and args.workers is not None:
        raise ValueError("--workers must not be given with --scheduler (the cluster decides its workers)")
    root = Path(args.out) if args.out else (Path("results") / "quick" if args.quick else Path("results"))
    sweeps = [load_sweep(f, quick=args.quick) for f in args.sweep_files]
    names = [s.name for s in sweeps]
    if len(set(names)) != len(names):
        raise ValueError(f"sweep names must be distinct, since each writes to <out>/<name> (got {names})")
    jobs = [(s, root / s.name) for s in sweeps]
    workers = cores if args.workers is None else args.workers
    threads = max(1, cores // max(1, workers)) if args.scheduler is None else 1
    if not (math.isfinite(args.connect_timeout) and args.connect_timeout > 0):
        raise ValueError(f"connect-timeout must be a finite number of seconds > 0 (got {args.connect_timeout})")
    if args.key_file is not None:
        from scenarios.keys import KEY_FILE_ENV, KEY_HEX_ENV, read_key_file

        read_key_file(args.key_file)  # checked here (mode, contents); the runs read it through the environment
        os.environ[KEY_FILE_ENV] = str(Path(args.key_file).absolute())
        os.environ.pop(KEY_HEX_ENV, None)
    if args.memory_limit is not None:
        from scenarios.resources import MEMORY_LIMIT_ENV, parse_size

        os.environ[MEMORY_LIMIT_ENV] = str(parse_size(args.memory_limit))  # the runs check it again
    # validate, estimate memory and disk, and lock the output before starting any cluster
    from .sweep import lock_sweep_dirs, validate_sweep

    configs = [c for s in sweeps for c in validate_sweep(s)]
    _check_resources(configs, jobs, concurrent=1 if workers == 0 else (workers if args.scheduler is None else 1),
                     memory_limit=args.memory_limit)
    locks = lock_sweep_dirs(jobs)
    try:
        if args.scheduler is not None:
            executor = DaskExecutor.connect(args.scheduler, timeout=args.connect_timeout)
        elif workers == 0:
            executor = InProcessExecutor()
        else:
            # worker processes inherit these before TensorFlow starts: no oversubscription
            for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TF_NUM_INTRAOP_THREADS"):
                os.environ[var] = str(threads)
            os.environ["TF_NUM_INTEROP_THREADS"] = "1"
            executor = DaskExecutor.local(workers)
    except BaseException:
        for lock in locks:
            lock.release(remove_directory_if_empty=True)
        raise
    total = sum(s.n_runs for s in sweeps)
    print(f"floras sweep: {len(sweeps)} sweep(s), {total} runs, "
          f"{'scheduler ' + args.scheduler if args.scheduler else f'{workers} local worker(s)'}; output under {root}")
    try:
        outcomes = run_sweep(jobs, executor=executor, progress=not args.no_progress, threads=threads, locks=locks)
    finally:
        executor.close()
    failed = [o for o in outcomes if o.status == "failed"]
    done = sum(o.status == "done" for o in outcomes)
    skipped = sum(o.status == "skipped" for o in outcomes)
    copied = sum(o.status == "copied" for o in outcomes)
    print(f"floras sweep: {done} run(s) finished, {copied} copied from identical runs, {skipped} already done, {len(failed)} failed"
          + (" (error.json in each .partial directory; rerun to retry)" if failed else ""))
    return 1 if failed else 0


def _check_resources(configs, jobs, *, concurrent: int, memory_limit) -> None:
    """Memory of the largest run × the runs that execute at once, and disk for every run (estimates)."""
    from scenarios.resources import check_memory, model_dimension, training_terms
    from scenarios.run_dir import _disk_estimate
    from scenarios.store import check_output_location

    if not configs:
        return
    terms = [training_terms(c) for c in configs]
    largest = max(terms, key=lambda t: sum(t.values()))
    check_memory(largest, what="the largest run of this sweep", option=memory_limit,
                 copies=max(1, min(concurrent, len(configs))))
    per_run = max(_disk_estimate(c, model_dimension(c)) for c in configs)
    for sweep, out in jobs:
        check_output_location(out, need_bytes=per_run * sweep.n_runs, what="sweep output directory")
