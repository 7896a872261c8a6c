#!/usr/bin/env bash
# The one script the GPU machine runs (device tool: `run`, carry [".gpu/bundle.tar.gz", ".gpu/whl"]):
# install the carried wheels, restore the bundle (benchmarks/gpu/bundle.py), run every command on
# the GPU (benchmarks/gpu/run_commands.py), then the engine's device benchmarks; everything lands in
# $OUT (commands.json, run.tar.gz with the records and logs, the engine JSONs, nvidia-smi).
# Usage there: bash benchmarks/gpu/device.sh [run_commands.py options, e.g. --only NAME,...]
set -uo pipefail
W=/tmp/xsimpp-gpu
OUT=${OUT:?the device tool sets OUT}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu/whl/*.whl \
  || { echo "device.sh: the carried wheels did not install" >&2; exit 1; }
export PYTHONPATH="$PWD:/tmp/site:$W/site" XSIMPP_HOME="$W/home" PYTHONUNBUFFERED=1
python3 benchmarks/gpu/bundle.py restore --bundle .gpu --into "$W" || exit 1
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,temperature.gpu --format=csv > "$OUT/nvidia-smi.csv"
timeout ${COMMANDS_TIMEOUT:-360} python3 benchmarks/gpu/run_commands.py --timeout 120 --device cuda --data "$W/data" --augmented "$W/augmented" --out "$W/run" "$@" \
  2>&1 | tee "$OUT/run_commands.log"
cp "$W/run/commands.json" "$OUT/" 2>/dev/null
tar -czf "$OUT/run.tar.gz" -C "$W/run" records logs store work/study 2>/dev/null
[ -n "${SKIP_ENGINE:-}" ] && exit 0  # a rerun of some commands only
cd benchmarks && timeout 80 python3 bench_device_selection.py --device cuda --out "$OUT/device_selection.json" --profile "$OUT/device_selection_profile.txt" 2>&1 | tail -4
timeout 90 python3 bench_mine_device.py --n 200000 --only device --out "$OUT/mine_device_200k.json" 2>&1 | tail -2
