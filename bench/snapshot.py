"""Every example of every command (and variants: errors, follow-ups, --vs, questions), answered in one
conversation, written as JSON: run it before and after a refactor on the same machine and diff the two.

    .venv/bin/python bench/snapshot.py before.json
    ... change the code ...
    .venv/bin/python bench/snapshot.py after.json
    .venv/bin/python bench/snapshot.py --diff before.json after.json

The lines come from ``help`` itself (each command's examples), so the script works on any version of the
command table. Timings are dropped; artifacts are named with their byte size (the bytes of a
``.safetensors`` file depend on dict order). Commit no output: int8 numbers differ between CPUs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

#: Lines beyond the examples: refusals, follow-ups, side-by-side, questions.
VARIANTS = (
    "compare A cat. | A kitten. --pool all",
    "compare A cat. | A kitten. --pool nope",
    "compare only one",
    "again --pool cls",
    "now at layer 2",
    "compare A cat. | A kitten. --vs minilm:int8",
    "word bank | river bank | bank loan --vs minilm:int8",
    "tokenize Where is the bank? --vs minilm:int8",
    "attend The cat sat on the mat. --layer 2 --head 3 --vs minilm:int8",
    "neighbors bank --vs minilm:int8",
    "why A cat sat. | A kitten sat. --vs minilm:int8",
    "project A cat. | A dog. --vs minilm:int8",
    "How similar are 'the cat sat' and 'a kitten sat'?",
    "what are the nearest words to 'river'?",
    "attend The cat sat on the mat --layer 1 --head 3",
    "again --layer 2",
    "compare that with minilm:int8",
    "frobnicate A | B",
    "compare A | B --layer 99",
    "tokenize " + "word " * 40 + "--max-length 8 --truncation",
    "history",
    "help mask",
    "model",
)


def examples(run) -> list[str]:
    """``help``, then each command's examples as ``help <command>`` lists them."""
    listing = run("help")
    lines = ["help"]
    for row in listing["tables"][0]["rows"]:
        name = row[0]
        lines.append(f"help {name}")
        lines += re.findall(r"^- `(.+)`$", run(f"help {name}")["text"], flags=re.M)
    return lines


def snapshot() -> dict[str, object]:
    from assistant.dispatch import execute
    from assistant.session import Session
    from tools.benchmark.access import DataAccess
    from tools.core.config import Settings
    from tools.models.hub import ModelHub

    settings = Settings.from_env()
    hub, session = ModelHub(settings), Session()

    def run(line: str) -> dict:
        reply = execute(line, session, hub, settings, access=DataAccess.local())
        body = reply.to_json()
        body.pop("elapsed_ms", None)
        if reply.result is not None:
            body["artifacts"] = sorted(a.filename for a in reply.result.artifacts)
        return body

    out: dict[str, object] = {}
    for line in [*examples(run), *VARIANTS]:
        if line.split()[0] in ("export",):
            continue  # zip bytes carry timestamps
        print(line[:100], file=sys.stderr)
        out[line] = run(line)
    return out


def diff(a: Path, b: Path) -> int:
    before, after = json.loads(a.read_text()), json.loads(b.read_text())
    changed = [line for line in before if before[line] != after.get(line)]
    missing = [line for line in before if line not in after]
    for line in changed:
        print(f"--- {line[:120]}")
        x, y = before[line], after.get(line) or {}
        for key in sorted(set(x) | set(y)):
            if x.get(key) != y.get(key):
                print(f"    {key}: {json.dumps(x.get(key))[:300]}\n -> {json.dumps(y.get(key))[:300]}")
    print(f"{len(before) - len(changed)} of {len(before)} replies equal; {len(changed)} differ, "
          f"{len(missing)} missing; {len(set(after) - set(before))} new lines")
    return 1 if changed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--diff", action="store_true", help="compare two snapshot files")
    args = parser.parse_args()
    if args.diff:
        return diff(*args.paths[:2])
    args.paths[0].write_text(json.dumps(snapshot(), indent=0, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
