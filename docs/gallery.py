"""Screenshots of one reply of every command family, taken from the real page in headless Chromium.

    .venv/bin/python docs/gallery.py            # writes docs/gallery/<name>.png and docs/gallery/README.md
    .venv/bin/python docs/gallery.py probe cka  # takes only these shots again

It starts the app on a free port (and stops it), asks each command below as a person would,
and photographs the question and its reply. Rerun it after a change to the page or a chart.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "gallery"
STSB = ROOT.parent / "shared" / "data" / "stsb"

from tests.browsing import Watch, ask, chart_errors, launch

#: (file name, what it shows, the command line).
SHOTS = (
    ("question", "a question in plain English: the reply says the command it read, one click to edit",
     "are these two sentences paraphrases? 'A man plays guitar.' and 'Someone is playing an instrument.'"),
    ("compare", "paraphrases: every pooling of two sentences",
     "compare In 1995, the last survey, those numbers were equal. | The last time the survey was conducted, "
     "in 1995, those numbers matched. --pool all"),
    ("compare-matrix", "a similarity matrix of three texts",
     "compare A man plays guitar. | Someone is playing an instrument. | The stock market fell."),
    ("why", "which token pairs make two texts similar: the cells add up to compare's cosine",
     "why A man plays guitar. | Someone is playing an instrument."),
    ("compare-vs", "one question, two models side by side: how much does int8 change the answer?",
     "compare A cat sat on the mat. | A kitten sat on the rug. --vs minilm:int8"),
    ("tokenize", "word pieces, ids and special tokens", "tokenize Tokenization splits unbelievably long words."),
    ("word", "'bank' in three sentences, per layer strategy, against baselines",
     "word bank | We sat on the river bank. | The boat drifted to the bank of the river. | "
     "I deposited money at the bank."),
    ("static", "GloVe (one vector per word) beside the model's contextual vectors",
     "static bank | We sat on the river bank. | I deposited money at the bank."),
    ("neighbors", "nearest words in the input embeddings", "neighbors bank"),
    ("embed", "hidden states, token norms and the sentence vector", "embed BERT provides contextual embeddings."),
    ("attend", "every layer x head, and what each head does", "attend The cat sat on the mat because it was tired."),
    ("attend-head", "one head", "attend The cat sat on the mat --layer 2 --head 5"),
    ("selfattn", "self-attention rebuilt by hand, equal to the model's",
     "selfattn The police is chasing a criminal on the run. --layer 1 --causal"),
    ("syntax", "heads against the dependency parse", "syntax The cat sat on the mat"),
    ("project", "tokens in 2-D with a brush list", "project The bank of the river. | The bank raised its rates."),
    ("project-sentences", "one point per text",
     "project A man plays guitar. | Someone is playing an instrument. | The stock market fell. | A cat sleeps. "
     "--level sentences"),
    ("project-3d", "three linked views of a 3-D projection", "project The bank of the river. --dims 3"),
    ("project-vocab", "each token's move from its static row to its contextual vector",
     "project I deposited money at the bank. --basis vocab"),
    ("project-glove", "the texts' words in GloVe's static space: one point per word, whatever the sentence",
     "project I sat by the river bank. | I took out a bank loan. --basis glove"),
    ("vocab", "the input-embedding matrix coloured by word length", "vocab"),
    ("benchmark", "STS-B: Spearman per pooling, baselines, worst pairs",
     "benchmark --sample 300 --pool cls,mean,sbert"),
    ("mask", "fill-mask needs a masked-LM model (none is installable offline: the reply says so)",
     "mask The [MASK] sat on the mat."),
    ("probe", "what each layer knows: part of speech against its control task (Hewitt & Liang)",
     "probe --task pos --sentences 100"),
    ("contextuality", "self-similarity, intra-sentence similarity and MEV per layer beside the anisotropy baseline",
     "contextuality --sentences 120"),
    ("cka", "linear CKA between every pair of layers", "cka --sentences 60"),
    ("rollout", "attention rollout from every output token to every input token, beside raw attention",
     "rollout The cat sat on the mat because it was tired."),
    ("corpus-load", "your own texts: a file loaded, its text column found, encoded once",
     "corpus load reviews.csv --name reviews"),
    ("search", "the closest texts of your corpus, with their metadata", "search the parcel came late --k 5"),
    ("clusters", "your texts in groups with c-TF-IDF label words", "clusters --k 3"),
    ("help", "the command list", "help"),
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    from playwright.sync_api import sync_playwright

    from tests.test_corpus_commands import write_reviews

    only = set(sys.argv[1:])  # names of shots to take again (default: all); the README lists every shot
    env = dict(os.environ)
    demo = Path(tempfile.mkdtemp(prefix="gallery-"))
    write_reviews(demo / "reviews.csv", 150)  # the texts `corpus load` photographs
    env["ASSISTANT_DATA_DIR"] = ":".join(str(p) for p in (STSB, demo) if p.exists())
    env["ASSISTANT_CORPUS_DIR"] = str(demo / "corpora")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "assistant", "--host", "127.0.0.1", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 180
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError("the app did not start within 180 s") from None
                time.sleep(0.5)
        OUT.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            watch = Watch.on(page)
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("#command-box textarea")
            page.screenshot(path=str(OUT / "start.png"))
            ask(page, SHOTS[1][2])  # the README's picture: the page as a person sees it after one question
            page.wait_for_timeout(300)
            page.screenshot(path=str(ROOT / "docs" / "screenshot.png"))
            page.add_style_tag(content="#conversation .log { height: auto !important; overflow: visible !important; }")
            lines = ["| reply | what it shows | command |", "|---|---|---|",
                     "| ![start](start.png) | the page a first-time visitor sees | |"]
            for name, what, line in SHOTS:
                lines.append(f"| ![{name}]({name}.png) | {what} | `{line.replace('|', chr(92) + '|')}` |")
                if only and name not in only and not (name == "corpus-load" and only & {"search", "clusters"}):
                    continue
                reply = ask(page, line)
                page.wait_for_timeout(300)
                ask_node = reply.node.locator("xpath=preceding-sibling::div[contains(@class,'ask')][1]")
                box_a, box_r = ask_node.bounding_box(), reply.node.bounding_box()
                scroll = page.evaluate("window.scrollY")  # boxes are in the viewport; the clip is in the page
                top = (box_a["y"] if box_a else box_r["y"]) + scroll
                box_r["y"] += scroll
                page.screenshot(path=str(OUT / f"{name}.png"), full_page=True,
                                clip={"x": box_r["x"] - 4, "y": top - 4, "width": box_r["width"] + 8,
                                      "height": box_r["y"] + box_r["height"] - top + 8})
                print(f"{name}: {reply.charts()[1]} chart(s) drawn")
            lines.append("| ![map-100k](map-100k.png) | every row of a 100,000-row corpus on one WebGL map, cluster "
                         "labels at their centres (`bench/map.py`) | `map` |")
            lines.append("| ![map-100k-hover](map-100k-hover.png) | a map of 100,000 uploaded, encoded reviews: the "
                         "mouse on a point shows its text and metadata (`bench/map_story.py`) | `map` |")
            lines.append("| ![map-100k-lasso](map-100k-lasso.png) | a shift-drag lasso: the points inside stay, the "
                         "rest fade, the side panel lists them for `--in selection` (`bench/map_story.py`) | `map` |")
            problems = chart_errors(page)
            browser.close()
        (OUT / "README.md").write_text("# Gallery\n\nOne reply of every command family, photographed from the page "
                                       "by `docs/gallery.py`.\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
        if watch.page_errors or watch.console_errors or problems:
            print("page errors:", watch.page_errors, watch.console_errors, problems)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
