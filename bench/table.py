"""Rewrite the README's performance table from ``bench/results/*.json``, never by hand.

Each row is one benchmark's result file: what it measured, the named peer timed in the same
run, the ratio, and when and under what load it ran (every row says its own date and load
average, since rows come from different runs). The table goes between the
``<!-- perf-table -->`` markers of README.md, headed by the commit it was written at.

    .venv/bin/python bench/table.py [--check]

``--check`` prints the table and exits 1 when README.md differs (nothing is written).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
START, END = "<!-- perf-table -->", "<!-- /perf-table -->"


def _load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _cpu(result: dict) -> str:
    """The CPU a result was measured on: model name, family/model and kernel flags where recorded, cores."""
    m = result.get("machine", {})
    if not m.get("cpu"):
        return "not recorded"
    flags = ", ".join(m.get("cpu_flags", []))
    detail = "; ".join(x for x in (m.get("cpu_family_model", ""), flags) if x)
    return f"{m['cpu']}{f' ({detail})' if detail else ' (flags not recorded)'}, {m.get('cores', '?')} cores"


def _when(result: dict) -> str:
    facts = result.get("machine", {})
    load = facts.get("load_avg") or result.get("load_average") or []
    date = facts.get("date") or str(result.get("when", ""))[:16].replace("T", " ")
    return f"{date}, load {load[0]:.1f}" if load else date


def _throughput(r: dict) -> list[list[str]]:
    runs = {row["run"]: row for row in r["rows"]}
    peer = runs["sentence-transformers"]
    out = []
    for name, label in (("ours", "STS-B test, 2,758 sentences, cache cold (`bench/throughput.py`)"),
                        ("ours int8", "same, int8 fast path (`minilm:int8`)"),
                        ("ours warm cache", "same, warm cache")):
        if name in runs:
            row = runs[name]
            extra = f"; Spearman {row['spearman']:.4f} vs {peer['spearman']:.4f}" if name == "ours int8" else ""
            out.append([label, f"{row['median_s']:.2f} s ({row['sentences_per_s']:.0f}/s){extra}",
                        f"sentence-transformers `encode`: {peer['median_s']:.2f} s",
                        f"**{peer['median_s'] / row['median_s']:.2f}x** (medians of {r['repeats']})"])
    out.append(["same vectors (sbert pooling)", f"largest difference {r['max_abs_diff_vs_peer']:.1e}", "",
                "below 1e-5" if r["same_vectors_1e-5"] else "**over 1e-5**"])
    return out + _best_backends(r, runs)


def _best_backends(r: dict, runs: dict[str, dict]) -> list[list[str]]:
    """Ours against sentence-transformers' fastest own backend of the same precision (onnx, its int8 export,
    openvino), where the run had them."""
    precision = r.get("peer_precision", {})
    out = []
    for ours, label, kinds in (("ours", "same, full precision against sentence-transformers' fastest fp32 "
                                "backend (peer venv)", ("fp32",)),
                               ("ours int8", "same, int8 fast path against its fastest int8 / bf16 backend "
                                "(peer venv)", ("int8", "bf16"))):
        peers = [runs[n] for n, p in precision.items() if p in kinds and "peer venv" in n and n in runs]
        if ours not in runs or not peers:
            continue
        best = min(peers, key=lambda row: row["median_s"])
        out.append([label, f"{runs[ours]['median_s']:.2f} s",
                    f"`{best['run'].replace(' (peer venv)', '')}` ({precision[best['run']]}): {best['median_s']:.2f} s",
                    f"**{best['median_s'] / runs[ours]['median_s']:.2f}x** (medians of {r['repeats']})"])
    return out


def _latency(r: dict) -> list[list[str]]:
    rows = {row["command"]: row for row in r["rows"]}
    picked = [c for c in ("compare", "project", "benchmark") if c in rows]
    ours = ", ".join(f"`{c}` {rows[c]['ours_p50_ms']:,.0f} ms" for c in picked)
    peer = ", ".join(f"{rows[c]['notebook_p50_ms']:,.0f} ms" for c in picked)
    ratio = ", ".join(f"{rows[c]['speedup_p50']:.1f}x" for c in picked)
    return [["per command, warm, p50 (`bench/latency.py`)", ours, f"the notebook way: {peer}", ratio]]


def _http(r: dict) -> list[list[str]]:
    rows = {row["command"]: row for row in r["rows"]}
    c = rows.get("compare")
    if not c:
        return []
    return [["over HTTP, p50 (`bench/http_overhead.py`)",
             f"`run` with `compare`: {c['run_p50_ms']:.0f} ms ({c['command_p50_ms']:.0f} ms of it the command)",
             f"a no-op endpoint in the same app: {c['noop_p50_ms']:.0f} ms", f"{c['run_over_noop']:.2f}x"]]


def _coldstart(r: dict) -> list[list[str]]:
    rss = r["ours_rss_mb"]
    return [["process start to first reply (`bench/coldstart.py`)", f"{r['ours_median_s']:.2f} s",
             f"a sentence-transformers script: {r['peer_median_s']:.2f} s",
             f"**{r['ours_over_peer']:.2f}x** the peer's time"],
            ["memory (RSS)", f"{rss['after_load']:.0f} MB after the default model, "
             f"{rss['after_first_reply']:.0f} MB after the first reply",
             f"sentence-transformers: {r['peer_rss_mb']['after_load']:.0f} MB after its model", ""]]


def _page(r: dict) -> list[list[str]]:
    turns = r["turns"]
    return [["the page, Enter -> `compare` chart drawn in Chromium, p50 / p95 (`bench/page.py`)",
             f"{r['compare_p50_ms']:.0f} ms / {r['compare_p95_ms']:.0f} ms",
             f"the same page's round trip with no chart (`help compare`): {r['no_chart_p50_ms']:.0f} ms",
             f"the chart adds {r['compare_p50_ms'] - r['no_chart_p50_ms']:.0f} ms"],
            [f"the page, {len(turns)} turns of `attend` (`bench/page.py`)",
             f"sent per command: {turns[2]['sent']} B at turn 3, {turns[-1]['sent']} B at turn {len(turns)}",
             "reply time, last three turns vs turns 2-4", f"{r['late_vs_early']:.2f}x"]]


def _routing(r: dict) -> list[list[str]]:
    runs = r["runs"]
    return [[f"a question in plain English, {r['model']} (`bench/routing.py`)",
             f"routing {runs['route']['median_ms']:.0f} ms; question answered {runs['question']['median_ms']:.0f} ms",
             f"the same command typed: {runs['command']['median_ms']:.0f} ms",
             f"{r['question_over_command']:.2f}x" + (f" (median over the questions; {r['questions_within']} of "
                                                      f"{r['questions']} within {r['within']}x)" if "each" in r else
                                                      " (pooled medians)")]]


def _why(r: dict) -> list[list[str]]:
    lat = r["latency"]
    ours = ", ".join(f"{pool} {lat[pool]['why_s_per_pair'] * 1000:,.0f} ms" for pool in lat)
    peer = ", ".join(f"{lat[pool]['compare_s_per_pair'] * 1000:,.0f} ms" for pool in lat)
    ratio = ", ".join(f"{lat[pool]['ratio']:.1f}x" for pool in lat)
    return [["`why` per pair, by pooling (`bench/why.py`)", ours, f"`compare` of the same pair: {peer}", ratio]]


def _visitors(r: dict) -> list[list[str]]:
    rows = {row["mode"]: row for row in r["rows"]}
    frees, keeps = rows["frees"], rows["keeps"]
    return [[f"{frees['visitors']} visitors through the page, 5 heavy commands each, then the tab closed "
             "(`bench/visitors.py`)",
             f"{frees['kept_per_visitor_mb'] * 1024:,.0f} KB of RSS kept per departed visitor; replies "
             f"{frees['received']}/{frees['sent']}",
             f"the same app keeping every conversation (as Gradio alone does for an hour): "
             f"{keeps['kept_per_visitor_mb'] * 1024:,.0f} KB",
             f"{frees['kept_per_visitor_mb'] / keeps['kept_per_visitor_mb']:.2f}x (load at the end "
             f"{r['load_after'][0]:.1f})"]]


def _soak(r: dict) -> list[list[str]]:
    runs = r["runs"]
    rows = runs[0]["rows"]
    legs, per_leg = len(rows) - 1, rows[-1]["visitors"]
    pages = sum(row["via"] == "page" for row in rows[1:])
    via = "through the page" if pages == legs else "over HTTP with the page's own events" if not pages else \
        f"{pages} legs through the page, then HTTP with the page's events"
    last = [run["rows"][-1] for run in runs]

    def med(key: str) -> float:
        return statistics.median(row[key] for row in last)

    ours = (f"last leg: {med('rss_kb_per_visitor'):,.0f} KB of RSS, {med('traced_kb_per_visitor'):.1f} KB traced, "
            f"{med('objects_per_visitor'):.1f} objects per departed visitor"
            + (f" (medians of {len(runs)} runs)" if len(runs) > 1 else ""))
    half = len(rows) // 2
    mid, end = rows[half]["rss_mb"], rows[-1]["rss_mb"]
    plateau = [f"RSS {mid:,.0f} MB after {half * per_leg} visitors, {end:,.0f} MB after {legs * per_leg} "
               f"({100 * (end - mid) / mid:+.1f}%)"]
    disk = (f"disk per visitor: {med('conversations_kb_per_visitor'):.0f} KB of kept conversation (until the idle "
            f"time), {med('gradio_cache_kb_per_visitor'):.0f} KB of Gradio's file cache (its `delete_cache` age)")
    return [[f"{legs} legs of {per_leg} visitors ({via}), 5 commands each, the page closed and freed after "
             f"{runs[0]['grace_s']:g} s (`bench/soak.py`)", ours, f"{plateau[0]}; {disk}", ""]]


def _map(r: dict) -> list[list[str]]:
    out = []
    vega = {v["rows"]: v for v in r.get("vega_lite", [])}
    for size in ("100000", "1000000"):
        if size not in r:
            continue
        m, n = r[size], int(size)
        pan = m["panning"]
        peer = vega.get(n)
        peer_cell = (f"the same points as a Vega-Lite scatter: drawn {peer['embed_to_drawn_ms'] / 1000:.2f} s after "
                     f"its {peer['spec_bytes'] / 1e6:.1f} MB spec was in the page, panning p95 "
                     f"{peer['panning']['frame_ms_p95']:.0f} ms" if peer else
                     "TensorBoard Projector's stated limit: 100,000 points")
        out.append([f"`map` of {n:,} points in headless Chromium (SwiftShader WebGL; `bench/map.py`)",
                    f"every point drawn {m['reply_to_drawn_ms'] / 1000:.2f} s after the reply; "
                    f"{m['bytes_per_point']:.0f} bytes a point; panning: redrawn frames median "
                    f"{pan['redrawn_frame_ms_median']:.0f} ms, p95 {pan['redrawn_frame_ms_p95']:.0f} ms; JS heap "
                    f"{m['js_heap_mb_after']:.0f} MB", peer_cell, ""])
    fit = r.get("fit", {})
    if isinstance(fit.get("umap_100k_384d_s"), list):
        out.append(["layout of 100,000 x 384 (`bench/map.py`, every repeat)",
                    f"UMAP on {fit['umap_fit_rows']:,} rows + transform for the rest: "
                    + " / ".join(f"{s:.1f} s" for s in fit["umap_100k_384d_s"]),
                    "PCA of every row: " + " / ".join(f"{s:.1f} s" for s in fit["pca_100k_384d_s"]), ""])
    return out


def _map_story(r: dict) -> list[list[str]]:
    return [[f"a person's {r['rows']:,}-row CSV uploaded, encoded, mapped, lassoed, searched, the server restarted "
             "(`bench/map_story.py`)", f"encoded in {r['load_s']:.0f} s with progress ({r['rows'] / r['load_s']:.0f} "
             "texts/s)", "", ""]]


SOURCES = [("throughput", _throughput), ("throughput-amd-26-2", _throughput),
           ("throughput-amd-25-17", _throughput), ("throughput-amd-25-1", _throughput),
           ("throughput-amd-25-1-run2", _throughput),
           ("throughput-amd-25-1-run3", _throughput), ("throughput-xeon-6-207-amx-2core-run4", _throughput),
           ("throughput-xeon-6-207-amx-2core-run5", _throughput), ("latency", _latency),
           ("http_overhead", _http),
           ("coldstart", _coldstart), ("page", _page), ("routing", _routing), ("routing-int8", _routing),
           ("why", _why), ("visitors", _visitors), ("soak-page", _soak), ("soak", _soak),
           ("map", _map), ("map-story", _map_story)]


def table() -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    lines = [f"Written by `bench/table.py` at commit {commit} from `bench/results/*.json`; each row says "
             "the CPU it ran on, when, and the machine's load then (2 shared cores; ratios are within one run, "
             "absolute times move with load).", "",
             "| measure | this project | peer, same run | ratio | CPU (the flags that matter) | run |",
             "|---|---|---|---|---|---|"]
    for name, build in SOURCES:
        result = _load(name)
        if result is None:
            continue
        for cells in build(result):
            lines.append("| " + " | ".join([*cells, _cpu(result), _when(result)]) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    readme = ROOT / "README.md"
    text = readme.read_text()
    if START not in text or END not in text:
        print(f"README.md has no {START} ... {END} markers", file=sys.stderr)
        return 1
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{START}\n{table()}\n{END}{tail}"
    print(table())
    if args.check:
        return int(new != text)
    readme.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
