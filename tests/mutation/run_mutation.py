"""Mutation testing of phy/, privacy/ and fl/training.py with cosmic-ray (``make mutate``; docs/testing.md).

For every module group below this script

1. copies the tracked source tree into ``OUT/src-<lane>``, one copy per parallel lane (cosmic-ray
   edits files in place: the working tree is never touched, even if the run is interrupted);
2. writes a cosmic-ray configuration whose test command runs only the fast tests relevant to the
   group, and runs ``cosmic-ray init``;
3. keeps a deterministic random sample of the mutants (``--fraction`` of each module, at least
   ``--min-per-module``, at most ``--max-per-module``; the others are marked skipped) and runs
   ``cosmic-ray exec``;
4. writes ``OUT/report.md`` (and ``OUT/report.json``): per module the mutants generated,
   sampled, killed, survived, incompetent/timed out; survivors with their diff; survivors listed
   in ``tests/mutation/equivalent.toml`` are counted as equivalent (with the recorded reason)
   and left out of the kill rate.

``--retest-survivors`` copies the current tree again and reruns only the survivors (after tests
were added to kill them); the report then counts them with the new tests.

Usage (from the repository root)::

    python tests/mutation/run_mutation.py --out build/mutation [--groups privacy-run phy-assignment]
        [--fraction 0.1] [--max-per-module 40] [--seed 0]
    python tests/mutation/run_mutation.py --out build/mutation --report-only

Sizing: one mutant costs one run of its group's tests (≈ 2–15 s on an idle core; TensorFlow's
import dominates the phy groups). The defaults sample ≈ 250 mutants, under an hour on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PYTEST = "python -m pytest -x -q -p no:cacheprovider --no-header -o addopts="

# group name → (modules, pytest invocations). Tests: the fast ones that exercise the modules; a group
# stops at its first failing invocation (and pytest at its first failing test, -x).
GROUPS: dict[str, tuple[list[str], list[str]]] = {
    "phy-randomness": (["phy/randomness.py", "phy/blocks.py"],
                       ["tests/test_phy_blocks_randomness.py tests/test_known_answers.py tests/test_foundation.py"]),
    "phy-assignment": (["phy/assignment.py"], ["tests/test_known_answers.py tests/test_phy_assignment.py"]),
    "phy-sequences": (["phy/sequences.py"], ["tests/test_phy_sequences.py tests/test_input_contracts.py",
                                            "tests/test_known_answers.py -k sequence_sets"]),
    "phy-statistics": (["phy/statistics.py"], ["tests/test_phy_statistics.py"]),
    "phy-normalization": (["phy/normalization.py", "phy/aggregation.py"],
                          ["tests/test_input_contracts.py tests/test_foundation.py tests/test_phy_floras.py"]),
    "phy-config": (["phy/config.py"], ["tests/test_foundation.py", "tests/test_properties.py -k 'phy or link'"]),
    "phy-fading": (["phy/fading.py"], ["tests/test_known_answers.py tests/test_phy_fading.py"]),
    "phy-floras": (["phy/floras.py", "phy/receiver.py"],
                   ["tests/test_independent_predictions.py -k 'not channel_inversion and not link'",
                    "tests/test_phy_floras.py tests/test_phy_assignment.py"]),
    "phy-channel-inversion": (["phy/channel_inversion.py"],
                              ["tests/test_independent_predictions.py -k channel_inversion", "tests/test_phy_channel_inversion.py"]),
    "phy-link": (["phy/link_simulation.py"], ["tests/test_independent_predictions.py -k link", "tests/test_link_cli.py"]),
    "privacy-rdp": (["privacy/rdp.py"], ["tests/test_run_privacy_independent.py -k 'not a_floras_run'", "tests/test_privacy_rdp.py"]),
    "privacy-accountant": (["privacy/accountant.py", "privacy/events.py"],
                           ["tests/test_run_privacy_independent.py -k 'not a_floras_run'", "tests/test_privacy_accountant.py"]),
    "privacy-run": (["privacy/run.py", "privacy/sensitivity.py"],
                    ["tests/test_run_privacy_independent.py -k 'not a_floras_run'", "tests/test_privacy_run.py"]),
    "fl-training": (["fl/training.py"], ["tests/test_known_answers.py -k batch", "tests/test_fl_training.py"]),
}


def copy_tree(dest: Path) -> None:
    """Copy the tracked files (and untracked, not ignored ones) of the repository into ``dest``."""
    if dest.exists():
        shutil.rmtree(dest)
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def _test_command(invocations: list[str]) -> str:
    py = sys.executable
    return " && ".join(f"{py} -m pytest -x -q -p no:cacheprovider -o addopts= {inv}" for inv in invocations)


def write_config(path: Path, modules: list[str], selection: str, timeout: float) -> None:
    lines = [
        "[cosmic-ray]",
        f"module-path = {json.dumps(modules)}",
        f"timeout = {timeout}",
        "excluded-modules = []",
        f"test-command = {json.dumps(_test_command(selection))}",
        "",
        "[cosmic-ray.distributor]",
        'name = "local"',
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


def sample(db: Path, *, fraction: float, min_per: int, max_per: int, seed: int) -> dict[str, int]:
    """Mark all but a deterministic random sample of each module's pending mutants as skipped."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT job_id, module_path FROM mutation_specs ORDER BY job_id").fetchall()
    by_module: dict[str, list[str]] = {}
    for job, mod in rows:
        by_module.setdefault(mod, []).append(job)
    rng = random.Random(seed)
    keep: set[str] = set()
    for mod, jobs in sorted(by_module.items()):
        k = min(len(jobs), max(min_per, min(max_per, round(fraction * len(jobs)))))
        keep |= set(rng.sample(sorted(jobs), k))
    con.close()
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(str(db), WorkDB.Mode.open) as wdb:
        skip = [item.job_id for item in wdb.pending_work_items if item.job_id not in keep]
        wdb.set_multiple_results(skip, WorkResult(output="not in the sample", worker_outcome=WorkerOutcome.SKIPPED))
    return {mod: len(jobs) for mod, jobs in by_module.items()}


