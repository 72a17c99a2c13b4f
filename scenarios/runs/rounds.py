"""The rounds of one run: train, evaluate, append to ``metrics.csv`` and checkpoint (:func:`train_rounds`)."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import numpy as np

from phy.link_records import client_count
from scenarios.config import ScenarioConfig
from scenarios.runs.run_dir import format_cell
from scenarios.runs.setup import RunSetup
from scenarios.store import CHECKPOINT, PERSONAL, atomic_write_bytes, storage_error

__all__ = ["train_rounds", "PERSONAL_FILE", "PERSONAL_HEADER"]

#: PriFedSync's per-round file in the run directory (``training.mode = "prifedsync"`` only)
PERSONAL_FILE = PERSONAL
PERSONAL_HEADER = ("round", "personal_accuracy", "global_accuracy", "clients_seen")


def train_rounds(config: ScenarioConfig, setup: RunSetup, out_dir: Path, *, w, start: int, elapsed: float,
                 metrics_text: str, class_text: str, progress: bool) -> tuple[str, str]:
    """Rounds ``start`` … ``run.rounds`` − 1 from the model ``w``; each row is appended and flushed, a
    checkpoint written every ``run.checkpoint_every`` rounds. Returns the complete metrics text and the per-label
    accuracy text (``class_accuracy.csv``: round, then each label's test accuracy, one row per evaluation)."""
    rounds, data, fedavg = config.run.rounds, setup.data, setup.fedavg
    eval_train, eval_test, epsilon = setup.eval_train, setup.eval_test, setup.epsilon
    metrics_path = out_dir / "metrics.csv"
    from tqdm import tqdm

    bar = tqdm(total=rounds, initial=start, desc=f"{config.phy.scheme} {data.name}", unit="round",
               disable=not (progress and sys.stderr.isatty()), leave=False)
    try:
        fh = open(metrics_path, "a", encoding="utf-8", newline="")
    except OSError as exc:
        raise storage_error(exc, "write", metrics_path) from None
    personal_path = out_dir / PERSONAL_FILE
    if setup.personal is not None and start == 0:
        atomic_write_bytes(personal_path, (",".join(PERSONAL_HEADER) + "\n").encode())
    try:
        for t in range(start, rounds):
            t0 = time.perf_counter()
            w, outcome = fedavg.step(w, t)
            last = t == rounds - 1
            if (t + 1) % config.training.eval_every == 0 or last:
                train_loss, _ = eval_train.evaluate(w)
                test_loss, test_acc, by_class = eval_test.evaluate_by_class(w)
                worst = float(np.nanmin(by_class)) if np.isfinite(by_class).any() else None
                class_text += ",".join(format_cell(v) for v in (t + 1, *(None if np.isnan(a) else float(a)
                                                                          for a in by_class))) + "\n"
            else:
                train_loss = test_loss = test_acc = worst = None
            if setup.personal is not None and test_acc is not None:  # PriFedSync: each client's own test examples
                p_acc, g_acc, seen = setup.personal.evaluate(fedavg.states, w)
                with open(personal_path, "a", encoding="utf-8") as pf:
                    pf.write(",".join(format_cell(v) for v in (t + 1, p_acc, g_acc, seen)) + "\n")
            eps = epsilon(t + 1)
            elapsed += time.perf_counter() - t0
            diag = outcome.diagnostics
            row = [t + 1, train_loss, test_loss, test_acc, outcome.agg_error,
                   diag.get("V"),  # only FLORAS reports V (the round's conditional noise variance)
                   client_count(diag["admitted"]) if "admitted" in diag else None,
                   eps, elapsed, int(diag["channel_uses"]) if "channel_uses" in diag else None,
                   diag.get("noise_energy"), diag.get("clipped_nmse"),
                   diag.get("weight"),  # only FLORAS reports a receiver weight (model §6.4)
                   outcome.cohort,  # K, or K_t with Poisson sampling (model §1)
                   worst]  # the least accurate label's test accuracy (the near–far bias, docs/cell.md)
            line = ",".join(format_cell(v) for v in row) + "\n"
            try:
                fh.write(line)
                fh.flush()
            except OSError as exc:
                raise storage_error(exc, "append to", metrics_path) from None
            metrics_text += line
            if (t + 1) % config.run.checkpoint_every == 0 or last:
                buf = io.BytesIO()
                extra = {} if getattr(fedavg, "velocity", None) is None else {"velocity": fedavg.velocity}  # server momentum
                np.savez(buf, w=w, next_round=np.int64(t + 1), elapsed=np.float64(elapsed), metrics=np.str_(metrics_text),
                         class_accuracy=np.str_(class_text), **extra)
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
    return metrics_text, class_text

