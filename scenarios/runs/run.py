"""Run one scenario into a directory: the contract between training, sweeps and figures.

Run directory
-------------
``config.json``
    The resolved scenario (``config``; ``run.key_hex`` replaced by ``"<redacted>"``), the seed, derived sizes (d, M, D, K, local steps),
    the data source and partition summary, the aggregator's description, the SNR definition
    (model §5), the FLORAS key's source and identifier (``key``: never the key itself), the definition of every metric, the ε
    assumptions (model §7.4), package versions and the project's git revision.
``metrics.csv``
    Header ``round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s,channel_uses``;
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
squared error ‖x̂ − x‖²/‖x‖²; ``V`` is FLORAS's conditional Cauchy noise variance; ``admitted``
is the number of clients the round's uplink admitted (the aggregator's ``admitted`` diagnostic:
channel inversion, the analog Gaussian baseline, DDGauss, sqSGD); ``epsilon`` is the ε (at
``privacy.delta``) spent after that round under threat model T1 for FLORAS, under each private
baseline's own threat model for the baselines (model §9), and ``inf`` for schemes that add no privacy
noise; ``wall_time_s`` is the cumulative training wall time since the run started (setup and
``tf.function`` tracing excluded; continued across resumes). The setup time (data, partition, model,
aggregator) and the tracing time (one warm-up call of the training and evaluation functions, which
does not change results) of a fresh start are recorded in ``config.json`` under ``timing``;
``channel_uses`` is the real channel uses of the round's uplink (model §5; the aggregator's
``channel_uses`` diagnostic).
"""

from __future__ import annotations

import io
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from phy.randomness import stream
from scenarios.errors import StorageError
from scenarios.config.keys import ResolvedKey, resolve_key, warn_simulation_key
from scenarios.store import (
    CHECKPOINT,
    DONE,
    DirectoryLock,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    check_output_location,
    remove_stale_temporaries,
    storage_error,
    verify_run,
    write_done,
)

from scenarios.config import ScenarioConfig
from scenarios.config.scheme_privacy import PRIVATE_BASELINES
from scenarios.runs.run_dir import (  # noqa: F401  (METRICS_HEADER, SNR_DEFINITION, read_metrics: kept importable from here)
    METRICS_HEADER,
    SNR_DEFINITION,
    TRAIN_LOSS_DEFINITION,
    _cell,
    _disk_estimate,
    _git_revision,
    _prepare_out_dir,
    _redacted,
    _summary,
    _versions,
    read_metrics,
)

__all__ = ["run_scenario", "METRICS_HEADER", "SNR_DEFINITION", "derive_key", "read_metrics"]


def derive_key(config: ScenarioConfig) -> ResolvedKey:
    """The FLORAS clients' shared key (model §4) with its source and identifier.

    By :func:`scenarios.config.keys.resolve_key`: ``FLORAS_KEY_FILE`` / ``FLORAS_KEY_HEX``, else
    ``run.key_hex``, else the simulation-only key of :func:`phy.assignment.simulation_key`
    (the one derivation from the seed every command uses; reproducible, NOT secret).
    """
    return resolve_key(seed=config.run.seed, scenario_key_hex=config.run.key_hex)


def _quiet_tensorflow() -> None:
    """TensorFlow's Python warnings (e.g. the retracing hint when one worker process trains several
    runs one after another, each with its own model) off the terminal, unless FLORAS_DEBUG is set."""
    import os

    if os.environ.get("FLORAS_DEBUG") not in (None, "", "0"):
        return
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")