def _line(src_root: Path, module: str, line: int) -> str:
    try:
        return (src_root / module).read_text(encoding="utf-8").splitlines()[line - 1].strip()
    except (OSError, IndexError):
        return ""


def load_equivalents() -> list[dict]:
    path = HERE / "equivalent.toml"
    if not path.exists():
        return []
    return tomllib.loads(path.read_text(encoding="utf-8")).get("equivalent", [])


def _is_equivalent(eq: list[dict], module: str, operator: str, line_text: str) -> str | None:
    for e in eq:
        if e["module"] == module and e["operator"] == operator and e["line"].strip() == line_text:
            return e["reason"]
    return None


def collect(out: Path) -> dict:
    """Results of every session database under ``out`` (one per group)."""
    eq = load_equivalents()
    src_root = out / "src-0"
    modules: dict[str, dict] = {}
    survivors = []
    for db in sorted(out.glob("*.sqlite")):
        con = sqlite3.connect(db)
        q = ("SELECT s.job_id, s.module_path, s.operator_name, s.occurrence, s.start_pos_row, r.worker_outcome, "
             "r.test_outcome, r.diff, r.output FROM mutation_specs s LEFT JOIN work_results r ON s.job_id = r.job_id")
        for job, mod, op, occ, row, worker, test, diff, output in con.execute(q):
            worker, test = (worker or "").lower() or None, (test or "").lower() or None
            m = modules.setdefault(mod, dict(generated=0, sampled=0, killed=0, timeout=0, survived=0,
                                             equivalent=0, incompetent=0, pending=0))
            m["generated"] += 1
            if worker == "skipped":
                continue
            m["sampled"] += 1
            if worker is None:
                m["pending"] += 1
            elif test == "killed" or worker in ("exception", "abnormal"):
                m["killed"] += 1
                m["timeout"] += output == "timeout"  # cosmic-ray counts a hang (e.g. an endless loop) as killed
            elif test == "incompetent":
                m["incompetent"] += 1
            elif test == "survived":
                text = _line(src_root, mod, int(row))
                reason = _is_equivalent(eq, mod, op, text)
                if reason:
                    m["equivalent"] += 1
                else:
                    m["survived"] += 1
                survivors.append(dict(module=mod, operator=op, occurrence=occ, line=int(row), source=text,
                                      equivalent=reason, diff=diff or ""))
        con.close()
    return {"modules": modules, "survivors": survivors}


def kill_rate(ms) -> tuple[int, int, float]:
    killed = sum(m["killed"] for m in ms)
    live = killed + sum(m["survived"] for m in ms)
    return killed, live, (killed / live if live else float("nan"))


