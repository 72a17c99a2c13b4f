"""The record a fresh run writes as ``config.json`` (see :mod:`scenarios.runs.run` for the run directory)."""

from __future__ import annotations

from scenarios.config import ScenarioConfig
from scenarios.config.keys import ResolvedKey
from scenarios.runs.run_dir import SNR_DEFINITION, TRAIN_LOSS_DEFINITION, git_revision, package_versions, redacted_config
from scenarios.runs.setup import RunSetup

__all__ = ["metric_definitions", "run_record"]


def run_record(config: ScenarioConfig, config_dict: dict, setup: RunSetup, key: ResolvedKey | None) -> dict:
    """``config.json`` of a fresh run: the resolved scenario (key redacted), derived sizes, the data and
    partition, the aggregator, the key's source and identifier (never the key), every metric's
    definition, the setup and tracing times, the ε assumptions and report, versions and git revision."""
    seed, rounds = config.run.seed, config.run.rounds
    data, part, aggregator, epsilon = setup.data, setup.part, setup.aggregator, setup.epsilon
    d, M, K, D, steps, used, n_sub = setup.d, setup.M, setup.K, setup.D, setup.steps, setup.used, setup.n_sub
    setup_s, tracing_s = setup.setup_s, setup.tracing_s
    from fl.partition import summarize_partition

    return {
        "config": redacted_config(config_dict),
        "seed": seed,
        "derived": {
            "d": d, "M": M, "K": K, "D": D, "local_steps_per_round": steps,
            "dataset": data.name, "dataset_source": data.source,
            "n_train": int(data.y_train.size) if part is not None else None,  # a population: generated per client
            "n_train_used": int(used.size) if used is not None else None, "n_test": int(data.y_test.size),
            "input_shape": list(data.input_shape), "num_classes": data.num_classes,
            "partition": summarize_partition(data.y_train, part, data.num_classes) if part is not None else
            {"kind": "population", "clients": M, "note": "each client's own data, generated from its keyed stream "
             "when sampled (D is the smallest client's size, data.fedprox.min_size)"},
            "train_eval_size": int(n_sub),
            "C": config.phy.norm_bound(d),
        },
        "aggregator": aggregator.describe(),
        "snr_definition": SNR_DEFINITION,
        "key_source": key.source if key is not None else "not used",
        "key": key.record() if key is not None else None,
        "metrics": metric_definitions(config),
        "timing": {
            "setup_s": setup_s,
            "tracing_s": tracing_s,
            "note": "wall_time_s excludes both: setup (data, partition, model, aggregator) and tf.function "
                    "tracing (one warm-up call of the training and evaluation functions, results unchanged)",
        },
        "epsilon_assumptions": epsilon.assumptions,
        "privacy_report": epsilon.final_report(rounds),
        "versions": package_versions(),
        "git_revision": git_revision(),
    }


def metric_definitions(config: ScenarioConfig) -> dict:
    """Every column of ``metrics.csv`` with its definition and units (``config.json``'s ``metrics``)."""
    return {
        "round": "1-based round number t+1 (streams use the 0-based index t)",
        "train_loss": TRAIN_LOSS_DEFINITION,
        "test_loss": "mean cross-entropy [nats] of the global model after the round on the whole test set",
        "test_accuracy": "fraction of the test set classified correctly by the global model after the round",
        "agg_error": "aggregator's normalized squared error |x_hat - x|^2 / |x|^2 against the raw (unclipped) sum "
                     "of the contributors' differentials",
        "V": "FLORAS conditional noise variance V = sum_j 1/w_j^2 of the round (empty for other schemes)",
        "admitted": "clients admitted by the round's uplink (channel inversion's truncation, the analog baseline's "
                    "and DDGauss's and sqSGD's admission; empty for schemes that report none)",
        "epsilon": f"epsilon at delta = {config.privacy.delta} after the round, under the scheme's threat model "
                   "(FLORAS: T1; baselines and sqSGD: privacy_report.threat_model; inf: no privacy noise)",
        "wall_time_s": "cumulative training wall time [s] since the run started (setup and tf.function tracing "
                       "excluded; see timing)",
        "channel_uses": "real channel uses of the round's uplink (model §5): FLORAS (d+1)L, analog d*L or d, "
                        "digital sum over admitted clients of ceil(bits_k/r_k)",
        "noise_energy": "|x_hat - sum_k x~_k|^2 [model units^2] over the contributors, x~_k the clipped (normalized, "
                        "then de-normalized) differential the channel is asked to deliver (model §6.4)",
        "clipped_error": "noise_energy / |sum_k x~_k|^2: the normalized squared error against the clipped sum "
                         "(0/0 = 0, x/0 = inf)",
        "weight": "FLORAS receiver weight w of the round (phy.floras.receiver, model §6.4; the estimate is w*x_hat; "
                  "empty for other schemes)",
        "cohort": "clients sampled in the round: K (training.sampling = without-replacement) or the Poisson "
                  "cohort K_t ~ Binomial(M, K/M) (poisson; 0: the model is left unchanged), model §1",
        "worst_class_accuracy": "the smallest per-label accuracy of the global model on the test set (correct "
                                "examples of label c over examples of label c, minimised over the labels present), "
                                "on the rounds test_accuracy is evaluated; empty otherwise",
    }
