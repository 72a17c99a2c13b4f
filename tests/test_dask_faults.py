"""Faults of the dask executor: an unreachable scheduler, a cluster without workers, a worker
that dies mid-run, and a local cluster's processes after exit, an exception or SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from scenarios.errors import ConnectError
from scenarios.experiments.executors import DaskExecutor, NoWorkersError
from scenarios.experiments.outcome import RunOutcome
from scenarios.experiments.sweep import InProcessExecutor, load_sweep, run_sweep
from test_sweep import FakeRunner, _write, fake_loader

pytestmark = pytest.mark.faults
ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@dataclass(frozen=True)
class Item:
    name: str
    out_dir: str
    record: dict


def die_once(item: Item) -> RunOutcome:
    """Kills its worker process the first time (a marker file remembers), then succeeds."""
    marker = Path(item.out_dir) / f"{item.name}.died"
    if not marker.exists():
        marker.write_text("")
        os._exit(1)
    return RunOutcome(item.name, "done", out_dir=item.out_dir)


def die_always(item: Item) -> RunOutcome:
    os._exit(1)


def test_unreachable_scheduler_fails_within_the_timeout_naming_the_address():
    t0 = time.perf_counter()
    with pytest.raises(ConnectError) as info:
        DaskExecutor.connect("tcp://127.0.0.1:9", timeout=0.5)
    assert time.perf_counter() - t0 < 15
    msg = str(info.value)
    assert "\n" not in msg and "'tcp://127.0.0.1:9' within 0.5 s" in msg and "check --scheduler" in msg
    assert "--connect-timeout" in msg


def test_a_cluster_without_workers_stops_after_the_timeout_keeping_finished_runs(tmp_path):
    from distributed import Client, LocalCluster

    sweep = load_sweep(_write(tmp_path), quick=True)
    out = tmp_path / "res"
    run_sweep(sweep, out, executor=InProcessExecutor(), runner=FakeRunner(), loader=fake_loader, progress=False, echo=None)
    runs = sorted(p.name for p in out.iterdir() if p.is_dir())
    kept = {name: (out / name / "metrics.csv").read_text() for name in runs[1:]}
    import shutil

    shutil.rmtree(out / runs[0])  # this one must run again, on a cluster with no worker
    cluster = LocalCluster(n_workers=0, processes=False, dashboard_address=":0", silence_logs=40)
    executor = DaskExecutor(Client(cluster), cluster=cluster, no_workers_timeout=1.0, address="tcp://test")
    t0 = time.perf_counter()
    try:
        with pytest.raises(NoWorkersError) as info:
            run_sweep(sweep, out, executor=executor, runner=FakeRunner(), loader=fake_loader, progress=False, echo=None)
    finally:
        executor.close()
    assert time.perf_counter() - t0 < 15
    msg = str(info.value)
    assert "no worker for 1 s" in msg and "1 run(s) not started" in msg and "--no-workers-timeout" in msg
    assert isinstance(info.value, ConnectError)  # exit status 6
    assert {name: (out / name / "metrics.csv").read_text() for name in runs[1:]} == kept
    again = run_sweep(sweep, out, executor=InProcessExecutor(), runner=FakeRunner(), loader=fake_loader,
                      progress=False, echo=None)
    assert sorted(o.status for o in again) == ["done"] + ["skipped"] * 3


def test_a_worker_that_dies_mid_run_is_retried_once_elsewhere_else_recorded_as_failed(tmp_path):
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    executor = DaskExecutor.local(2)
    try:
        # one after the other: a run charged for its own worker's death only
        outcomes = {o.name: o for o in executor.map_unordered(die_once, [Item("once", str(tmp_path), {})])}
        outcomes.update({o.name: o for o in executor.map_unordered(die_always, [Item("always", str(tmp_path), {})])})
    finally:
        executor.close()
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert outcomes["once"].status == "done" and (tmp_path / "once.died").exists()
    failed = outcomes["always"]
    assert failed.status == "failed" and "KilledWorker" in failed.error["type"] + failed.error["message"]
    record = json.loads((tmp_path / ".always.partial" / "error.json").read_text())
    assert record["type"] == failed.error["type"]  # a rerun of the sweep retries the .partial run


SCRIPT = """
import sys, time, psutil
from scenarios.experiments.executors import DaskExecutor
ex = DaskExecutor.local(1)
kids = psutil.Process().children(recursive=True)
print(" ".join(str(p.pid) for p in kids), flush=True)
if sys.argv[1] == "raise":
    try:
        raise RuntimeError("boom")
    finally:
        ex.close()
