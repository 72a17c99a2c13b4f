"""Setting up one run: everything that can fail on bad input first (data, partition, model, the
ε column), then the aggregator, trainer and evaluators, traced once (:func:`build_run`).

The ε column (:class:`EpsilonColumn`) is the scheme's own accountant (its wiring row,
:mod:`scenarios.config.schemes`), or ∞ for a scheme whose row declares no privacy noise.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from phy.randomness import stream
from scenarios.config import ScenarioConfig
from scenarios.config.keys import ResolvedKey, warn_simulation_key

__all__ = ["EpsilonColumn", "poisson_assumption", "RunSetup", "build_run", "build_trainer", "client_data", "make_trainer", "model_spec",
           "quiet_tensorflow"]


def quiet_tensorflow() -> None:
    """TensorFlow's Python warnings (e.g. the retracing hint when one worker process trains several
    runs one after another, each with its own model) off the terminal, unless FLORAS_DEBUG is set."""
    import os

    if os.environ.get("FLORAS_DEBUG") not in (None, "", "0"):
        return
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")


def poisson_assumption(config: ScenarioConfig) -> str:
    """The sentence a Poisson-sampled run adds to its privacy assumptions (model §1)."""
    K, M = config.training.clients_per_round, config.partition.clients
    return (f"training run: Poisson sampling, q = K/M = {K}/{M} = {K / M:.6g}, add/remove, fixed denominator qM = {K} "
            "(each client joins a round independently with probability q; cohort size K_t in the metrics' cohort "
            "column; an empty cohort leaves the model unchanged)")


class EpsilonColumn:
    """ε after t rounds from the scheme's own accountant; ∞ for a scheme without privacy noise."""

    def __init__(self, config: ScenarioConfig, *, d: int, D: int):
        phy, pr = config.phy, config.privacy
        self._config, self._sizes = config, {"d": d, "D": D}
        self.accountant = config.privacy_accountant(d=d, D=D)
        if self.accountant is None:  # the scheme's wiring row declares no privacy noise
            self.assumptions = (
                f"scheme {phy.scheme!r} releases the aggregate without privacy noise: epsilon = inf "
                f"(threat model T1, {pr.relation} relation, {pr.level} level, delta = {pr.delta})"
            )
            if config.training.sampling == "poisson":
                self.assumptions += "; " + poisson_assumption(config)
            return
        # the assumptions of the run's final report (the attained order is that of the last round)
        self.assumptions = "; ".join(self.accountant.report(rounds=config.run.rounds).assumptions)
        if config.training.sampling == "poisson":
            self.assumptions += "; " + poisson_assumption(config)

    def final_report(self, rounds: int) -> dict:
        """The accountant's full report after ``rounds`` rounds (JSON-ready), or ε = inf; with client sampling
        also ``without_amplification``, ε against an observer that learns who was sampled
        (:func:`scenarios.runs.amplification.without_amplification`), and ``beyond_threat_model`` where the scheme's
        wiring row states an ε against an observer its threat model leaves out (``SchemeWiring.exposure``)."""
        if self.accountant is None:
            return {"epsilon": "inf", "assumptions": [self.assumptions], "rounds": rounds}
        from scenarios.config.schemes import wiring
        from scenarios.runs.amplification import without_amplification

        report = self.accountant.report(rounds=rounds).to_dict()
        unamplified = without_amplification(self._config, rounds=rounds, **self._sizes)
        if unamplified is not None:
            report["without_amplification"] = unamplified
        exposure = wiring(self._config.phy.scheme).exposure if self._config.training.mode == "fedavg" else None
        beyond = None if exposure is None else exposure(self._config, d=self._sizes["d"], rounds=rounds)
        if beyond is not None:  # an observer the threat model leaves out (the scheme's wiring row says which)
            report["beyond_threat_model"] = beyond
        return report

    def __call__(self, rounds: int) -> float:
        if self.accountant is None:
            return math.inf
        return float(self.accountant.epsilon(rounds=rounds))  # the idealised ε; the final report adds epsilon_link


@dataclass
class RunSetup:
    """What :func:`build_run` made for one run: the data and its partition, the sizes, the model,
    the ε column, the federated-averaging loop and its evaluators, and the setup and tracing times."""

    data: Any
    part: Any
    M: int
    K: int
    D: int
    steps: int
    spec: Any
    d: int
    epsilon: EpsilonColumn
    aggregator: Any
    used: Any
    n_sub: int
    eval_train: Any
    eval_test: Any
    fedavg: Any
    setup_s: float
    tracing_s: float
    personal: Any = None  # PriFedSync: the per-client evaluator (fl.prifedsync.PersonalEvaluator), else None


