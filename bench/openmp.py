"""OpenMP's threads asleep when idle (``OMP_WAIT_POLICY=PASSIVE``, the toolkit's default on 2 cores or fewer)
against OpenMP's own default (spinning for a while after each piece of work), command by command.

Each round runs one fresh process per policy, alternated (so a noisy neighbour slows both alike); a process
runs every command once untimed, then ``--repeats`` times with the model's encoding cache cleared before each,
and reports each command's median. Prints every round's medians, the median over the rounds and the ratio
asleep / default per command, with the machine and the load; writes bench/results/openmp.json. OpenMP's own
default is an empty ``OMP_WAIT_POLICY`` (libgomp reads it as unset and says so on stderr, which is dropped here):
a value already set is one the toolkit leaves alone. For a question against its command under both policies,
run ``bench/routing.py`` as it is and with ``OMP_WAIT_POLICY=`` in front.

    .venv/bin/python bench/openmp.py [--rounds 3] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from common import STSB_TEST, machine, median, quiet_libraries, write  # noqa: I001 - bench scripts import their sibling after sys.path is set

LONG = ("The committee, which had been meeting in secret for several weeks, finally announced that the new library "
        "would open next spring despite the objections raised by residents who feared the traffic it might bring.")
#: Commands that mix torch's work with ONNX Runtime's, short and long; `benchmark` and `probe` read STS-B.
COMMANDS = (
    "compare the cat sat | a kitten sat",
    "word bank | We sat on the river bank. | The bank approved the loan. | A bank of clouds.",
    "why A man is playing a guitar. | Someone plays an instrument.",
    f"embed {LONG}",
    f"attend {LONG}",
    f"rollout {LONG}",
    "project a b c | d e f | g h i | j k l | m n o | p q r | s t u | v w x --dims 2 --method tsne",
    "benchmark --sample 100",
    "probe --sentences 60",
)
#: Each policy's environment (an empty OMP_WAIT_POLICY is OpenMP's own default, see above); the toolkit's choice
#: comes first and the ratios are against the last.
POLICIES = {"asleep": {"OMP_WAIT_POLICY": "PASSIVE"},
            "spin 10k": {"OMP_WAIT_POLICY": "", "GOMP_SPINCOUNT": "10000"},
            "default": {"OMP_WAIT_POLICY": ""}}


def child(repeats: int) -> dict[str, float]:
    """This process's median milliseconds per command."""
    import time

    from assistant.dispatch import execute
    from assistant.session import Session
    from tools.core.config import Settings
    from tools.encoding.cache import clear_cache
    from tools.models.hub import ModelHub

    settings = Settings(data_dir=str(STSB_TEST.parent))
    hub = ModelHub(settings)
    lm = hub.get(settings.model)
    out = {}
    for line in COMMANDS:
        reply = execute(line, Session(), hub, settings)
        if not reply.ok:
            raise SystemExit(f"{line[:40]}: {reply.error}")
        times = []
        for _ in range(repeats):
            clear_cache(lm)
            start = time.perf_counter()
            execute(line, Session(), hub, settings)
            times.append((time.perf_counter() - start) * 1000)
        out[line] = median(times)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    quiet_libraries()
    if args.child:
        print(json.dumps(child(args.repeats)))
        return 0
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in POLICIES}
    loads = []
    for _ in range(args.rounds):
        for name, policy in POLICIES.items():
            loads.append([round(x, 2) for x in os.getloadavg()])
            done = subprocess.run([sys.executable, __file__, "--child", "--repeats", str(args.repeats)],
                                  env={**os.environ, **policy}, capture_output=True, text=True,
                                  check=True)
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{args.rounds} rounds x {args.repeats} repeats; loads at each process's start {loads}")
    ratios = {}
    for line in COMMANDS:
        got = {name: [r[line] for r in rounds] for name, rounds in runs.items()}
        ratios[line] = {name: round(median(values) / median(got["default"]), 3) for name, values in got.items()}
        each = "; ".join(f"{name} {' '.join(f'{v:.0f}' for v in values)} ms ({ratios[line][name]:.2f}x)"
                         for name, values in got.items())
        print(f"{line[:50]:50}  {each}")
    write("openmp", {"machine": machine(), "rounds": args.rounds, "repeats": args.repeats, "loads": loads,
                     "runs_ms": runs, "over_default": ratios})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
