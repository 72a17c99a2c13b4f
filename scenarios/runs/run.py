"""Run one scenario into a directory: the contract between training, sweeps and figures.

Run directory
-------------
``config.json``
    The resolved scenario (``config``; ``run.key_hex`` replaced by ``"<redacted>"``), the seed, derived sizes (d, M, D, K, local steps),
    the data source and partition summary, the aggregator's description, the SNR definition
    (model §5), the FLORAS key's source and identifier (``key``: never the key itself), the definition of every metric, the ε
    assumptions (model §7.4), package versions and the project's git revision.
``metrics.csv``
    Header ``round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s,channel_uses,``
    ``noise_energy,clipped_error,weight,cohort``;
    one row per finished round (round = 1, 2, …), appended and flushed every round. An empty
    cell means "does not apply" (V outside FLORAS, admitted for schemes whose aggregator reports no
    admission count, losses
    and accuracy in rounds skipped by ``training.eval_every``).
``checkpoint.npz``
    Written atomically every ``run.checkpoint_every`` rounds: the global model (float64), the
    next round index, the metrics rows so far and the elapsed wall time. Removed after
    ``DONE`` is written.
``DONE``
    Empty marker, written last, only when every round finished.

Every file is written through :mod:`scenarios.store` (unique temporary name, fsync,
:func:`os.replace`); the directory is locked for the whole run (a second writer is refused
with "in use by PID …"), and ``DONE`` is written only after ``config.json`` parses and
``metrics.csv`` holds one row per round (:func:`scenarios.store.verify_run`). A run whose setup
fails (bad input, memory limit) leaves no directory behind if it created it.

Columns: ``train_loss`` is the global model w_{t+1}'s mean cross-entropy [nats] on a fixed
training subset (``training.train_eval_size`` examples drawn once from the partitioned
training data by the stream ``(seed, "train-eval-subset")``); ``test_loss`` and
``test_accuracy`` are over the whole test set; ``agg_error`` is the aggregator's normalized
squared error ‖x̂ − x‖²/‖x‖² against the raw (unclipped) sum; ``V`` is FLORAS's conditional Cauchy noise variance; ``admitted``
is the number of clients the round's uplink admitted (the aggregator's ``admitted`` diagnostic:
channel inversion, the analog Gaussian baseline, DDGauss, sqSGD); ``epsilon`` is the ε (at
``privacy.delta``) spent after that round under threat model T1 for FLORAS, under each private
baseline's own threat model for the baselines (model §9), and ``inf`` for schemes that add no privacy
noise; ``wall_time_s`` is the cumulative training wall time since the run started (setup and
``tf.function`` tracing excluded; continued across resumes). The setup time (data, partition, model,
aggregator) and the tracing time (one warm-up call of the training and evaluation functions, which
does not change results) of a fresh start are recorded in ``config.json`` under ``timing``;
``channel_uses`` is the real channel uses of the round's uplink (model §5; the aggregator's
``channel_uses`` diagnostic); ``noise_energy`` is ‖x̂ − Σ_k x̃_k‖² in model units and ``clipped_error``
that over ‖Σ_k x̃_k‖², x̃_k the clipped (normalized, then de-normalized) differential (model §6.4);
``weight`` is FLORAS's receiver weight w (``phy.floras.receiver``; empty for other schemes); ``cohort`` the
clients sampled in the round (K, or the Poisson cohort K_t with ``training.sampling = "poisson"``, model §1).
The last four columns were appended after the others: a finished run with an older header still
verifies and reads; resuming an unfinished one is refused with a message (its rows lack them).
"""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import numpy as np

from scenarios.config import ScenarioConfig
from scenarios.config.keys import ResolvedKey, resolve_key
from scenarios.errors import StorageError
from scenarios.runs.record import metric_definitions, run_record
from scenarios.runs.rounds import train_rounds
from scenarios.runs.run_dir import (  # noqa: F401  (METRICS_HEADER, SNR_DEFINITION, read_metrics: kept importable from here)
    METRICS_HEADER,
    METRICS_HEADER_V2,
    SNR_DEFINITION,
    disk_estimate,
    prepare_out_dir,
    read_metrics,
    run_summary,
)
from scenarios.runs.setup import build_run
from scenarios.store import (
    CHECKPOINT,
    CLASSES,
    DONE,
    DirectoryLock,
    atomic_write_json,
    atomic_write_text,
    check_output_location,
    remove_stale_temporaries,
    verify_run,
    write_done,
)

__all__ = ["run_scenario", "METRICS_HEADER", "SNR_DEFINITION", "derive_key", "read_metrics"]