def _population(config: ScenarioConfig):
    """The FedProx population of ``[data.fedprox]`` (model §8): a :class:`fl.data.Dataset` holding its
    held-out test set and, as the training-loss evaluation set, up to ``training.train_eval_size`` training
    examples of the test clients; no partition (None); and the lazy client provider."""
    from fl.clients import LazyClients
    from fl.data import Dataset
    from fl.fedprox_synthetic import FedProxSynthetic

    f = config.data.fedprox
    population = FedProxSynthetic(seed=config.run.seed, M=config.partition.clients, alpha=f.alpha, beta=f.beta,
                                  features=f.features, classes=f.classes, size_mu=f.size_mu, size_sigma=f.size_sigma,
                                  min_size=f.min_size, max_size=f.max_size, test_clients=f.test_clients,
                                  test_per_client=f.test_per_client, shared_model=f.shared_model,
                                  validation_fraction=float(config.data.validation_fraction))
    x_train, y_train = population.train_sample(config.training.train_eval_size)
    source = population.source
    if config.data.evaluate_on == "validation":  # hyper-parameter selection never sees the test set (model §10)
        x_test, y_test = population.validation_set()
        source += "; evaluated on the held-out rows of the validation clients"
    else:
        x_test, y_test = population.test_set()
    data = Dataset("fedprox", x_train, y_train, x_test, y_test, population.num_classes, source)
    return data, None, LazyClients(population)


def client_data(config: ScenarioConfig):
    """The run's data set, its partition (None for a population), the lazy client provider (None for a
    partitioned data set) and D (every client's size, or a lower bound on them); errors on bad input."""
    from fl.data import load_dataset
    from fl.partition import make_partition

    seed = config.run.seed
    M = config.partition.clients
    if config.data.name == "fedprox":  # a population: clients generated when sampled (fl.fedprox_synthetic)
        data, part, clients = _population(config)
        D = clients.min_size  # a lower bound on every client's size (the accountant's worst case q = B/D)
        return data, part, clients, D
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
    part = make_partition(data.y_train, M, kind=config.partition.kind, seed=seed,
                          shards_per_client=config.partition.shards_per_client, alpha=config.partition.alpha)
    if config.partition.placement == "by-distance":  # labels tied to the drop's distances (model §8)
        part = place_by_distance(config, data.y_train, part)
    D = part.shape[1]
    if D < 1:
        raise ValueError(f"partition.clients = {M} leaves no examples per client ({data.y_train.size} training examples)")
    clients = None
    return data, part, clients, D


def place_by_distance(config: ScenarioConfig, labels, part):
    """``part`` with its rows given out in label order along the clients' distances in the cell's drop
    (:func:`fl.partition.place_by_order`; the drop of :class:`phy.cell.CellChannel`, the same master seed)."""
    import numpy as np

    from fl.partition import place_by_order
    from phy.cell import drop

    phy = config.phy
    distance, *_ = drop(config.run.seed, np.arange(part.shape[0]), radius=float(phy.cell_radius),
                        min_distance=float(phy.cell_min_distance))
    return place_by_order(labels, part, distance)


def model_spec(config: ScenarioConfig, data):
    """The model of ``[model]`` for ``data``'s inputs and classes."""
    from fl.models import build_model_spec

    return build_model_spec(config.model.name, input_shape=data.input_shape, num_classes=data.num_classes,
                            hidden=config.model.hidden, channels=config.model.channels, kernel_size=config.model.kernel_size)


def make_trainer(config: ScenarioConfig, spec, data, part, clients):
    """The run's :class:`fl.training.VectorizedTrainer` on the partitioned data (``part``) or the client
    provider (``clients``); the same on the coordinator and on a worker of a sharded run."""
    from fl.training import VectorizedTrainer

    t = config.training
    common = dict(batch_size=t.batch_size, lr=t.lr, local_epochs=t.local_epochs, local_steps=t.local_steps,
                  seed=config.run.seed, client_chunk=t.client_chunk)
    if clients is None:
        return VectorizedTrainer(spec, client_x=data.x_train[part], client_y=data.y_train[part], **common)
    return VectorizedTrainer(spec, clients=clients, **common)


def build_trainer(config: ScenarioConfig):
    """Only the trainer of ``config`` (data, partition, model): what a worker of a sharded run builds
    (:mod:`scenarios.runs.sharding`); no aggregator, no key, no evaluators."""
    data, part, clients, _ = client_data(config)
    quiet_tensorflow()
    return make_trainer(config, model_spec(config, data), data, part, clients)


