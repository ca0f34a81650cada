#!/bin/sh
# Every benchmark of issue 10, one after another (they share the cores; never run them in parallel).
# Results: bench/results/*.json. About 15-25 minutes on 2 busy cores.
set -e
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
uptime
for script in threads throughput latency http_overhead coldstart page gpu; do
    echo "== bench/$script.py"
    "$PY" "bench/$script.py" "$@"
done
"$PY" bench/table.py > /dev/null && echo "README.md performance table rewritten from bench/results/"