def derive_key(config: ScenarioConfig) -> ResolvedKey:
    """The FLORAS clients' shared key (model §4) with its source and identifier.

    By :func:`scenarios.config.keys.resolve_key`: ``FLORAS_KEY_FILE`` / ``FLORAS_KEY_HEX``, else
    ``run.key_hex``, else the simulation-only key of :func:`phy.assignment.simulation_key`
    (the one derivation from the seed every command uses; reproducible, NOT secret).
    """
    return resolve_key(seed=config.run.seed, scenario_key_hex=config.run.key_hex)


# ------------------------------------------------------------------------------ the run
def run_scenario(config: ScenarioConfig, out_dir: Path, *, resume: bool = False, progress: bool = True,
                 memory_limit: str | int | None = None, executor=None) -> dict:
    """Run the whole federated-learning job of ``config`` into ``out_dir``.

    Returns a summary: ``final_test_accuracy``, ``final_test_loss``, ``final_train_loss``,
    ``final_epsilon``, ``rounds``, ``wall_time_s``. With ``resume`` an interrupted run
    continues from its last checkpoint and yields the same metrics as an uninterrupted run
    (wall time aside); a finished run (``DONE``, verified) is returned without work; a
    directory whose ``config.json`` holds another scenario or key is an error. Without
    ``resume`` a non-empty ``out_dir`` is an error. Raises :class:`fl.federated.NonFiniteModelError`
    if the model diverges (results so far are kept).

    Before anything is written: the memory estimate (:mod:`scenarios.config.resources`; limit
    ``memory_limit``, else ``FLORAS_MEMORY_LIMIT``, else MemAvailable) and the output location
    (writable, free space) are checked; then ``out_dir`` is locked for the whole run
    (:class:`scenarios.errors.BusyError` if another process holds it).

    With ``executor`` (a :class:`scenarios.experiments.executors.DaskExecutor`) each round's client chunks
    are trained on its workers (:mod:`scenarios.runs.sharding`; same metrics as in process); the caller
    closes it.
    """
    from scenarios.config.resources import check_memory, model_dimension, training_terms

    config = config.validate()
    out_dir = Path(out_dir)
    if executor is not None and config.training.mode == "prifedsync":
        raise ValueError("training.mode = 'prifedsync' cannot be sharded over dask (its clients' personalised models "
                         "and Adam moments live in the coordinator): drop --scheduler / --workers")
    check_memory(training_terms(config), what="this training run", option=memory_limit)
    check_output_location(out_dir, need_bytes=disk_estimate(config, model_dimension(config)), what="run directory")
    lock = DirectoryLock(out_dir, what="run directory").acquire()
    try:
        remove_stale_temporaries(out_dir)
        summary = _run_locked(config, out_dir, resume=resume, progress=progress, executor=executor)
    except BaseException:
        lock.release(remove_directory_if_empty=True)  # removes only a directory this run created, if still empty
        raise
    lock.release()
    return summary


def _run_locked(config: ScenarioConfig, out_dir: Path, *, resume: bool, progress: bool, executor=None) -> dict:
    setup_start = time.perf_counter()
    config_dict = json.loads(json.dumps(config.to_dict()))
    from phy.schemes import scheme_spec

    key = derive_key(config) if scheme_spec(config.phy.scheme).needs_key else None
    mode, ckpt = prepare_out_dir(out_dir, config_dict, resume, key.key_id if key else None)
    rounds = config.run.rounds
    if mode == "done":
        return run_summary(read_metrics(out_dir), rounds)
    setup = build_run(config, key, setup_start=setup_start)
    if executor is not None:  # the chunks go to the workers; sampling, aggregation and the key stay here
        from scenarios.runs.sharding import ShardedTrainer

        setup.fedavg.trainer = ShardedTrainer(setup.fedavg.trainer, config, executor)
        trace_start = time.perf_counter()
        setup.fedavg.trainer.warm_up(setup.K)  # the workers' build and tracing: kept out of wall_time_s
        setup.tracing_s += time.perf_counter() - trace_start
    w, start, elapsed, metrics_text = _start(config, config_dict, setup, key, out_dir, mode=mode, ckpt=ckpt)
    class_text = _class_text(setup, ckpt if mode == "resume" else None)
    metrics_text, class_text = train_rounds(config, setup, out_dir, w=w, start=start, elapsed=elapsed,
                                            metrics_text=metrics_text, class_text=class_text, progress=progress)
    _finish(out_dir, metrics_text, rounds, class_text=class_text)
    return run_summary(read_metrics(out_dir), rounds)