# ------------------------------------------------------------------------------ privacy column
class _EpsilonColumn:
    """ε after t rounds from the scheme's own accountant (FLORAS and the private baselines); ∞ for
    schemes without privacy noise."""

    def __init__(self, config: ScenarioConfig, *, d: int, D: int):
        phy, pr = config.phy, config.privacy
        self.accountant = None
        if phy.scheme not in ("floras", "sqsgd", *PRIVATE_BASELINES):
            self.assumptions = (
                f"scheme {phy.scheme!r} releases the aggregate without privacy noise: epsilon = inf "
                f"(threat model T1, {pr.relation} relation, {pr.level} level, delta = {pr.delta})"
            )
            return
        self.accountant = config.privacy_accountant(d=d, D=D)
        # the assumptions of the run's final report (the attained order is that of the last round)
        self.assumptions = "; ".join(self.accountant.report(rounds=config.run.rounds).assumptions)

    def final_report(self, rounds: int) -> dict:
        """The accountant's full report after ``rounds`` rounds (JSON-ready), or ε = inf."""
        if self.accountant is None:
            return {"epsilon": "inf", "assumptions": [self.assumptions], "rounds": rounds}
        return self.accountant.report(rounds=rounds).to_dict()

    def __call__(self, rounds: int) -> float:
        if self.accountant is None:
            return math.inf
        return float(self.accountant.epsilon(rounds=rounds))  # the idealised ε; the final report adds epsilon_link