def build_run(config: ScenarioConfig, key: ResolvedKey | None, *, setup_start: float) -> RunSetup:
    """Load and check everything (errors on bad input come before any training), then build and trace
    the training; ``setup_start`` is when the run's setup began (``setup_s`` counts from it)."""
    from fl.training import local_schedule

    seed = config.run.seed
    M, K = config.partition.clients, config.training.clients_per_round
    data, part, clients, D = client_data(config)
    steps, _ = local_schedule(D=D, batch_size=config.training.batch_size,
                              local_epochs=config.training.local_epochs, local_steps=config.training.local_steps)
    spec = model_spec(config, data)
    d = spec.d
    try:
        config.phy.validate(K=K, d=d)
    except ValueError as exc:
        raise ValueError(f"phy.{exc}") from None
    epsilon = EpsilonColumn(config, d=d, D=D)

    quiet_tensorflow()
    from fl.federated import FederatedAveraging
    from fl.training import Evaluator
    from phy.schemes import make_aggregator

    if key is not None and key.simulated:
        warn_simulation_key("this run")
    aggregator = make_aggregator(config.phy, K=K, d=d, seed=seed, key=key.key if key is not None else None,
                                 relation=config.privacy.relation)
    trainer = make_trainer(config, spec, data, part, clients)
    if clients is None:
        used = part.reshape(-1)
        n_sub = min(config.training.train_eval_size, used.size)
        subset = np.sort(used[stream(seed, "train-eval-subset").choice(used.size, size=n_sub, replace=False)])
        eval_train = Evaluator(spec, data.x_train[subset], data.y_train[subset])
    else:
        used = None
        n_sub = int(data.y_train.size)
        eval_train = Evaluator(spec, data.x_train, data.y_train)
    eval_test = Evaluator(spec, data.x_test, data.y_test)
    aggregator_for = None
    if config.training.sampling == "poisson":  # a round of K_t clients gets an aggregator built for K_t
        from phy.cohort import cohort_aggregators

        aggregator_for = cohort_aggregators(config.phy, K=K, d=d, seed=seed, key=key.key if key is not None else None,
                                            relation=config.privacy.relation)
        aggregator = aggregator_for(K)  # the run's description: a round of the expected cohort
    fedavg = FederatedAveraging(trainer=trainer, aggregator=aggregator, M=M, K=K, seed=seed,
                                server_momentum=config.training.server_momentum, sampling=config.training.sampling,
                                aggregator_for=aggregator_for)
    personal = None
    if config.training.mode == "prifedsync":
        fedavg, personal = _prifedsync(config, data, part, trainer, spec, aggregator, steps=steps)
    setup_s = time.perf_counter() - setup_start
    trace_start = time.perf_counter()  # tf.function tracing, kept out of wall_time_s
    if personal is None:
        trainer.warm_up(K)
    else:
        fedavg.trainer.warm_up(K)
        personal.warm_up()
    eval_train.warm_up()
    eval_test.warm_up()
    tracing_s = time.perf_counter() - trace_start

    return RunSetup(data=data, part=part, M=M, K=K, D=D, steps=steps, spec=spec, d=d, epsilon=epsilon,
                    aggregator=aggregator, used=used, n_sub=n_sub, eval_train=eval_train, eval_test=eval_test,
                    fedavg=fedavg, setup_s=setup_s, tracing_s=tracing_s, personal=personal)


def _prifedsync(config: ScenarioConfig, data, part, trainer, spec, aggregator, *, steps: int):
    """PriFedSync's loop (:class:`fl.prifedsync.PriFedSync`, on the FedAvg trainer's client data) and its
    per-client evaluator; the clients' test examples are those of the labels each holds in training."""
    from fl.prifedsync import PersonalEvaluator, PriFedSync, PriFedSyncTrainer

    t, seed = config.training, config.run.seed
    private = PriFedSyncTrainer(spec, clients=trainer.clients, batch_size=t.batch_size, steps=steps, lr=t.lr,
                                config=t.prifedsync, seed=seed, client_chunk=t.client_chunk)
    loop = PriFedSync(trainer=private, aggregator=aggregator, M=config.partition.clients, K=t.clients_per_round,
                      seed=seed, mix=t.prifedsync.mix)
    labels = [np.unique(data.y_train[row]) for row in part]
    personal = PersonalEvaluator(spec, x_test=data.x_test, y_test=data.y_test, client_labels=labels,
                                 per_client=t.prifedsync.client_test, seed=seed)
    return loop, personal
