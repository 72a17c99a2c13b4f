"""A sweep's grid points calibrated before they are planned: all at once on the sweep's workers, a line per point.

Loading a point with a finite ``privacy.target_epsilon`` calibrates its noise key (model §10,
:mod:`scenarios.config.targets`), one point after another, silently. At population scale under ``pld`` that is
minutes per point. :func:`prefetch_calibrations` collects the distinct calibrations the sweeps' points need (one
per point: seed and learning rate cannot change ε), computes them through an executor's ``map_calls`` (a local
cluster's processes, a ``--scheduler``'s workers, or this process), prints a line as each finishes and hands the
answers to the loader's cache. Planning then loads every point as before and finds its calibration there; the
answers are what loading would have computed (a pure function of the request), so plans, ``config.json`` and
runs are unchanged. A request the workers could not answer (an error, a lost worker) is left to planning, which
computes it here and reports its error with the grid point's name; one whose calculation killed the workers that ran
it (dask's ``KilledWorker``, most often memory) is not: its answer is a
:class:`~scenarios.config.targets.CalibrationCrashed` that loading the point raises, rather than a calculation that
would kill this process too.

A rerun of a sweep skips its finished runs, but loading their points would calibrate them again (minutes each under
``pld``). :func:`seed_from_finished_runs` first hands the cache the calibration each finished run recorded in its
``config.json`` (``privacy.calibrated``), for a request only when every point that needs it has finished every seed
and their records agree: no run still to execute is ever given a stored record, and the finished runs' configurations
are the ones they ran.
"""

from __future__ import annotations

import time
from typing import Callable

__all__ = ["point_requests", "prefetch_calibrations", "seed_from_finished_runs"]


def _built(sweep, point, seed=None):
    """The point's scenario at ``seed`` (None: the sweep's first), built, not resolved (no calibration); ValueError:
    bad input."""
    from scenarios.config.loading import build_scenario_file

    return build_scenario_file(sweep.base, {**point.overrides, "run.seed": sweep.seeds[0] if seed is None else seed})


def point_requests(sweeps) -> list[tuple[tuple[str, float], list[str]]]:
    """The distinct calibrations the sweeps' points need and are not yet cached, in point order, each with the
    ``sweep/slug`` names of the points that share it (a tuned η is not applied: it cannot change the request). A
    point that does not build is skipped (planning reports it)."""
    return _requests(sweeps)[0]


def _requests(sweeps):
    """(:func:`point_requests`, the distinct requests of the points that the store on disk answered)."""
    import json

    from scenarios.config.targets import READ_FROM_DISK, answered, request_of

    requests: dict[tuple[str, float], list[str]] = {}
    stored: set[tuple[str, float]] = set()
    for sweep in sweeps:
        for point in sweep.points:
            try:
                first = request_of(_built(sweep, point))
                # a request that keeps the seed (analog Gaussian with imperfect CSI in a cell: each seed's drop) is
                # one per seed; any other is the same for every seed
                seeded = first is not None and "seed" in json.loads(first[0]).get("run", {})
                points = [first] + [request_of(_built(sweep, point, seed)) for seed in sweep.seeds[1:] if seeded]
            except ValueError:
                continue
            for request in dict.fromkeys(points):
                if request is None:
                    continue
                if answered(request):
                    if request in READ_FROM_DISK:
                        stored.add(request)
                    continue
                requests.setdefault(request, []).append(f"{sweep.name}/{point.slug}")
    return list(requests.items()), stored


def _describe(answer) -> str:
    from scenarios.config.calibration import Calibration, InfeasibleTarget

    if isinstance(answer, Calibration):
        if answer.parameter == "none":
            return f"no noise key (achieved ε = {answer.achieved_epsilon:g}, {answer.accountant.split(':')[0]})"
        return (f"{answer.parameter} = {answer.value:.6g} (achieved ε = {answer.achieved_epsilon:.4g}, "
                f"{answer.accountant.split(':')[0]})")
    if isinstance(answer, InfeasibleTarget):
        return f"infeasible: {answer}"
    from scenarios.config.targets import CalibrationCrashed

    if isinstance(answer, CalibrationCrashed):
        return f"crashed, not retried: {answer}"
    if isinstance(answer, ValueError):
        return f"error, left to planning: {answer}"
    return f"not computed ({type(answer).__name__}: {answer}); left to planning"