def write_report(out: Path, data: dict, meta: dict) -> Path:
    mods = data["modules"]
    lines = ["# Mutation testing report (cosmic-ray)", "",
             f"Run: {meta.get('date', '?')}; sample fraction {meta.get('fraction')}, per module "
             f"[{meta.get('min_per')}, {meta.get('max_per')}], seed {meta.get('seed')}; wall time {meta.get('wall_s', 0):.0f} s; "
             f"load: {meta.get('uptime', '?')}", "",
             "Kill rate = killed / (killed + surviving non-equivalent). A mutant whose tests exceed the timeout "
             "(typically an endless loop) counts as killed, as cosmic-ray reports it; incompetent mutants (the "
             "mutated module cannot run the tests at all) are not counted.", "",
             "| module | generated | sampled | killed (of which timeout) | survived | equivalent | incompetent | pending | kill rate |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for mod in sorted(mods):
        m = mods[mod]
        k, live, r = kill_rate([m])
        lines.append(f"| {mod} | {m['generated']} | {m['sampled']} | {m['killed']} ({m['timeout']}) | {m['survived']} | {m['equivalent']} | "
                     f"{m['incompetent']} | {m['pending']} | {'—' if live == 0 else f'{100 * r:.0f} %'} |")
    for pkg in ("phy/", "privacy/", "fl/"):
        sel = [m for mod, m in mods.items() if mod.startswith(pkg)]
        if sel:
            k, live, r = kill_rate(sel)
            lines.append(f"| **{pkg} total** | {sum(m['generated'] for m in sel)} | {sum(m['sampled'] for m in sel)} | "
                         f"{k} ({sum(m['timeout'] for m in sel)}) | "
                         f"{live - k} | {sum(m['equivalent'] for m in sel)} | {sum(m['incompetent'] for m in sel)} | "
                         f"{sum(m['pending'] for m in sel)} | {'—' if live == 0 else f'{100 * r:.0f} %'} |")
    lines += ["", "## Surviving mutants", ""]
    for s in data["survivors"]:
        tag = f"equivalent: {s['equivalent']}" if s["equivalent"] else "NOT KILLED"
        lines += [f"### {s['module']}:{s['line']} `{s['operator']}` ({tag})", "", "```diff", s["diff"].strip(), "```", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "report.json").write_text(json.dumps({**data, "meta": meta}, indent=1) + "\n", encoding="utf-8")
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "build" / "mutation")
    p.add_argument("--groups", nargs="*", default=list(GROUPS), choices=list(GROUPS))
    p.add_argument("--fraction", type=float, default=0.06, help="fraction of each module's mutants sampled")
    p.add_argument("--min-per-module", type=int, default=4)
    p.add_argument("--max-per-module", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=240.0, help="seconds per mutant's test run")
    p.add_argument("--jobs", type=int, default=2, help="groups run in parallel, each on its own source copy")
    p.add_argument("--retest-survivors", action="store_true",
                   help="copy the current tree again and rerun only the surviving mutants of the stored sessions "
                        "(after adding tests that should kill them)")
    p.add_argument("--baseline-only", action="store_true",
                   help="only run each group's tests on the unmutated tree (exit status and time per group)")
    p.add_argument("--report-only", action="store_true", help="only rewrite the report from the stored sessions")
    args = p.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    meta_path = out / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if not args.report_only:
        t0 = time.time()
        bindir = Path(sys.executable).parent
        cr = [str(bindir / "cosmic-ray")] if (bindir / "cosmic-ray").exists() else [sys.executable, "-m", "cosmic_ray.cli"]
        jobs = max(1, min(args.jobs, len(args.groups)))
        # one source copy per lane: a lane mutates files in place, and the other lane's tests must not see it
        lanes = [args.groups[i::jobs] for i in range(jobs)]
        baseline: dict[str, dict] = {}

        def run_lane(i: int) -> None:
            src = out / f"src-{i}"
            copy_tree(src)
            env = {**os.environ, "PYTHONPATH": str(src), "TF_CPP_MIN_LOG_LEVEL": "3"}
            for name in lanes[i]:
                modules, invocations = GROUPS[name]
                cfg, db = out / f"{name}.toml", out / f"{name}.sqlite"
                write_config(cfg, modules, invocations, args.timeout)
                if not db.exists() or args.baseline_only:
                    # baseline: the group's tests must pass on the unmutated copy, or every mutant would
                    # count as killed (a broken selection, an import error, a -k that selects nothing)
                    t_start = time.time()
                    rc = subprocess.run(_test_command(invocations), shell=True, cwd=src, env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
                    baseline[name] = dict(rc=rc, seconds=round(time.time() - t_start, 1))
                    print(f"[mutate] {name}: baseline exit {rc} in {baseline[name]['seconds']} s", flush=True)
                    if rc != 0:
                        raise RuntimeError(f"group {name}: its tests fail on the unmutated tree (exit {rc}); fix that first")
                    if args.baseline_only:
                        continue
                    subprocess.run(cr + ["init", str(cfg), str(db)], cwd=src, env=env, check=True)
                    sample(db, fraction=args.fraction, min_per=args.min_per_module, max_per=args.max_per_module, seed=args.seed)
                elif args.retest_survivors:
                    con = sqlite3.connect(db)
                    n = con.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'").rowcount
                    con.commit()
                    con.close()
                    print(f"[mutate] {name}: retesting {n} survivor(s)", flush=True)
                print(f"[mutate] lane {i}: {name}", flush=True)
                subprocess.run(cr + ["exec", str(cfg), str(db)], cwd=src, env=env, check=True)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for f in [pool.submit(run_lane, i) for i in range(jobs)]:
                f.result()
        if args.baseline_only:
            (out / "baseline.json").write_text(json.dumps(baseline, indent=1) + "\n")
            print(json.dumps(baseline, indent=1))
            return 0
        meta = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), fraction=args.fraction, min_per=args.min_per_module,
                    max_per=args.max_per_module, seed=args.seed, jobs=jobs, groups=args.groups,
                    wall_s=meta.get("wall_s", 0) + time.time() - t0,
                    uptime=subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
                    baseline={**meta.get("baseline", {}), **baseline})
        meta_path.write_text(json.dumps(meta) + "\n")
    path = write_report(out, collect(out), meta)
    print(f"[mutate] report: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
