"""``floras sweep``: run one or more sweep files (grid × seeds) resumably on dask.distributed.

Examples::

    floras sweep scenarios/fig4.toml                       # local cluster, results/fig4
    floras sweep scenarios/fig4.toml scenarios/fig5.toml --workers 2
    floras sweep scenarios/*.toml --quick                   # the CI set, results/quick/<name>
    floras sweep scenarios/snr_sweep.toml --scheduler tcp://10.0.0.5:8786

Rerunning the same command skips finished runs and resumes unfinished ones. The sweep file
format is documented in ``docs/experiments.md``.
"""

from __future__ import annotations

import os
from pathlib import Path


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
    # validate before starting any cluster: run_sweep validates again, cheaply, before running
    from .sweep import validate_sweep

    for s in sweeps:
        validate_sweep(s)
    if args.scheduler is not None:
        executor = DaskExecutor.connect(args.scheduler)
    elif workers == 0:
        executor = InProcessExecutor()
    else:
        # worker processes inherit these before TensorFlow starts: no oversubscription
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TF_NUM_INTRAOP_THREADS"):
            os.environ[var] = str(threads)
        os.environ["TF_NUM_INTEROP_THREADS"] = "1"
        executor = DaskExecutor.local(workers)
    total = sum(s.n_runs for s in sweeps)
    print(f"floras sweep: {len(sweeps)} sweep(s), {total} runs, "
          f"{'scheduler ' + args.scheduler if args.scheduler else f'{workers} local worker(s)'}; output under {root}")
    try:
        outcomes = run_sweep(jobs, executor=executor, progress=not args.no_progress, threads=threads)
    finally:
        executor.close()
    failed = [o for o in outcomes if o.status == "failed"]
    done = sum(o.status == "done" for o in outcomes)
    skipped = sum(o.status == "skipped" for o in outcomes)
    print(f"floras sweep: {done} run(s) finished, {skipped} already done, {len(failed)} failed"
          + (" (error.json in each .partial directory; rerun to retry)" if failed else ""))
    return 1 if failed else 0