# ------------------------------------------------------------------------------ the run
def run_scenario(config: ScenarioConfig, out_dir: Path, *, resume: bool = False, progress: bool = True,
                 memory_limit: str | int | None = None) -> dict:
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
    """
    from scenarios.config.resources import check_memory, model_dimension, training_terms

    config = config.validate()
    out_dir = Path(out_dir)
    check_memory(training_terms(config), what="this training run", option=memory_limit)
    check_output_location(out_dir, need_bytes=_disk_estimate(config, model_dimension(config)), what="run directory")
    lock = DirectoryLock(out_dir, what="run directory").acquire()
    try:
        remove_stale_temporaries(out_dir)
        summary = _run_locked(config, out_dir, resume=resume, progress=progress)
    except BaseException:
        lock.release(remove_directory_if_empty=True)  # removes only a directory this run created, if still empty
        raise
    lock.release()
    return summary


def _run_locked(config: ScenarioConfig, out_dir: Path, *, resume: bool, progress: bool) -> dict:
    setup_start = time.perf_counter()
    config_dict = json.loads(json.dumps(config.to_dict()))
    key = derive_key(config) if config.phy.scheme == "floras" else None
    mode, ckpt = _prepare_out_dir(out_dir, config_dict, resume, key.key_id if key else None)
    rounds = config.run.rounds
    if mode == "done":
        return _summary(read_metrics(out_dir), rounds)

    # ---- everything that can fail on bad input, before any training
    from fl.data import load_dataset
    from fl.models import build_model_spec
    from fl.partition import make_partition, summarize_partition
    from fl.training import local_schedule

    seed = config.run.seed
    data = load_dataset(
        config.data.name,
        seed=seed,
        data_dir=config.data.dir,
        test_fraction=config.data.test_fraction,
        synthetic_samples=config.data.synthetic_samples,
        synthetic_features=config.data.synthetic_features,
        synthetic_classes=config.data.synthetic_classes,
    )
    if config.data.validation_fraction > 0:  # hyper-parameter selection never sees the test set (model §10)
        from fl.validation import carve_validation

        data = carve_validation(data, fraction=config.data.validation_fraction, seed=seed, evaluate_on=config.data.evaluate_on)
    M, K = config.partition.clients, config.training.clients_per_round
    part = make_partition(data.y_train, M, kind=config.partition.kind, seed=seed,
                          shards_per_client=config.partition.shards_per_client, alpha=config.partition.alpha)
    D = part.shape[1]
    if D < 1:
        raise ValueError(f"partition.clients = {M} leaves no examples per client ({data.y_train.size} training examples)")
    steps, _ = local_schedule(D=D, batch_size=config.training.batch_size,
                              local_epochs=config.training.local_epochs, local_steps=config.training.local_steps)
    spec = build_model_spec(config.model.name, input_shape=data.input_shape, num_classes=data.num_classes,
                            hidden=config.model.hidden, channels=config.model.channels, kernel_size=config.model.kernel_size)
    d = spec.d
    try:
        config.phy.validate(K=K, d=d)
    except ValueError as exc:
        raise ValueError(f"phy.{exc}") from None
    epsilon = _EpsilonColumn(config, d=d, D=D)

    _quiet_tensorflow()
    from fl.federated import FederatedAveraging
    from fl.training import Evaluator, VectorizedTrainer
    from phy.aggregation import make_aggregator

    if key is not None and key.simulated:
        warn_simulation_key("this run")
    aggregator = make_aggregator(config.phy, K=K, d=d, seed=seed, key=key.key if key is not None else None,
                                 relation=config.privacy.relation)
    trainer = VectorizedTrainer(spec, client_x=data.x_train[part], client_y=data.y_train[part],
                                batch_size=config.training.batch_size, lr=config.training.lr,
                                local_epochs=config.training.local_epochs, local_steps=config.training.local_steps, seed=seed)
    used = part.reshape(-1)
    n_sub = min(config.training.train_eval_size, used.size)
    subset = np.sort(used[stream(seed, "train-eval-subset").choice(used.size, size=n_sub, replace=False)])
    eval_train = Evaluator(spec, data.x_train[subset], data.y_train[subset])
    eval_test = Evaluator(spec, data.x_test, data.y_test)
    fedavg = FederatedAveraging(trainer=trainer, aggregator=aggregator, M=M, K=K, seed=seed)
    setup_s = time.perf_counter() - setup_start
    trace_start = time.perf_counter()  # tf.function tracing, kept out of wall_time_s
    trainer.warm_up(K)
    eval_train.warm_up()
    eval_test.warm_up()
    tracing_s = time.perf_counter() - trace_start

    metrics_path = out_dir / "metrics.csv"
    if mode == "resume":
        w = np.asarray(ckpt["w"], dtype=np.float64)
        start = int(ckpt["next_round"])
        elapsed = float(ckpt["elapsed"])
        metrics_text = str(ckpt["metrics"])
        if w.shape != (d,):
            raise ValueError(f"checkpoint in {out_dir} holds a model of dimension {w.shape} (scenario has d = {d}); choose another --out")
    else:
        w = spec.init(seed)
        start, elapsed = 0, 0.0
        metrics_text = ",".join(METRICS_HEADER) + "\n"
        record = {
            "config": _redacted(config_dict),
            "seed": seed,
            "derived": {
                "d": d, "M": M, "K": K, "D": D, "local_steps_per_round": steps,
                "dataset": data.name, "dataset_source": data.source,
                "n_train": int(data.y_train.size), "n_train_used": int(used.size), "n_test": int(data.y_test.size),
                "input_shape": list(data.input_shape), "num_classes": data.num_classes,
                "partition": summarize_partition(data.y_train, part, data.num_classes),
                "train_eval_size": int(n_sub),
                "C": config.phy.norm_bound(d),
            },
            "aggregator": aggregator.describe(),
            "snr_definition": SNR_DEFINITION,
            "key_source": key.source if key is not None else "not used",
            "key": key.record() if key is not None else None,
            "metrics": {
                "round": "1-based round number t+1 (streams use the 0-based index t)",
                "train_loss": TRAIN_LOSS_DEFINITION,
                "test_loss": "mean cross-entropy [nats] of the global model after the round on the whole test set",
                "test_accuracy": "fraction of the test set classified correctly by the global model after the round",
                "agg_error": "aggregator's normalized squared error |x_hat - x|^2 / |x|^2 of the sum of differentials",
                "V": "FLORAS conditional noise variance V = sum_j 1/w_j^2 of the round (empty for other schemes)",
                "admitted": "clients admitted by the round's uplink (channel inversion's truncation, the analog baseline's "
                            "and DDGauss's and sqSGD's admission; empty for schemes that report none)",
                "epsilon": f"epsilon at delta = {config.privacy.delta} after the round, under the scheme's threat model "
                           "(FLORAS: T1; baselines and sqSGD: privacy_report.threat_model; inf: no privacy noise)",
                "wall_time_s": "cumulative training wall time [s] since the run started (setup and tf.function tracing "
                               "excluded; see timing)",
                "channel_uses": "real channel uses of the round's uplink (model §5): FLORAS (d+1)L, analog d*L or d, "
                                "digital sum over admitted clients of ceil(bits_k/r_k)",
            },
            "timing": {
                "setup_s": setup_s,
                "tracing_s": tracing_s,
                "note": "wall_time_s excludes both: setup (data, partition, model, aggregator) and tf.function "
                        "tracing (one warm-up call of the training and evaluation functions, results unchanged)",
            },
            "epsilon_assumptions": epsilon.assumptions,
            "privacy_report": epsilon.final_report(rounds),
            "versions": _versions(),
            "git_revision": _git_revision(),
        }
        atomic_write_json(out_dir / "config.json", record)
    atomic_write_text(metrics_path, metrics_text)
    (out_dir / DONE).unlink(missing_ok=True)

    from tqdm import tqdm

    bar = tqdm(total=rounds, initial=start, desc=f"{config.phy.scheme} {data.name}", unit="round",
               disable=not (progress and sys.stderr.isatty()), leave=False)
    try:
        fh = open(metrics_path, "a", encoding="utf-8", newline="")
    except OSError as exc:
        raise storage_error(exc, "write", metrics_path) from None
    try:
        for t in range(start, rounds):
            t0 = time.perf_counter()
            w, outcome = fedavg.step(w, t)
            last = t == rounds - 1
            if (t + 1) % config.training.eval_every == 0 or last:
                train_loss, _ = eval_train.evaluate(w)
                test_loss, test_acc = eval_test.evaluate(w)
            else:
                train_loss = test_loss = test_acc = None
            eps = epsilon(t + 1)
            elapsed += time.perf_counter() - t0
            diag = outcome.diagnostics
            row = [t + 1, train_loss, test_loss, test_acc, outcome.agg_error,
                   diag.get("V") if config.phy.scheme == "floras" else None,
                   int(diag["admitted"]) if "admitted" in diag else None,
                   eps, elapsed, int(diag["channel_uses"]) if "channel_uses" in diag else None]
            line = ",".join(_cell(v) for v in row) + "\n"
            try:
                fh.write(line)
                fh.flush()
            except OSError as exc:
                raise storage_error(exc, "append to", metrics_path) from None
            metrics_text += line
            if (t + 1) % config.run.checkpoint_every == 0 or last:
                buf = io.BytesIO()
                np.savez(buf, w=w, next_round=np.int64(t + 1), elapsed=np.float64(elapsed), metrics=np.str_(metrics_text))
                atomic_write_bytes(out_dir / CHECKPOINT, buf.getvalue())
            bar.update(1)
            if test_acc is not None:
                bar.set_postfix(acc=f"{test_acc:.3f}", loss=f"{train_loss:.3f}")
    finally:
        try:
            fh.close()
        except OSError:
            pass  # the write error above is the one reported
        bar.close()
    # the complete metrics (from memory) replace the appended file; DONE only once verified
    atomic_write_text(metrics_path, metrics_text)
    problems = verify_run(out_dir, rounds=rounds, require_done=False)
    if problems:
        raise StorageError(f"run in {out_dir} is incomplete after its last round: {'; '.join(problems)}")
    (out_dir / CHECKPOINT).unlink(missing_ok=True)  # first: a kill before DONE leaves no stale checkpoint beside it
    write_done(out_dir)  # last: digests of config.json and metrics.csv, row count, columns
    return _summary(read_metrics(out_dir), rounds)
