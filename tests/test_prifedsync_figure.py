"""The PriFedSync figure regenerates from stored results alone (a fake runner writes each run's files)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from scenarios.experiments.sweep import load_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[1]
HEADER = "round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s"


def fake_runner(cfg, out_dir, *, resume, progress):
    out_dir = Path(out_dir)
    lam = cfg.training.prifedsync.mix
    report = {"assumptions": ["record level (fake accountant for figure tests)"], "warnings": []}
    (out_dir / "config.json").write_text(json.dumps({"config": cfg.to_dict(), "privacy_report": report}))
    rows, personal = [HEADER], ["round,personal_accuracy,global_accuracy,clients_seen"]
    for rnd in range(1, cfg.run.rounds + 1):
        rows.append(f"{rnd},1.0,1.0,0.3,0.0,,,{7.5 * rnd ** 0.5!r},{0.1 * rnd!r}")
        personal.append(f"{rnd},{0.3 + 0.5 * (1 - lam) * rnd / cfg.run.rounds + 0.01 * cfg.run.seed!r},0.3,{min(20, 10 + rnd)}")
    (out_dir / "metrics.csv").write_text("\n".join(rows) + "\n")
    (out_dir / "prifedsync.csv").write_text("\n".join(personal) + "\n")
    (out_dir / "DONE").write_text("")
    return {}


def test_prifedsync_figure_draws_every_lambda_and_states_the_common_epsilon(tmp_path):
    from figures.prifedsync import STEM, make

    sweep = load_sweep(ROOT / "scenarios" / "prifedsync.toml", quick=True)  # validated by the real loader
    sweep = replace(sweep, seeds=(0, 1))
    run_sweep([(sweep, tmp_path / "res" / sweep.name)], runner=fake_runner, progress=False, echo=None)
    paths = make(tmp_path / "res" / sweep.name, tmp_path / "figs")
    assert {p.suffix for p in paths} >= {".png", ".pdf"}
    assert all(p.stat().st_size > 10_000 for p in paths if p.suffix in (".png", ".pdf"))
    caption = (tmp_path / "figs" / f"{STEM}.caption.txt").read_text()
    rounds = sweep.points[0].overrides["run.rounds"]
    assert f"{7.5 * rounds ** 0.5:.4g}" in caption  # one ε for every λ: the points share σ, B/D and S
    assert "min–max over seeds" in caption and "digits" in caption
