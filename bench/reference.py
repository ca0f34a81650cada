"""The embedded model's reference cosines on STS-B dev, as shipped in ``tools/benchmark/references/``.

Encodes every sentence of STS-B dev (1,500 pairs) once with the embedded model (all-MiniLM-L6-v2 from its pip
package) and writes, per pooling at the last layer, the cosines of the dev pairs by gold band (0-1 ... 4-5)
and of unrelated pairs (each pair's first sentence against the second sentence of another pair, along three
seeded derangements: 4,500 pairs) as counts, means and the 0th-100th percentiles
(:func:`tools.benchmark.reference.compute_references`). `compare` reads a cosine against them;
``tests/test_verdicts.py`` checks them against an independent recomputation on a sample.

    python bench/reference.py                  # STS-B from ../shared/data/stsb or ASSISTANT_DATA_DIR
    python bench/reference.py --model minilm --out /tmp/minilm.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
STSB_DIR = ROOT.parent / "shared" / "data" / "stsb"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("ASSISTANT_DATA_DIR") or str(STSB_DIR),
                        help="folder holding sts-dev.tsv")
    parser.add_argument("--model", default="minilm", help="an embedded model's name")
    parser.add_argument("--out", default="", help="where the JSON goes (default: the package's references folder)")
    args = parser.parse_args(argv)

    from tools.benchmark.files import read_file
    from tools.benchmark.reference import SHIPPED, compute_references, to_json
    from tools.core.config import Settings
    from tools.models.hub import ModelHub

    settings = Settings(data_dir=args.data_dir, device="cpu")
    lm = ModelHub(settings).get(args.model)
    frame = read_file(Path(args.data_dir) / "sts-dev.tsv", settings).frame
    body = to_json(compute_references(lm, frame))
    out = Path(args.out) if args.out else SHIPPED / f"{lm.name}.json"
    out.write_text(json.dumps(body, indent=1) + "\n")
    for name, entry in body["poolings"].items():
        bands = ", ".join(f"{b} {d['mean']:.3f} (n={d['n']})" for b, d in entry["bands"].items())
        print(f"{name}: {bands}; unrelated {entry['unrelated']['mean']:.3f} (n={entry['unrelated']['n']}), "
              f"95th percentile {entry['unrelated']['percentiles'][95]:.3f}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