def prefetch_calibrations(sweeps, *, executor: Callable[[], object] | None = None, workers: int | None = 1,
                          echo: Callable[[str], None] | None = print, prefix: str = "floras matched") -> int:
    """Calibrate the sweeps' points that need it and keep the answers for loading; returns how many were computed.

    ``executor`` is called (once) only when two or more calibrations are due and ``workers`` ≥ 2 (None: a
    ``--scheduler``'s cluster): it returns the executor whose ``map_calls`` spreads them; otherwise they run here,
    one after another. ``echo`` gets a line before and one per finished calibration (``[i/n] sweep/slug: key =
    value (achieved ε, accountant); s since the start``).
    """
    from scenarios.config.calibration import Calibration, InfeasibleTarget
    from scenarios.config.targets import CalibrationCrashed, compute_calibration, store_calibration
    from scenarios.experiments.executors import InProcessExecutor

    from scenarios.store.calibrations import cache_dir

    requests, stored = _requests(sweeps)
    if stored and echo is not None:
        echo(f"{prefix}: {len(stored)} noise key(s) read from the calibration store {cache_dir()} (computed by an "
             "earlier command with this code; FLORAS_CALIBRATION_CACHE=off calibrates afresh)")
    if not requests:
        return 0
    parallel = executor is not None and (workers is None or workers >= 2) and len(requests) >= 2
    ex = executor() if parallel else InProcessExecutor()
    say = echo or (lambda line: None)
    where = ("in this process" if not parallel else "on the dask cluster's workers" if workers is None
             else f"on {workers} worker(s)")
    points = sum(len(names) for _, names in requests)
    say(f"{prefix}: calibrating {len(requests)} noise key(s) for {points} grid point(s) {where}")
    t0, stored = time.monotonic(), 0
    for done, (i, answer) in enumerate(ex.map_calls(compute_calibration, [r for r, _ in requests]), start=1):
        request, names = requests[i]
        if type(answer).__name__ == "KilledWorker":  # the calculation took its workers down: never rerun it here
            answer = CalibrationCrashed(
                f"privacy.target_epsilon = {request[1]:g}: the calibration of {names[0]} killed the worker processes "
                f"that ran it ({answer}), most likely for memory; it is not retried in this process, which it would "
                "kill too. Calibrate that point alone with `floras calibrate` to see where it fails, or use another "
                "privacy.accountant (e.g. \"rdp\")")
        if isinstance(answer, (Calibration, InfeasibleTarget, CalibrationCrashed)):
            store_calibration(request, answer, persist=True)
            stored += not isinstance(answer, CalibrationCrashed)  # computed answers only
        shared = f" (and {len(names) - 1} more point(s))" if len(names) > 1 else ""
        say(f"  [{done}/{len(requests)}] {names[0]}{shared}: {_describe(answer)}; {time.monotonic() - t0:.0f} s")
    return stored


def _stored_calibration(record: dict, request: tuple[str, float], where: str):
    """The :class:`Calibration` of a run's ``privacy.calibrated`` record, or None if it is not one for ``request``."""
    from scenarios.config.calibration import Calibration

    def num(x):
        return float("inf") if x == "inf" else x

    try:
        cal = Calibration(**{k: num(record[k]) for k in ("scheme", "parameter", "value", "target_epsilon",
                                                          "achieved_epsilon", "accountant", "threat_model", "delta",
                                                          "rounds")},
                          noise_multiplier=num(record.get("noise_multiplier")),
                          assumptions=(f"stored calibration of the finished run {where} (config.json)",))
    except (KeyError, TypeError):
        return None
    return cal if float(cal.target_epsilon) == float(request[1]) else None


def seed_from_finished_runs(jobs, *, runs_of: Callable[..., bool] | None = None,
                            echo: Callable[[str], None] | None = print, prefix: str = "floras matched") -> int:
    """Hand the loader's cache the calibrations of finished runs (module text); returns how many requests it answered.

    ``jobs``: (sweep, output directory) pairs, each sweep with its points' overrides as its runs are named (a tuned η
    applied). A request is answered only when every point of every job that needs it has every seed's run finished
    (``run_status == "done"``) and all their stored records are one and the same. ``runs_of(sweep, point, config)``
    is False for a point that never has runs of its own (a matched sweep's point reused from another SNR; ``config``
    built, not resolved): it is left out."""
    import json
    from pathlib import Path

    from scenarios.config.targets import calibration_request, store_calibration
    from scenarios.store import StorageError, read_config, run_status

    runs: dict[tuple[str, float], list[Path] | None] = {}
    for sweep, out in jobs:
        for point in sweep.points:
            try:
                config = _built(sweep, point)
                request = calibration_request(config)
            except ValueError:
                continue
            if request is None or (request in runs and runs[request] is None):
                continue
            if runs_of is not None and not runs_of(sweep, point, config):
                continue
            dirs = [Path(out) / sweep.run_name(point, seed) for seed in sweep.seeds]
            done = all(run_status(Path(out), d.name) == "done" for d in dirs)
            runs[request] = (runs.get(request, []) + dirs) if done else None
    answered = 0
    for request, dirs in runs.items():
        if not dirs:
            continue
        try:
            records = {json.dumps(read_config(d).get("config", {}).get("privacy", {}).get("calibrated"), sort_keys=True)
                       for d in dirs}
        except StorageError:
            continue
        cal = _stored_calibration(json.loads(records.pop()), request, dirs[0].name) if len(records) == 1 else None
        if cal is not None:
            store_calibration(request, cal)
            answered += 1
    if answered and echo:
        echo(f"{prefix}: {answered} noise key(s) taken from the config.json of finished runs (every point that needs "
             "them has finished every seed), not calibrated again")
    return answered
