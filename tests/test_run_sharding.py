"""One run's client chunks trained on dask workers (scenarios.runs.sharding): the same metrics.csv as in
process for 1 and 2 workers, the FLORAS key never submitted, a lost worker's chunks trained again, and a
cluster left without workers stopping the run with its finished rounds kept (resumable)."""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import pytest

from scenarios.config import load_scenario
from scenarios.experiments.executors import DaskExecutor, NoWorkersError
from scenarios.runs import sharding
from scenarios.runs.run import run_scenario

ROOT = Path(__file__).resolve().parents[1]
# K = 10 clients in chunks of 3: sizes 3, 3, 3, 1 (odd sizes: the padded path of fl.training), 2 rounds
OVERRIDES = {"training.client_chunk": 3, "run.rounds": 2, "run.checkpoint_every": 1}
CHUNKS_PER_ROUND = 4
KEY_HEX = "5eb1ab1e" * 8


def _config(**extra):
    return load_scenario(ROOT / "scenarios" / "examples" / "digits_quick.toml", {**OVERRIDES, **extra})


def _metrics(run_dir: Path) -> list[list[str]]:
    """metrics.csv without the wall-time column (the only one allowed to differ)."""
    rows = [line.split(",") for line in (run_dir / "metrics.csv").read_text().splitlines()]
    i = rows[0].index("wall_time_s")
    return [r[:i] + r[i + 1:] for r in rows]


def _executor(workers: int, *, no_workers_timeout: float = 120.0) -> DaskExecutor:
    from distributed import Client, LocalCluster

    # threads (processes=False): the same TensorFlow kernels as worker processes, without their start-up
    # time; a 2-worker process cluster was checked to give the same metrics.csv too (docs/fl.md)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=False, dashboard_address=":0",
                           silence_logs=40)
    return DaskExecutor(Client(cluster), cluster=cluster, no_workers_timeout=no_workers_timeout, address="tcp://test")


@pytest.fixture(scope="module")
def in_process(tmp_path_factory):
    out = tmp_path_factory.mktemp("inproc") / "run"
    run_scenario(_config(), out, progress=False)
    return _metrics(out)


CALLS: list[int] = []  # round index of every chunk trained on a worker (threads: one process)
DIED: list[int] = []


def counted_chunk(*args):
    CALLS.append(int(args[4]))
    return sharding.train_chunk(*args)


def dying_chunk(digest, config, w, ids, round_index):
    """train_chunk that closes its own worker (a lost worker) the first time it is given a round-2 chunk."""
    if round_index == 1 and not DIED:
        from distributed import get_worker

        DIED.append(int(ids[0]))
        worker = get_worker()
        worker.loop.add_callback(worker.close)
        time.sleep(2.0)  # the worker is gone before this task could report
    return sharding.train_chunk(digest, config, w, ids, round_index)


@pytest.fixture
def calls(monkeypatch):
    CALLS.clear()
    monkeypatch.setattr(sharding.ShardedTrainer, "task", staticmethod(counted_chunk))
    return CALLS


@pytest.fixture
def dying(monkeypatch):
    DIED.clear()
    monkeypatch.setattr(sharding.ShardedTrainer, "task", staticmethod(dying_chunk))
    return DIED


@pytest.mark.parametrize("workers", [1, 2])
def test_one_run_on_workers_writes_the_in_process_metrics(tmp_path, in_process, calls, workers):
    executor = _executor(workers)
    try:
        run_scenario(_config(), tmp_path / "run", progress=False, executor=executor)
        with pytest.raises(sharding.NestedClusterError, match="inside a dask worker"):
            executor.client.submit(sharding.refuse_nested, pure=False).result()  # a run on a worker shards nothing
    finally:
        executor.close()
    assert sorted(calls) == [0] * CHUNKS_PER_ROUND + [1] * CHUNKS_PER_ROUND  # every chunk trained on a worker
    assert _metrics(tmp_path / "run") == in_process  # FLORAS: any misordered chunk changes agg_error and V


def test_the_key_never_leaves_the_coordinator(tmp_path):
    executor = _executor(1)
    sent, names = [], []
    submit = executor.client.submit

    def spy_submit(fn, *args, **kwargs):
        names.append(fn.__name__)
        sent.append(pickle.dumps(args))
        return submit(fn, *args, **kwargs)

    executor.client.submit = spy_submit
    try:
        run_scenario(_config(**{"run.key_hex": KEY_HEX, "run.rounds": 1}), tmp_path / "run", progress=False,
                     executor=executor)
    finally:
        executor.close()
    assert names == ["warm_worker"] + ["train_chunk"] * CHUNKS_PER_ROUND  # the worker's warm-up, then one task per chunk
    key = bytes.fromhex(KEY_HEX)
    for payload in sent:
        assert KEY_HEX.encode() not in payload and KEY_HEX.upper().encode() not in payload and key not in payload
    assert KEY_HEX not in (tmp_path / "run" / "config.json").read_text()


@pytest.mark.faults
def test_a_worker_lost_mid_round_has_its_chunks_trained_again(tmp_path, in_process, dying):
    executor = _executor(2)
    try:
        run_scenario(_config(), tmp_path / "run", progress=False, executor=executor)
        left = len(executor.client.scheduler_info()["workers"])
    finally:
        executor.close()
    assert dying and left == 1  # a worker was really lost in round 2
    assert _metrics(tmp_path / "run") == in_process


@pytest.mark.faults
def test_no_worker_left_stops_the_run_keeping_its_finished_rounds(tmp_path, in_process, dying):
    executor = _executor(1, no_workers_timeout=1.0)
    t0 = time.perf_counter()
    try:
        with pytest.raises(NoWorkersError) as info:
            run_scenario(_config(), tmp_path / "run", progress=False, executor=executor)
    finally:
        executor.close()
    assert time.perf_counter() - t0 < 30
    msg = str(info.value)
    assert "no worker for 1 s" in msg and "middle of a round" in msg and "--resume" in msg
    assert len(_metrics(tmp_path / "run")) == 2  # header + round 1
    run_scenario(_config(), tmp_path / "run", resume=True, progress=False)  # continued in process
    assert _metrics(tmp_path / "run") == in_process


def test_an_unreachable_scheduler_stops_a_sharded_run_before_any_work_naming_the_in_process_fallback():
    from scenarios.errors import ConnectError

    with pytest.raises(ConnectError) as info:
        sharding.open_executor(scheduler="tcp://127.0.0.1:9", workers=None, connect_timeout=0.5)
    msg = str(info.value)
    assert "'tcp://127.0.0.1:9' within 0.5 s" in msg and "omit --scheduler to train in process" in msg
