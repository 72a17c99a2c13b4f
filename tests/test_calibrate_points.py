"""A sweep's calibrations computed up front (scenarios/experiments/calibrate_points.py): on a local cluster's
workers or in process, the same answers as loading one point after another, and planning finds them cached."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.config.calibration import Calibration, InfeasibleTarget
from scenarios.config.targets import calibration_request, clear_calibration_cache, compute_calibration
from scenarios.experiments.calibrate_points import point_requests, prefetch_calibrations
from scenarios.experiments.executors import DaskExecutor, InProcessExecutor
from scenarios.experiments.matched import plan_sweep
from scenarios.experiments.sweep_file import load_sweep

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "scenarios" / "base" / "digits_mlp.toml"


def _sweep_file(tmp_path: Path, name: str, rest: str) -> Path:
    """A digits sweep ``name`` of 2 seeds, K = 20 of 100, 4 rounds, clip 1, then the TOML lines ``rest``."""
    path = tmp_path / f"{name}.toml"
    path.write_text(f'''name = "{name}"
base = "{DIGITS.as_posix()}"
seeds = [0, 1]
[overrides]
"partition.clients" = 100
"training.clients_per_round" = 20
"run.rounds" = 4
"phy.normalization" = "clip"
"phy.clip_norm" = 1.0
''' + rest)
    return path


def _sweep(tmp_path: Path) -> Path:
    """Central Gaussian at ε = 4 and 8 and at two SNRs (its ε does not read the SNR: one key for both), and
    channel inversion at ε = 8 (no privacy noise: infeasible); 2 seeds (they share a key)."""
    return _sweep_file(tmp_path, "cal", '''[grid]
"privacy.target_epsilon" = [4, 8]
"phy.snr_db" = [20.0, 0.0]
[[cases]]
label = "central-gaussian"
"phy.scheme" = "central-gaussian"
[[cases]]
label = "channel-inversion"
"phy.scheme" = "channel-inversion"
''')


@pytest.fixture
def fresh_cache():
    clear_calibration_cache()
    yield
    clear_calibration_cache()


def _first_call_answers(exc: Exception):
    """An executor class whose map_calls answers the first call with ``exc`` (as a worker reports a failure) and
    computes the others here."""
    class Executor(InProcessExecutor):
        def map_calls(self, fn, items):
            for i, item in enumerate(items):
                yield i, (exc if i == 0 else fn(item))

    return Executor


def test_one_request_per_key_and_planning_finds_every_answer(tmp_path, fresh_cache, monkeypatch):
    sweep = load_sweep(_sweep(tmp_path))
    _, reference = plan_sweep(sweep)  # loading point after point, as before
    clear_calibration_cache()
    requests = point_requests([sweep])
    # 8 points: central Gaussian's two SNRs share a key per ε (2 keys), channel inversion 2 ε (2 requests)
    assert len(requests) == 4 and sorted(len(names) for _, names in requests) == [2, 2, 2, 2]
    lines = []
    assert prefetch_calibrations([sweep], executor=None, echo=lines.append) == 4
    assert lines[0] == "floras matched: calibrating 4 noise key(s) for 8 grid point(s) in this process"
    assert [line.split("]")[0].strip() for line in lines[1:]] == ["[1/4", "[2/4", "[3/4", "[4/4"]
    assert sum("infeasible: " in line for line in lines) == 2
    assert point_requests([sweep]) == []  # all cached
    import scenarios.config.targets as targets

    def no_more(*a, **k):
        raise AssertionError("planning calibrated a point the prefetch had answered")

    monkeypatch.setattr(targets, "calibrate_config", no_more)
    _, planned = plan_sweep(sweep)
    assert planned == reference
    assert sorted(p.status for p in planned) == ["feasible"] * 2 + ["infeasible"] * 4 + ["reused"] * 2


def test_an_unanswered_request_is_left_to_planning(tmp_path, fresh_cache):
    """A call that fails on its worker is not kept: planning computes it (and would name the point's error)."""
    sweep = load_sweep(_sweep(tmp_path))

    lines = []
    stored = prefetch_calibrations([sweep], executor=_first_call_answers(RuntimeError("worker lost")), workers=2,
                                   echo=lines.append)
    assert stored == 3 and "not computed (RuntimeError: worker lost); left to planning" in lines[1]
    assert len(point_requests([sweep])) == 1
    _, planned = plan_sweep(sweep)
    assert sum(p.status == "feasible" for p in planned) == 2


def test_a_local_cluster_gives_the_answers_of_this_process(tmp_path, fresh_cache):
    sweep = load_sweep(_sweep(tmp_path))
    requests = [r for r, _ in point_requests([sweep])]
    here = [compute_calibration(r) for r in requests]
    assert sum(isinstance(a, Calibration) for a in here) == 2 and sum(isinstance(a, InfeasibleTarget) for a in here) == 2
    made = []

    def factory():
        made.append(DaskExecutor.local(2))
        return made[0]

    lines = []
    try:
        assert prefetch_calibrations([sweep], executor=factory, workers=2, echo=lines.append) == 4
        assert sorted(i for i, _ in made[0].map_calls(lambda x: 1 / x, [1, 0, 2])) == [0, 1, 2]
        failed = dict(made[0].map_calls(lambda x: 1 / x, [1, 0, 2]))
    finally:
        for ex in made:
            ex.close()
    assert len(made) == 1 and lines[0].endswith("for 8 grid point(s) on 2 worker(s)")
    assert isinstance(failed[1], ZeroDivisionError) and failed[0] == 1.0 and failed[2] == 0.5
    from scenarios.config.targets import _CACHE

    for request, answer in zip(requests, here):
        there = _CACHE[request]
        if isinstance(answer, Calibration):
            assert there == answer  # bit for bit: a pure function of the request
        else:
            assert type(there) is InfeasibleTarget and str(there) == str(answer)


def test_no_pool_for_a_single_key(tmp_path, fresh_cache):
    path = _sweep(tmp_path)
    text = path.read_text().replace('[4, 8]', '[8]').replace('"phy.snr_db" = [20.0, 0.0]\n', '')
    path.write_text(text.split("[[cases]]\nlabel = \"channel-inversion\"")[0])
    sweep = load_sweep(path)

    def factory():
        raise AssertionError("a cluster for one calibration")

    lines = []
    assert prefetch_calibrations([sweep], executor=factory, workers=2, echo=lines.append) == 1
    assert lines[0].endswith("1 noise key(s) for 1 grid point(s) in this process")
    assert calibration_request(__import__("scenarios.config.loading", fromlist=["x"]).build_scenario_file(
        sweep.base, {**sweep.points[0].overrides, "run.seed": 5})) is None  # another seed: the same key, cached


def test_server_momentum_and_learning_rate_share_a_key(tmp_path, fresh_cache):
    """The server's momentum and η act on the released aggregate (post-processing): the population's capped FLORAS
    with and without momentum is one calibration, not two; a different K (the sampling rate) is another key."""
    from scenarios.config.loading import build_scenario_file

    over = {"phy.scheme": "central-gaussian", "privacy.target_epsilon": 8, "phy.normalization": "clip",
            "phy.clip_norm": 1.0, "partition.clients": 100, "training.clients_per_round": 20, "run.rounds": 4}
    base = calibration_request(build_scenario_file(DIGITS, over))
    same = calibration_request(build_scenario_file(DIGITS, {**over, "training.server_momentum": 0.9, "training.lr": 0.7}))
    other = calibration_request(build_scenario_file(DIGITS, {**over, "training.clients_per_round": 10}))
    assert base == same and base != other


def test_floras_sweep_calibrates_on_its_workers_and_keeps_the_cluster_for_the_runs(tmp_path, fresh_cache,
                                                                                       monkeypatch, capsys):
    """`floras sweep --workers 2` computes its points' calibrations up front through the executor that then runs
    the sweep (started once), a line each; the runs carry the calibration loading computes in this process. A
    point with an unknown key is refused before any executor starts or any directory is made."""
    import json

    import scenarios.cli.sweep as sweep_cli
    from scenarios.cli.main import main
    from scenarios.config import load_scenario
    from scenarios.store import read_manifest

    path = tmp_path / "two.toml"
    path.write_text(f'''name = "two"
base = "{DIGITS.as_posix()}"
seeds = [0]
[overrides]
"partition.clients" = 100
"training.clients_per_round" = 20
"run.rounds" = 1
"phy.scheme" = "central-gaussian"
"phy.normalization" = "clip"
"phy.clip_norm" = 1.0
[grid]
"privacy.target_epsilon" = [4, 8]
''')
    starts = []

    def start(args, built, *, workers, threads):
        starts.append((workers, len(built)))
        return InProcessExecutor()

    monkeypatch.setattr(sweep_cli, "_start_executor", start)
    out = tmp_path / "results"
    assert main(["sweep", str(path), "--workers", "2", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert starts == [(2, 2)]  # one executor for the calibrations and the runs
    assert "floras sweep: calibrating 2 noise key(s) for 2 grid point(s) on 2 worker(s)" in text
    assert "[1/2] two/" in text and "[2/2] two/" in text and "2 run(s) finished" in text
    clear_calibration_cache()
    sweep = load_sweep(path)
    for point in sweep.points:
        want = load_scenario(sweep.base, sweep.run_overrides(point, 0)).phy.of("central-gaussian").noise_multiplier
        run = next(p["runs"][0]["dir"] for p in read_manifest(out / "two")["points"] if p["slug"] == point.slug)
        assert f'"noise_multiplier": {json.dumps(want)}' in (out / "two" / run / "config.json").read_text(), point.slug
    clear_calibration_cache()  # a rerun (a new process): the finished runs' stored calibrations, none computed
    assert main(["sweep", str(path), "--workers", "2", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "floras sweep: 2 noise key(s) taken from the config.json of finished runs" in text
    assert "calibrating" not in text and "0 run(s) finished" in text
    bad = tmp_path / "bad.toml"
    bad.write_text(path.read_text().replace('name = "two"', 'name = "bad"').replace('"run.rounds"', '"run.roundz"'))
    assert main(["sweep", str(bad), "--workers", "2", "--out", str(tmp_path / "nothing")]) == 2
    assert "unknown key run.roundz" in capsys.readouterr().err
    assert starts == [(2, 2)] and not (tmp_path / "nothing").exists()  # the rerun has nothing to run: no executor


@pytest.mark.faults
def test_a_calibration_that_killed_its_workers_is_not_retried_here(tmp_path, fresh_cache, monkeypatch):
    """A calibration whose calculation killed the workers running it (dask's KilledWorker: a PLD that ran out of
    memory did so) is not recomputed by planning in the coordinating process, which it would kill too: loading the
    point raises CalibrationCrashed, which names the point, the target and the way out."""
    import scenarios.config.targets as targets
    from scenarios.config.targets import CalibrationCrashed

    sweep = load_sweep(_sweep(tmp_path))

    class KilledWorker(Exception):  # dask.distributed's, by name: the executor yields the exception object
        pass

    lines = []
    stored = prefetch_calibrations([sweep], executor=_first_call_answers(KilledWorker("Attempted to run task on 2 "
                                                                                     "different workers")),
                                   workers=2, echo=lines.append)
    assert stored == 3 and "crashed, not retried: privacy.target_epsilon = 4: the calibration of cal/" in lines[1]
    assert point_requests([sweep]) == []  # nothing left to compute

    def no_more(*a, **k):
        raise AssertionError("planning recomputed a calibration that had killed its workers")

    monkeypatch.setattr(targets, "calibrate_config", no_more)
    with pytest.raises(ValueError, match=r"grid point central-gaussian_target-epsilon-4_snr-db-20: .*killed the worker "
                                         r"processes.*use another privacy\.accountant"):
        plan_sweep(sweep)
    with pytest.raises(CalibrationCrashed):  # what loading the point raises, before planning names it
        targets._cached(*next(iter(k for k, v in targets._CACHE.items() if isinstance(v, CalibrationCrashed))))


def test_floras_tune_calibrates_each_cases_point_on_the_workers_before_picking_it(tmp_path, fresh_cache, monkeypatch,
                                                                                  capsys):
    """`floras tune` loads each case's point at --tune-at-epsilon to pick it (an infeasible target falls back to
    ε = ∞): those loads must find their calibrations computed on the executor's workers, not one after another in
    this process (a calibration under tightest with antennas is minutes). The sweep above at ε = 8, 20 dB: central
    Gaussian (feasible) and channel inversion (infeasible, no ε = ∞ point: not tuned) are 2 keys on the workers."""
    import json
    import sys

    import scenarios.cli.options as options
    import scenarios.config.targets as targets
    from scenarios.cli import tune
    from scenarios.cli.main import build_parser

    sys.path.insert(0, str(ROOT / "tests"))
    from test_matched import rigged_runner

    on_workers = {"now": False, "items": 0}
    computed_here = []
    real = targets.compute_calibration

    def spy(request):
        if not on_workers["now"]:
            computed_here.append(request)
        return real(request)

    class Workers(InProcessExecutor):
        def worker_threads(self):
            return 2

        def map_calls(self, fn, items):
            on_workers["items"] += len(items)
            for i, item in enumerate(items):
                on_workers["now"] = True
                try:
                    answer = fn(item)
                finally:
                    on_workers["now"] = False
                yield i, answer

    monkeypatch.setattr(targets, "compute_calibration", spy)
    monkeypatch.setattr(options, "make_executor", lambda *a, **k: Workers())
    args = build_parser().parse_args(["tune", str(_sweep(tmp_path)), "--workers", "2", "--out", str(tmp_path / "res"),
                                      "--no-progress", "--lr-grid", "0.03,0.3"])
    assert tune.run(args, runner=rigged_runner) == 0
    out = capsys.readouterr().out
    # the validation runs share their case's key (the held-out split cannot change a client-level ε): 2 in all
    assert on_workers["items"] == 2 and computed_here == [], (on_workers, computed_here)
    assert out.count("floras tune: calibrating") == 1
    assert "floras tune: calibrating 2 noise key(s) for 2 grid point(s) on 2 worker(s)" in out
    assert out.splitlines()[0].startswith("floras tune: predicted ")  # the estimate first, before any calibration
    record = json.loads((tmp_path / "res" / "cal_tune" / "tune.json").read_text())
    assert record["tuned_at_epsilon"] == {"central-gaussian": "8"}
    # a rerun into the same folder: central Gaussian's tuning runs have all finished, so its key is read from them;
    # only channel inversion's (infeasible at ε = 8: no runs under that name) is computed again
    clear_calibration_cache()
    schemes = []
    monkeypatch.setattr(targets, "compute_calibration", lambda r: schemes.append(json.loads(r[0])["phy"]["scheme"])
                        or real(r))
    args = build_parser().parse_args(["tune", str(_sweep(tmp_path)), "--workers", "2", "--out", str(tmp_path / "res"),
                                      "--no-progress", "--lr-grid", "0.03,0.3"])
    assert tune.run(args, runner=rigged_runner) == 0
    out = capsys.readouterr().out
    assert "floras tune: 1 noise key(s) taken from the config.json of finished runs" in out
    assert schemes == ["channel-inversion"], schemes
    assert json.loads((tmp_path / "res" / "cal_tune" / "tune.json").read_text()) == record
    monkeypatch.setattr(targets, "compute_calibration", spy)
    # --tune-rounds changes ε: the tuning runs' own key (one: η cannot change it) is announced and computed once
    # before planning (a single key runs here: no pool for one), not once per run
    on_workers["items"] = 0
    args = build_parser().parse_args(["tune", str(_sweep(tmp_path)), "--workers", "2", "--out", str(tmp_path / "r2"),
                                      "--no-progress", "--lr-grid", "0.03,0.3", "--tune-rounds", "2"])
    assert tune.run(args, runner=rigged_runner) == 0
    assert on_workers["items"] == 0 and len(computed_here) == 1, (on_workers, computed_here)
    assert "floras tune: calibrating 1 noise key(s) for 2 grid point(s) in this process" in capsys.readouterr().out


def test_floras_tune_refuses_a_bad_grid_before_calibrating(tmp_path, fresh_cache, monkeypatch):
    import scenarios.config.targets as targets
    from scenarios.cli import tune
    from scenarios.cli.main import build_parser

    monkeypatch.setattr(targets, "compute_calibration", lambda request: pytest.fail("calibrated before the check"))
    args = build_parser().parse_args(["tune", str(_sweep(tmp_path)), "--workers", "0", "--out", str(tmp_path / "res"),
                                      "--lr-grid", "0.03,-1"])
    with pytest.raises(ValueError, match="lr-grid must be a non-empty list of finite numbers > 0"):
        tune.run(args)


def test_the_validation_split_shares_a_key_at_client_level_only(fresh_cache):
    """The held-out share cannot change a client-level ε (one key for the tuning runs and their case), but at item
    level it sets D, the examples per client, and with it the sampling rate: two keys there."""
    from scenarios.config.loading import build_scenario_file

    def request(level: str, fraction: float | None):
        over = {"phy.scheme": "central-gaussian", "privacy.target_epsilon": 8, "privacy.level": level,
                "run.rounds": 4, "phy.normalization": "clip", "phy.clip_norm": 1.0}
        if fraction is not None:
            over |= {"data.evaluate_on": "validation", "data.validation_fraction": fraction}
        return calibration_request(build_scenario_file(DIGITS, over))

    assert request("client", None) == request("client", 0.2) == request("client", 0.4)
    assert len({request("item", None), request("item", 0.2), request("item", 0.4)}) == 3


def test_floras_receiver_rules_share_a_key_and_calibrate_alike(fresh_cache):
    """FLORAS's receiver weight w·x̂ is post-processing (model §6.4): plain, capped (any cap) and inverse-variance, with
    either noise estimate, are one calibration; calibrated apart (each request's own scenario) they give the same C.
    Receive antennas change V's law and so ε: another key."""
    import json

    from scenarios.config.loading import build_scenario_file
    from scenarios.config.targets import _cache_key, _searchable

    over = {"phy.scheme": "floras", "privacy.target_epsilon": 8, "run.rounds": 4, "partition.clients": 100,
            "training.clients_per_round": 20, "phy.floras.N": 32, "phy.L": 32}
    rules = [{}, {"phy.floras.receiver": "capped"}, {"phy.floras.receiver": "capped", "phy.floras.receiver_cap": 2.0},
             {"phy.floras.receiver": "inverse-variance", "phy.floras.noise_estimate": "energy"}]
    configs = [_searchable(build_scenario_file(DIGITS, {**over, **rule})) for rule in rules]
    assert len({calibration_request(c) for c in configs}) == 1
    assert {c.phy.of("floras").receiver for c in configs} == {"plain", "capped", "inverse-variance"}
    answers = []
    for config in configs:  # each rule's own scenario, receiver keys kept: the accountant must not read them
        full = json.dumps(config.to_dict(), sort_keys=True)
        assert full != _cache_key(config)
        answers.append(compute_calibration((full, 8.0)))
    assert all(isinstance(a, Calibration) for a in answers)
    assert len({(a.parameter, a.value, a.achieved_epsilon) for a in answers}) == 1
    antennas = calibration_request(build_scenario_file(DIGITS, {**over, "phy.rx_antennas": 2}))
    assert antennas is not None and antennas != calibration_request(configs[0])


@pytest.mark.parametrize("scheme, extra", [
    ("floras", {"phy.floras.N": 32, "phy.L": 32, "phy.normalization": "clip", "phy.clip_norm": 1.0}),
    ("analog-gaussian", {"phy.normalization": "clip", "phy.clip_norm": 1.0, "phy.L": 32}),
])
def test_cells_share_a_key_and_calibrate_alike(fresh_cache, scheme, extra):
    """No scheme's ε reads the cell (model §5.1: FLORAS's idealised release, analog Gaussian's guaranteed noise referred
    to the reference SNR), so points that differ only in it (path-loss model, radius, SNR reference, power control,
    re-drops) are one calibration, computed on the canonical cell (so that labels placed by distance still validate);
    no cell is another key. Calibrated apart, each with its whole scenario, all give the same value and ε. The SNR
    stays in analog Gaussian's key (its receiver noise counts) and receive antennas in FLORAS's."""
    import json

    from scenarios.config.loading import build_scenario_file
    from scenarios.config.targets import _cache_key, _searchable

    over = {"phy.scheme": scheme, "privacy.target_epsilon": 8, "run.rounds": 4, "partition.clients": 100,
            "training.clients_per_round": 20, "phy.snr_db": 0.0, **extra}
    cells = [{}, {"phy.pathloss": "log-distance", "phy.cell_radius": 300.0, "phy.pathloss_exponent": 3.5,
                  "phy.shadowing_db": 8.0},
             {"phy.pathloss": "umi", "phy.cell_radius": 500.0, "phy.snr_reference": "median-distance"},
             {"phy.pathloss": "rma", "phy.cell_radius": 1000.0, "phy.redrop": True,
              "phy.power_control": "pathloss-inversion"}]
    configs = [_searchable(build_scenario_file(DIGITS, {**over, **cell})) for cell in cells]
    assert [c.phy.pathloss for c in configs] == ["none", "log-distance", "umi", "rma"]
    assert len({calibration_request(c) for c in configs[1:]}) == 1
    assert calibration_request(configs[0]) not in {calibration_request(c) for c in configs[1:]}
    answers = []
    for config in configs:  # each cell's own scenario, cell keys kept: the accountant must not read them
        full = json.dumps(config.to_dict(), sort_keys=True)
        assert full != _cache_key(config)
        answers.append(compute_calibration((full, 8.0)))
    assert all(isinstance(a, Calibration) for a in answers), answers
    assert len({(a.parameter, a.value, a.achieved_epsilon) for a in answers}) == 1
    placed = _searchable(build_scenario_file(DIGITS, {**over, **cells[2], "partition.placement": "by-distance"}))
    assert isinstance(compute_calibration(calibration_request(placed)), Calibration)  # validates on the canonical cell
    other = {"floras": {"phy.rx_antennas": 2}, "analog-gaussian": {"phy.snr_db": -10.0}}[scheme]
    moved = calibration_request(build_scenario_file(DIGITS, {**over, **cells[2], **other}))
    assert moved is not None and moved != calibration_request(configs[0])


def RUNS_OF(sweep, point, config) -> bool:
    """As `floras matched` says which points have runs of their own: not those reused from the first SNR."""
    from scenarios.experiments.matched import reused_at_snr

    return not reused_at_snr(sweep, point, config.phy.scheme)


def _finished_sweep(tmp_path: Path):
    """The calibration sweep, its feasible runs finished by a fake runner (config.json with the run's calibration)."""
    from scenarios.experiments.sweep import run_sweep
    from test_matched import fake_runner

    sweep = load_sweep(_sweep(tmp_path))
    feasible, _ = plan_sweep(sweep)
    out = tmp_path / "res" / sweep.name
    run_sweep([(feasible, out)], runner=fake_runner, progress=False, echo=None)
    return sweep, out


def test_a_rerun_takes_finished_runs_calibrations_from_their_config(tmp_path, fresh_cache, monkeypatch):
    """A request whose points have finished every seed is answered from the runs' config.json: no calibration, the
    plan and the finished tasks carry the stored record. Where one seed is missing, or the seeds' records disagree,
    the request is computed (a run still to execute never gets a stored record)."""
    import json
    import shutil

    import scenarios.config.targets as targets
    from scenarios.experiments.calibrate_points import seed_from_finished_runs
    from scenarios.store import read_config

    sweep, out = _finished_sweep(tmp_path)
    _, reference = plan_sweep(sweep)
    central = {p.slug: p for p in reference if p.status == "feasible"}
    assert len(central) == 2  # central Gaussian at ε = 4 and 8 (20 dB; 0 dB reuses them)
    eps4, eps8 = sorted(central, key=lambda slug: "epsilon-8" in slug)
    shutil.rmtree(out / sweep.run_name(next(p for p in sweep.points if p.slug == eps4), 1))  # ε = 4: one seed lost
    stored = read_config(out / sweep.run_name(next(p for p in sweep.points if p.slug == eps8), 0))
    clear_calibration_cache()

    lines = []
    assert seed_from_finished_runs([(sweep, out)], echo=None) == 0  # the reused 0 dB points have no runs of their own
    assert seed_from_finished_runs([(sweep, out)], runs_of=RUNS_OF, echo=lines.append) == 1
    assert lines == ["floras matched: 1 noise key(s) taken from the config.json of finished runs (every point that "
                     "needs them has finished every seed), not calibrated again"]
    left = point_requests([sweep])
    assert len(left) == 3 and not any(eps8.replace("snr-db-20", "") in names[0] for _, names in left)
    calibrated = []
    real = targets.calibrate_config
    monkeypatch.setattr(targets, "calibrate_config", lambda config, target: calibrated.append(target) or real(config, target))
    _, planned = plan_sweep(sweep)
    assert sorted(calibrated) == [4.0, 4.0, 8.0]  # ε = 4 (lost seed) and channel inversion at 4 and 8 (infeasible)
    p8 = next(p for p in planned if p.slug == eps8)
    assert p8.calibration == stored["config"]["privacy"]["calibrated"] == central[eps8].calibration

    # the seeds' records disagree (a run of another version): computed afresh
    clear_calibration_cache()
    path = out / sweep.run_name(next(p for p in sweep.points if p.slug == eps8), 1) / "config.json"
    data = json.loads(path.read_text())
    data["config"]["privacy"]["calibrated"]["value"] *= 1.5
    path.write_text(json.dumps(data))
    assert seed_from_finished_runs([(sweep, out)], runs_of=RUNS_OF, echo=None) == 0
    assert len(point_requests([sweep])) == 4


def test_floras_matched_rerun_does_not_recalibrate_finished_points(tmp_path, fresh_cache, monkeypatch, capsys):
    """The command: a second `floras matched` over the finished sweep calibrates nothing, skips every run and starts
    no cluster (2 workers asked)."""
    import scenarios.config.targets as targets
    import scenarios.experiments.run_task as run_task
    from scenarios.cli.main import main
    from test_matched import fake_runner

    monkeypatch.setattr(run_task, "_default_runner", lambda: fake_runner)
    path = _sweep(tmp_path)  # central Gaussian only (4 points, 2 of them reused from 20 dB; 2 seeds)
    path.write_text(path.read_text().split("[[cases]]\nlabel = \"channel-inversion\"")[0])
    root = tmp_path / "res"
    assert main(["matched", str(path), "--workers", "0", "--out", str(root), "--no-progress"]) == 0
    capsys.readouterr()
    clear_calibration_cache()
    calibrated = []
    real = targets.calibrate_config
    monkeypatch.setattr(targets, "calibrate_config", lambda config, target: calibrated.append(config.phy.scheme)
                        or real(config, target))
    import scenarios.cli.matched as matched_cli

    def no_cluster(*a, **k):
        raise AssertionError("a cluster started for a sweep with nothing to run")

    monkeypatch.setattr(matched_cli, "make_executor", no_cluster)  # 2 workers asked; nothing to calibrate or run
    assert main(["matched", str(path), "--workers", "2", "--out", str(root), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "1 noise key(s) taken from the config.json of finished runs" not in text
    assert "2 noise key(s) taken from the config.json of finished runs" in text
    assert calibrated == []
    assert "0 run(s) finished, 0 copied from identical runs, 4 already done, 0 failed" in text


def test_a_request_that_keeps_the_seed_is_asked_once_per_seed(tmp_path, fresh_cache, monkeypatch):
    """Analog Gaussian with imperfect CSI in a cell calibrates on each seed's drop (model §5.1, "In a cell"): its point
    asks one request per seed, central Gaussian's one for both seeds. The law's accountant is replaced by a plain
    Gaussian one here (the requests, not the law, are under test)."""
    from privacy import RunAccountant
    from scenarios.config import builtin_schemes

    def cheap(config, *, d, common, threat):
        return RunAccountant("gaussian", **common, clip_norm=1.0, noise_std=1.0, threat_model=threat)

    monkeypatch.setattr(builtin_schemes, "csi_accountant", cheap)
    path = _sweep_file(tmp_path, "csi", '''"phy.pathloss" = "log-distance"
"privacy.target_epsilon" = 8
[[cases]]
label = "analog-gaussian"
"phy.scheme" = "analog-gaussian"
"phy.csi_error" = 0.01
[[cases]]
label = "central-gaussian"
"phy.scheme" = "central-gaussian"
''')
    requests = point_requests([load_sweep(path)])
    names = sorted(names[0] for _, names in requests)
    assert names == ["csi/analog-gaussian", "csi/analog-gaussian", "csi/central-gaussian"]
    seeds = sorted(json.loads(r[0])["run"].get("seed", -1) for r, _ in requests)
    assert seeds == [-1, 0, 1]
