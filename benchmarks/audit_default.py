"""Wall time of a default ``floras audit`` run, T1 and T2 (target: under a minute on 2 cores).

Each run is a fresh subprocess (TensorFlow/Sionna start-up included), with the command line's
defaults: K = 20, N = 30, L = 32, d = 16, SNR 20 dB; T1 plays 2000 trials per world, T2 plays
1000 per world and measures detection, decoding and linking over 300 rounds.

Usage: ``python benchmarks/audit_default.py [--repeat 1]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="runs per threat model")
    args = ap.parse_args()
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    cmd = [sys.executable, "-m", "scenarios.cli.main", "audit"]
    print(f"{'threat':<7} {'run':>4} {'wall [s]':>9}")
    for threat in ("T1", "T2"):
        for r in range(args.repeat):
            t0 = time.perf_counter()
            subprocess.run(cmd + ["--threat", threat], check=True, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            print(f"{threat:<7} {r:>4} {time.perf_counter() - t0:>9.1f}")
    print(f"cores available: {os.cpu_count()}")


if __name__ == "__main__":
    main()
