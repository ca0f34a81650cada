"""Thread count by input size: one torch thread against every core, per forward-pass size.

Batches of STS-B test sentences (about 16 tokens each) from 1 to 128 inputs, and
one long text, run through the encoder with ``sdpa`` as ``tools.encoding`` does,
with 1 thread and with every core, interleaved; medians. The crossover is the
smallest padded-token count from which every core wins at every larger size.
The load average is recorded: on a busy machine one thread wins at every size,
which is why large passes pick from measured speed (``tools.models.threads.ThreadChooser``).

    .venv/bin/python bench/threads.py [--repeats 7]
"""

from __future__ import annotations

import argparse

from common import interleaved, machine, median, quiet_libraries, stsb_sentences, write  # noqa: I001 - bench scripts import their sibling after sys.path is set


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    quiet_libraries()
    import torch

    from tools.core.config import Settings
    from tools.models.hub import ModelHub
    from tools.models.threads import SINGLE_THREAD_TOKENS, max_threads

    cores = max_threads()
    lm = ModelHub(Settings()).get("minilm")
    lm.encoder.set_attn_implementation("sdpa")
    tok = lm.tokenizer
    pool = sorted(set(stsb_sentences()), key=len)
    middle = pool[len(pool) // 2: len(pool) // 2 + 128]
    cases = [middle[:n] for n in (1, 2, 4, 8, 16, 32, 64, 128)] + [[" ".join(middle[:24])]]
    rows = []
    for texts in cases:
        batch = tok(texts, padding=True, truncation=True, return_tensors="pt")
        n_tokens = int(batch["input_ids"].numel())
        inner = max(1, 2048 // n_tokens)  # tiny passes are repeated so each timing is long enough to read

        def with_threads(k, inner=inner, batch=batch):
            def go():
                torch.set_num_threads(k)
                with torch.inference_mode():
                    for _ in range(inner):
                        lm.encoder(**batch, output_hidden_states=True)
            return go

        times = interleaved({"1": with_threads(1), str(cores): with_threads(cores)}, args.repeats)
        one, many = median(times["1"]) / inner * 1000, median(times[str(cores)]) / inner * 1000
        rows.append({"inputs": len(texts), "padded_tokens": n_tokens, "one_thread_ms": round(one, 2),
                     f"{cores}_threads_ms": round(many, 2), "one_over_all": round(one / many, 2)})
        print(f"  {len(texts):>4} inputs {n_tokens:>5} tokens: 1 thread {one:>8.2f} ms, {cores} threads "
              f"{many:>8.2f} ms -> {'1 thread' if one <= many else f'{cores} threads'} ({one / many:.2f})",
              flush=True)
    crossover = None
    for i, row in enumerate(rows):
        if all(r["one_over_all"] > 1 for r in rows[i:] if r["padded_tokens"] >= row["padded_tokens"]):
            crossover = row["padded_tokens"]
            break
    payload = {"benchmark": "threads", "peer": f"{cores} torch threads", "machine": machine(), "rows": rows,
               "crossover_tokens": crossover, "SINGLE_THREAD_TOKENS": SINGLE_THREAD_TOKENS}
    path = write("threads", payload)
    print(f"crossover: {crossover if crossover else 'none (one thread won at every size)'} padded tokens; "
          f"tools.models.threads.SINGLE_THREAD_TOKENS = {SINGLE_THREAD_TOKENS}; load {payload['machine']['load_avg']}")
    print(f"wrote {path.relative_to(path.parents[2])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
