#!/usr/bin/env bash
# Build bench/peers/.venv: sentence-transformers with its ONNX (optimum-onnx) and OpenVINO
# (optimum-intel) backends, the peers bench/throughput.py drives by subprocess.
#   bash bench/peers/setup.sh            # PYTHON=python3.11 bash bench/peers/setup.sh to choose the interpreter
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
py="${PYTHON:-python3}"
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
echo "torch==2.13.0" > "$constraints"
"$venv/bin/python" -m pip install --quiet torch==2.13.0
"$venv/bin/python" -m pip install --quiet -r "$here/requirements.txt" -c "$constraints"
"$venv/bin/python" -m pip freeze > "$here/.venv/freeze.txt"
echo "peers ready: $venv ($(grep -ciE '^(sentence-transformers|optimum-onnx|optimum-intel|openvino|onnxruntime)==' "$here/.venv/freeze.txt") peer packages)"
