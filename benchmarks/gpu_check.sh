#!/usr/bin/env bash
# GPU readiness check: the FL round benchmark on the GPU and on the CPU, both printed.
#
# On a machine where `nvidia-smi -L` lists an NVIDIA GPU it installs the optional extra `.[gpu]`
# (TensorFlow's CUDA build, tensorflow[and-cuda]) into the current Python environment, runs
# benchmarks/fl_round.py with the GPU visible and again with CUDA_VISIBLE_DEVICES="" (CPU), and
# prints both tables and the GPU/CPU ratios. Without a GPU (or with --cpu-only) it runs and reports
# the CPU branch only. The fading draw (Sionna) and the FLORAS channel stay on the CPU by design.
#
# Usage: benchmarks/gpu_check.sh [--cpu-only] [--no-install] [--out DIR] [-- ARGS for fl_round.py]
#   PYTHON=.venv/bin/python benchmarks/gpu_check.sh            # full check, results in gpu_check/
#   benchmarks/gpu_check.sh --cpu-only -- --dataset digits --clients 10 --per-round 4 --reps 1 --fit-reps 0
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
OUT=gpu_check
CPU_ONLY=0
INSTALL=1
ARGS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpu-only) CPU_ONLY=1; shift ;;
    --no-install) INSTALL=0; shift ;;
    --out) OUT="$2"; shift 2 ;;
    --) shift; ARGS=("$@"); break ;;
    *) echo "gpu_check.sh: error: unknown option $1 (allowed: --cpu-only, --no-install, --out DIR, -- ARGS)" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
echo "load: $(uptime)"

HAVE_GPU=0
if [[ $CPU_ONLY -eq 0 ]] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
  HAVE_GPU=1
fi

if [[ $HAVE_GPU -eq 1 ]]; then
  nvidia-smi -L
  if [[ $INSTALL -eq 1 ]]; then
    "$PY" -m pip install -q -e '.[gpu]'
  fi
  echo "== GPU branch"
  "$PY" benchmarks/fl_round.py --json "$OUT/gpu.json" "${ARGS[@]}"
  "$PY" -c "import json,sys; g=json.load(open('$OUT/gpu.json'))['gpus']; sys.exit(0 if g else 'gpu_check.sh: error: TensorFlow sees no GPU after installing .[gpu]')"
fi
echo "== CPU branch"
CUDA_VISIBLE_DEVICES="" "$PY" benchmarks/fl_round.py --json "$OUT/cpu.json" "${ARGS[@]}"

"$PY" - "$OUT" "$HAVE_GPU" <<'PYEOF'
import json, sys
out, have_gpu = sys.argv[1], sys.argv[2] == "1"
runs = {"cpu": json.load(open(f"{out}/cpu.json"))}
if have_gpu:
    runs["gpu"] = json.load(open(f"{out}/gpu.json"))
print(f"{'device':6} {'model':5} {'batched s':>10} {'compiled s':>11} {'floor s':>8} {'FLORAS round s (N, share)':>30}")
for dev, r in runs.items():
    for m in r["models"]:
        fl = ", ".join(f"{k}: {v['round_s']:.3f} ({100 * v['channel_share']:.1f}%)" for k, v in m["floras"].items())
        s = m["seconds"]
        print(f"{dev:6} {m['model']:5} {s['batched']:>10.4f} {s['compiled_per_client']:>11.4f} {s['floor']:>8.4f}   {fl}")
if have_gpu:
    for g, c in zip(runs["gpu"]["models"], runs["cpu"]["models"]):
        print(f"{g['model']}: batched CPU/GPU = {c['seconds']['batched'] / g['seconds']['batched']:.2f}x")
else:
    print("no NVIDIA GPU found (nvidia-smi -L) or --cpu-only: CPU branch only")
PYEOF
