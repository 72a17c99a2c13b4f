"""Reintroduce, one at a time, the four bugs that once survived the suite (issue 16) and show that tests fail.

Each bug is applied to a scratch copy of the repository (never to the working tree), the named
test files are run there, and the failing tests are listed. Exit status 0 means every bug made at
least one test fail.

Usage (from the repository root)::

    python tests/mutation/reintroduce_bugs.py [--out build/bugs] [--all-tests]

``--all-tests`` runs the whole suite (what ``make test`` runs) for each bug instead of the listed files.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_mutation import copy_tree  # noqa: E402

BUGS = [
    ("per-chip noise std of the FLORAS link ×√2 (real/complex factor)", "phy/floras.py",
     "self.noise_std = float(np.sqrt(config.noise_variance / config.L))",
     "self.noise_std = float(np.sqrt(2.0 * config.noise_variance / config.L))",
     ["tests/test_independent_predictions.py"]),
    ("per-chip noise std of the FLORAS link ×2", "phy/floras.py",
     "self.noise_std = float(np.sqrt(config.noise_variance / config.L))",
     "self.noise_std = 2.0 * float(np.sqrt(config.noise_variance / config.L))",
     ["tests/test_independent_predictions.py"]),
    ("item-level sampling with q_touch = q instead of 1 − (1 − q)^E", "privacy/run.py",
     "q_touch = 1.0 - (1.0 - q) ** local_steps", "q_touch = q",
     ["tests/test_run_privacy_independent.py"]),
    ("one batch permutation reused in every local epoch", "fl/training.py",
     "batches = np.concatenate([rng.permutation(D)[: per_epoch * batch_size] for _ in range(epochs)])",
     "perm = rng.permutation(D)[: per_epoch * batch_size]\n        batches = np.concatenate([perm for _ in range(epochs)])",
     ["tests/test_known_answers.py"]),
    ("Philox key and counter taken from the wrong halves of the HMAC output", "phy/assignment.py",
     'np.random.Philox(key=int.from_bytes(seed[:16], "little"), counter=int.from_bytes(seed[16:], "little"))',
     'np.random.Philox(key=int.from_bytes(seed[16:], "little"), counter=int.from_bytes(seed[:16], "little"))',
     ["tests/test_known_answers.py"]),
]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("build/bugs"))
    p.add_argument("--all-tests", action="store_true")
    args = p.parse_args(argv)
    src = args.out.resolve() / "src"
    copy_tree(src)
    env = {**os.environ, "PYTHONPATH": str(src), "TF_CPP_MIN_LOG_LEVEL": "3"}
    ok = True
    for title, rel, old, new, tests in BUGS:
        path = src / rel
        original = path.read_text(encoding="utf-8")
        if original.count(old) != 1:
            print(f"[bug] {title}: the original line was not found in {rel} (code changed?)")
            ok = False
            continue
        path.write_text(original.replace(old, new), encoding="utf-8")
        try:
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-rf",
                   *([] if args.all_tests else tests)]
            proc = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True)
        finally:
            path.write_text(original, encoding="utf-8")
        failed = re.findall(r"^FAILED (\S+)", proc.stdout, flags=re.M)
        summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
        print(f"[bug] {title} ({rel}): exit {proc.returncode}; {summary}")
        for f in failed:
            print(f"        FAILED {f}")
        ok &= proc.returncode != 0 and bool(failed)
    print("[bug] every reintroduced bug fails the suite" if ok else "[bug] SOME BUG WAS NOT CAUGHT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
