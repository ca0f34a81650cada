"""Per-command latency, in process, warm: this project against the notebook way.

For every command in the command table (``assistant/commands/``), its first example runs
through ``assistant.dispatch.execute`` on the default model (loaded before timing).
Three runs per repeat, interleaved:

- ``ours``: the encoding cache cleared first (texts the process has not seen);
- ``ours cached``: the same line again (texts seen before: a user re-running);
- ``notebook``: the way the source notebooks do it, one sentence at a time and a
  separate forward pass per question: every ``encode`` call becomes one forward
  pass per text, no deduplication, no cache, eager attention, PyTorch's default
  threads. Same command code otherwise, so the ratio is the encoder's share.

Each timed line runs in a conversation that has answered one ``compare`` (untimed),
so ``again``, ``history`` and ``export`` have a past. p50 / p95 are over the repeats (with few repeats p95 is
close to the slowest run).

    .venv/bin/python bench/latency.py [--repeats 7] [--only compare,word]
"""

from __future__ import annotations

import contextlib
import sys

from common import SETUP_LINE, command_bench_args, machine, percentile, quiet_libraries, write  # noqa: I001 - bench scripts import their sibling after sys.path is set


@contextlib.contextmanager
def notebook_way():
    """Patch every module's ``encode`` to one forward pass per text, uncached, eager, default threads."""
    import torch

    from tools.encoding import cache, encode, threads

    original = encode.encode
    default_threads = torch.get_num_threads()

    def one_at_a_time(lm, texts, pairs=None, *, attentions=False, max_length=None, last_only=False):
        out = []  # a notebook keeps every hidden state (output_hidden_states=True), whatever it pools
        for i, text in enumerate(texts):
            cache.clear_cache(lm)
            pair = None if pairs is None else [pairs[i]]
            out.append(original(lm, [text], pair, attentions=attentions, max_length=max_length)[0])
        return out

    class default_threads_for(threads.threads_for):
        def __init__(self, n_tokens, chooser=None):
            super().__init__(n_tokens, None)
            self.wanted = default_threads

    from tools.models.backends import torch_fp32

    class eager(torch_fp32._attention_kind):
        def __init__(self, encoder, attentions):
            super().__init__(encoder, attentions)
            self.wanted = "eager"

    patched = [(m, "encode", original, one_at_a_time) for m in list(sys.modules.values())
               if getattr(m, "encode", None) is original]
    patched += [(m, "threads_for", threads.threads_for, default_threads_for) for m in list(sys.modules.values())
                if getattr(m, "threads_for", None) is threads.threads_for]
    patched.append((torch_fp32, "_attention_kind", torch_fp32._attention_kind, eager))
    for module, name, _, new in patched:
        setattr(module, name, new)
    try:
        yield
    finally:
        for module, name, old, _ in patched:
            setattr(module, name, old)


def main(argv: list[str] | None = None) -> int:
    args = command_bench_args(__doc__.split("\n")[0], argv)
    quiet_libraries()
    import logging
    import time

    logging.getLogger("assistant").setLevel(logging.CRITICAL)

    from assistant.commands.registry import COMMANDS
    from assistant.dispatch import execute
    from assistant.session import Session
    from tools.core.config import Settings
    from tools.encoding.cache import clear_cache
    from tools.models.hub import ModelHub

    settings = Settings.from_env()
    hub = ModelHub(settings)
    lm = hub.get()
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    specs = [s for s in COMMANDS if not only or s.name in only]

    def once(line: str) -> tuple[float, bool, str]:
        session = Session()
        execute(SETUP_LINE, session, hub, settings)  # untimed: gives `again`, `history`, `export` a past
        start = time.perf_counter()
        reply = execute(line, session, hub, settings)
        return time.perf_counter() - start, reply.ok, reply.error or ""

    rows = []
    for spec in specs:
        line = spec.examples[0]
        clear_cache(lm)
        first, ok, error = once(line)  # warm-up: lazy imports, spaCy, GloVe, charts
        repeats = args.heavy_repeats if first > 3 else args.repeats
        times: dict[str, list[float]] = {"ours": [], "ours cached": [], "notebook": []}
        for _ in range(repeats):
            clear_cache(lm)
            times["ours"].append(once(line)[0])
            times["ours cached"].append(once(line)[0])
            with notebook_way():
                seconds, notebook_ok, notebook_error = once(line)
            if notebook_ok != ok:  # a peer that fails fast is no peer: stop rather than print a ratio
                raise SystemExit(f"the notebook way of `{line}` answered differently: {notebook_error or 'ok'}")
            times["notebook"].append(seconds)
        p = {k: (percentile(v, 50) * 1000, percentile(v, 95) * 1000) for k, v in times.items()}
        row = {"command": spec.name, "line": line, "ok": ok, "error": error[:120], "repeats": repeats,
               "ours_p50_ms": round(p["ours"][0], 1), "ours_p95_ms": round(p["ours"][1], 1),
               "cached_p50_ms": round(p["ours cached"][0], 1), "cached_p95_ms": round(p["ours cached"][1], 1),
               "notebook_p50_ms": round(p["notebook"][0], 1), "notebook_p95_ms": round(p["notebook"][1], 1),
               "speedup_p50": round(p["notebook"][0] / p["ours"][0], 2),
               "speedup_cached_p50": round(p["notebook"][0] / p["ours cached"][0], 2)}
        rows.append(row)
        print(f"  {spec.name:<10} ours p50 {row['ours_p50_ms']:>8.1f} ms p95 {row['ours_p95_ms']:>8.1f} | "
              f"cached p50 {row['cached_p50_ms']:>8.1f} | notebook p50 {row['notebook_p50_ms']:>8.1f} "
              f"p95 {row['notebook_p95_ms']:>8.1f} | {row['speedup_p50']:>5.2f}x"
              + ("" if ok else f"  (error reply: {error[:60]})"), flush=True)
    payload = {"benchmark": "latency", "peer": "the notebook way: one forward pass per text per call, "
               "no cache, eager attention, default threads", "model": lm.name, "machine": machine(),
               "rows": rows}
    path = write("latency", payload)
    print(f"wrote {path.relative_to(path.parents[2])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