time.sleep(120)
"""


def _alive(pids) -> list[int]:
    import psutil

    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


@pytest.mark.parametrize("how", ["sigterm", "raise"])
def test_local_cluster_processes_end_with_the_command(how):
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, how], env=ENV, stdout=subprocess.PIPE, text=True,
                            stderr=subprocess.DEVNULL)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert pids, "the local cluster started no process"
        if how == "sigterm":
            proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=60)
        assert rc == (143 if how == "sigterm" else 1)
        deadline = time.monotonic() + 15
        while _alive(pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _alive(pids) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_matched_with_an_unreachable_scheduler_fails_within_its_connect_timeout(tmp_path, capsys):
    from scenarios.cli.main import main
    from test_matched import ci_sweep

    t0 = time.perf_counter()
    rc = main(["matched", str(ci_sweep(tmp_path)), "--out", str(tmp_path / "res"), "--scheduler", "tcp://127.0.0.1:9",
               "--connect-timeout", "1", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 6 and err[-1].startswith("floras: error: cannot reach the dask scheduler at 'tcp://127.0.0.1:9' within 1 s")
    assert time.perf_counter() - t0 < 20


def test_sigterm_during_a_local_cluster_sweep_ends_its_workers_and_frees_the_directory(tmp_path):
    """The real command, as a background job would run it: SIGTERM while the runs train."""
    import psutil

    from test_sweep_safety import REAL_BASE

    (tmp_path / "base.toml").write_text(REAL_BASE.replace("rounds = 2", "rounds = 500"))
    (tmp_path / "s.toml").write_text('name = "long"\nbase = "base.toml"\nseeds = [0]\n')
    proc = subprocess.Popen([sys.executable, "-m", "scenarios", "sweep", str(tmp_path / "s.toml"), "--out",
                             str(tmp_path / "res"), "--workers", "1", "--no-progress"], env=ENV, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=(tmp_path / "stderr").open("w"), text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("floras sweep: 1 sweep(s), 1 runs, 1 local worker(s)"), line
        pids = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
        assert pids
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
        # multiprocessing's resource tracker (a separate process sharing stderr) may warn about the killed workers'
        # semaphores after the command's own last line: its two lines are not the command's
        lines = [ln for ln in (tmp_path / "stderr").read_text().strip().splitlines() if "resource_tracker" not in ln]
        assert lines[-1] == "floras: terminated; finished work is kept and a rerun resumes"
        deadline = time.monotonic() + 15
        while _alive(pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _alive(pids) == []
        from scenarios.store import DirectoryLock

        DirectoryLock(tmp_path / "res" / "long").acquire().release()  # the lock was released
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def sleep_then_done(item: Item) -> RunOutcome:
    time.sleep(30)
    return RunOutcome(item.name, "done", out_dir=item.out_dir)


def test_a_scheduler_that_dies_mid_sweep_is_one_connect_error_naming_it(tmp_path):
    """A separate scheduler process killed while runs are pending: a ConnectError naming its address, within
    seconds (not a FuturesCancelledError traceback listing every run)."""
    port = 8790 + os.getpid() % 100
    address = f"tcp://127.0.0.1:{port}"
    sched = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--port", str(port),
                              "--no-dashboard"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ex = None
    try:
        import socket

        deadline = time.monotonic() + 60  # the scheduler process starting; then the command's own connect timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the scheduler did not start"
                time.sleep(0.2)
        # the client tries to reconnect for its connect timeout before it gives up: the default 5 s, not 30
        ex = DaskExecutor.connect(address)
        items = [Item(f"r{i}", str(tmp_path), {}) for i in range(3)]  # no worker: every run stays pending
        runs = ex.map_unordered(sleep_then_done, items)
        time.sleep(1)
        sched.kill()
        t0 = time.perf_counter()
        with pytest.raises(ConnectError) as info:
            next(runs)
        assert time.perf_counter() - t0 < 30
        msg = str(info.value)
        assert "\n" not in msg and f"lost the dask scheduler at {address}" in msg and "3 run(s) unfinished" in msg
    finally:
        sched.kill()
        sched.wait()
        try:
            if ex is not None:
                ex.close()
        except Exception:
            pass


def _timed(item: Item) -> RunOutcome:
    """Sleeps ``record["seconds"]``; returns when it started and ended and on which worker."""
    from distributed import get_worker

    t0 = time.monotonic()
    time.sleep(item.record["seconds"])
    return RunOutcome(item.name, "done", out_dir=item.out_dir,
                      summary={"start": t0, "end": time.monotonic(), "worker": get_worker().address})


def test_no_more_runs_are_handed_to_the_scheduler_than_it_has_worker_threads(tmp_path):
    """Two one-thread workers, a 3 s run and four 0.3 s runs: at most two runs are with the scheduler at any time (the
    rest wait in the executor), so none can be queued behind the long run on its worker while the other is idle
    (measured before: a DDGauss run queued behind FLORAS on a 2-worker local cluster whose other worker had
    finished); the short runs all run on the other worker and end before the long one."""
    executor = DaskExecutor.local(2, processes=False)
    submit, in_flight = executor.client.submit, []

    def counting_submit(*args, **kwargs):
        fut = submit(*args, **kwargs)
        in_flight.append(fut)
        in_flight_now.append(sum(not f.done() for f in in_flight))
        return fut

    in_flight_now: list = []
    executor.client.submit = counting_submit
    items = [Item("long", str(tmp_path), {"seconds": 3.0})] + [Item(f"s{i}", str(tmp_path), {"seconds": 0.3})
                                                                for i in range(4)]
    try:
        out = {o.name: o.summary for o in executor.map_unordered(_timed, items)}
    finally:
        executor.close()
    assert len(in_flight_now) == 5 and max(in_flight_now) <= 2, in_flight_now
    assert set(out) == {"long", "s0", "s1", "s2", "s3"}
    long = out["long"]
    for name in ("s0", "s1", "s2", "s3"):
        assert out[name]["worker"] != long["worker"], name
        assert out[name]["end"] < long["end"], name


def test_a_worker_that_joins_gets_a_run_before_the_running_ones_end(tmp_path):
    """One one-thread worker and three 2.5 s runs; a second worker joins after 0.5 s: the executor re-reads the
    worker threads at every poll, so the second run starts on the new worker while the first still runs."""
    import threading

    executor = DaskExecutor.local(1, processes=False)
    items = [Item(f"r{i}", str(tmp_path), {"seconds": 2.5}) for i in range(3)]
    t0 = time.monotonic()
    timer = threading.Timer(0.5, lambda: executor.cluster.scale(2))
    timer.start()
    try:
        out = {o.name: o.summary for o in executor.map_unordered(_timed, items)}
    finally:
        timer.cancel()
        executor.close()
    starts = sorted(v["start"] - t0 for v in out.values())
    first_end = min(v["end"] for v in out.values()) - t0
    assert len({v["worker"] for v in out.values()}) == 2
    assert starts[1] < first_end - 0.5, (starts, first_end)


_RELEASE = None  # a threading.Event the in-process worker's run waits on


def _until_released(item: Item) -> RunOutcome:
    _RELEASE.wait(30)
    return RunOutcome(item.name, "done", out_dir=item.out_dir)


def _drop_a_sigterm() -> None:
    """The SIGTERM handler run where its raise is lost, as inside a garbage-collector callback."""
    import contextlib

    from scenarios.errors import Terminated

    with contextlib.suppress(Terminated):
        signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)


def test_a_sigterm_whose_raise_was_dropped_still_ends_the_sweep_with_143(tmp_path):
    """The handler runs wherever the main thread is; inside a GC callback its exception is printed and dropped (seen:
    distributed's GC diagnosis, the sweep then exited 0). A 30 s run and a SIGTERM dropped after 0.5 s: the next poll
    (at most 1 s) raises Terminated; one dropped after the last run ended is raised by close."""
    global _RELEASE
    import threading

    from scenarios.errors import Terminated

    _RELEASE = threading.Event()
    executor = DaskExecutor.local(1, processes=False)
    timer = threading.Timer(0.5, _drop_a_sigterm)
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(Terminated) as info:
            list(executor.map_unordered(_until_released, [Item("long", str(tmp_path), {})]))
        assert info.value.code == 143 and time.monotonic() - t0 < 10
    finally:
        timer.cancel()
        _RELEASE.set()
        executor.close()

    executor = DaskExecutor.local(1, processes=False)
    try:
        assert [o.status for o in executor.map_unordered(_timed, [Item("r", str(tmp_path), {"seconds": 0.1})])] == ["done"]
        _drop_a_sigterm()
    finally:
        with pytest.raises(Terminated):
            executor.close()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the previous handler is back