def _start(config: ScenarioConfig, config_dict: dict, setup, key: ResolvedKey | None, out_dir: Path, *, mode: str, ckpt):
    """(model, first round, elapsed wall time, metrics so far): from the checkpoint on resume; else fresh,
    with ``config.json`` written. The metrics file is rewritten from them and ``DONE`` removed."""
    d, spec, seed = setup.d, setup.spec, config.run.seed
    metrics_path = out_dir / "metrics.csv"
    if mode == "resume" and config.training.mode == "prifedsync":
        raise ValueError(f"training.mode = 'prifedsync': the run in {out_dir} cannot be resumed (the clients' "
                         "personalised models and Adam moments are not checkpointed); start it again in another --out")
    if mode == "resume":
        w = np.asarray(ckpt["w"], dtype=np.float64)
        start = int(ckpt["next_round"])
        if config.training.server_momentum > 0.0 and start > 0:  # v_t continues where the run stopped
            if "velocity" not in ckpt:
                raise ValueError(f"checkpoint in {out_dir} holds no server momentum state (training.server_momentum = "
                                 f"{config.training.server_momentum:g}); start the run again in another --out")
            setup.fedavg.velocity = np.asarray(ckpt["velocity"], dtype=np.float64)
        elapsed = float(ckpt["elapsed"])
        metrics_text = str(ckpt["metrics"])
        header = tuple(metrics_text.split("\n", 1)[0].split(","))
        if header == METRICS_HEADER_V2:  # a run from before worst_class_accuracy: its rounds get an empty cell
            rows = metrics_text.splitlines()[1:]
            metrics_text = "".join(line + "\n" for line in [",".join(METRICS_HEADER), *(row + "," for row in rows)])
            header = METRICS_HEADER
        if header != METRICS_HEADER:
            raise ValueError(f"checkpoint in {out_dir} holds metrics with the columns {','.join(header)}; this version "
                             f"writes {','.join(METRICS_HEADER)} (noise_energy, clipped_error, weight, cohort, worst_class_accuracy appended), so the run "
                             "cannot be continued: start it again in another --out (its finished rounds stay readable)")
        if w.shape != (d,):
            raise ValueError(f"checkpoint in {out_dir} holds a model of dimension {w.shape} (scenario has d = {d}); choose another --out")
        _define_new_columns(out_dir, config, metrics_text, resumed_at=start + 1)
    else:
        w = spec.init(seed)
        start, elapsed = 0, 0.0
        metrics_text = ",".join(METRICS_HEADER) + "\n"
        atomic_write_json(out_dir / "config.json", run_record(config, config_dict, setup, key))
    atomic_write_text(metrics_path, metrics_text)
    (out_dir / DONE).unlink(missing_ok=True)
    return w, start, elapsed, metrics_text


def _define_new_columns(out_dir: Path, config: ScenarioConfig, metrics_text: str, *, resumed_at: int) -> None:
    """A resumed run whose ``config.json`` predates some of this version's columns (a checkpoint from before
    ``worst_class_accuracy``, or one that an earlier resume already upgraded): the record gains the current column
    definitions, which the finished run's check compares the header with, and ``metrics_added_on_resume`` with the
    first round that has a value in them (rounds before it have empty cells). Nothing else changes; a record that
    defines every column is left as it is."""
    record = json.loads((out_dir / "config.json").read_text(encoding="utf-8"))
    defined = record.get("metrics")
    missing = [c for c in METRICS_HEADER if not isinstance(defined, dict) or c not in defined]
    if not missing:
        return
    rows = list(csv.DictReader(io.StringIO(metrics_text)))
    valued = [int(r["round"]) for r in rows if any(r.get(c) for c in missing)]
    first = min(valued) if valued else resumed_at
    record["metrics"] = metric_definitions(config)
    record["metrics_added_on_resume"] = {
        "columns": missing, "first_round": first,
        "note": f"resumed at round {resumed_at} by a version that records these columns; rounds before {first} have "
                "empty cells, and class_accuracy.csv holds the rounds run by that version only"}
    atomic_write_json(out_dir / "config.json", record)


def _class_text(setup, ckpt) -> str:
    """The per-label accuracy rows so far: the checkpoint's (a resumed run), else the header alone (a fresh run, or a
    checkpoint from before the file existed: its earlier evaluations have no per-label record)."""
    if ckpt is not None and "class_accuracy" in ckpt:
        return str(ckpt["class_accuracy"])
    return ",".join(["round", *(f"label_{c}" for c in range(setup.data.num_classes))]) + "\n"


def _finish(out_dir: Path, metrics_text: str, rounds: int, *, class_text: str | None = None) -> None:
    """The complete metrics replace the appended file (and the per-label accuracies are written); checkpoint removed,
    then ``DONE`` once verified."""
    metrics_path = out_dir / "metrics.csv"
    atomic_write_text(metrics_path, metrics_text)
    if class_text is not None:
        atomic_write_text(out_dir / CLASSES, class_text)
    problems = verify_run(out_dir, rounds=rounds, require_done=False)
    if problems:
        raise StorageError(f"run in {out_dir} is incomplete after its last round: {'; '.join(problems)}")
    (out_dir / CHECKPOINT).unlink(missing_ok=True)  # first: a kill before DONE leaves no stale checkpoint beside it
    write_done(out_dir)  # last: digests of config.json and metrics.csv, row count, columns
