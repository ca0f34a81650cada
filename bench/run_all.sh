#!/bin/sh
# Every benchmark of issue 10, one after another (they share the cores; never run them in parallel).
# Results: bench/results/*.json. About 20-30 minutes on 2 busy cores. (bench/visitors.py, 200 visitors through
# the page, takes another half hour: run it on its own.)
set -e
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
uptime
for script in threads throughput latency http_overhead coldstart page gpu; do
    echo "== bench/$script.py"
    "$PY" "bench/$script.py" "$@"
done
echo "== bench/routing.py (minilm, minilm:int8)"
"$PY" bench/routing.py
"$PY" bench/routing.py --model minilm:int8
echo "== bench/openmp.py (OpenMP asleep when idle against its default, command by command)"
"$PY" bench/openmp.py
echo "== bench/why.py"
"$PY" bench/why.py
"$PY" bench/table.py > /dev/null && echo "README.md performance table rewritten from bench/results/"
