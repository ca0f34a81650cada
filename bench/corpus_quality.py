"""Corpus quality on real labels (STS-B): search, clusters and duplicates against the peers' own tools.

    python bench/corpus_quality.py [--split test]

The corpus is every distinct sentence of one STS-B split, loaded through ``tools.corpus`` (the packaged
minilm, its own pooling) exactly as ``corpus load`` does. The peer is sentence-transformers on the same
sentences (``SentenceTransformer(...).encode`` + ``util.semantic_search``; scikit-learn's ``KMeans``).

1. Partners: for every pair scored 4.0 or more, search with one sentence: is the other among the 10 best
   hits (the query itself left out)? Both directions; ours (`search`'s index) against the peer's.
2. Clusters against the source files (MSRvid, images, headlines, ...): NMI of our `clusters` with k = the
   number of files, against k-means on the peer's vectors with the same k and seed.
3. Duplicates: of the pairs scored 5.0 (the same meaning), how many our `duplicates` joins into one group
   at its default threshold, and at 0.90; how many pairs it reports in all.

Quality does not depend on the machine's load; the CPU is printed anyway.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import STSB_TEST, machine, quiet_libraries, write  # noqa: E402


def read_split(path: Path) -> tuple[list[tuple[str, str, float, str]], list[str], list[str]]:
    """(pairs as (a, b, score, file)), the distinct sentences, and each sentence's source file (first seen)."""
    pairs, files = [], {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) < 7:
            continue
        a, b, score, source = cols[5].strip(), cols[6].strip(), float(cols[4]), cols[1]
        pairs.append((a, b, score, source))
        files.setdefault(a, source)
        files.setdefault(b, source)
    sentences = list(files)
    return pairs, sentences, [files[s] for s in sentences]


def partner_rate(pairs: list[tuple[str, str, float, str]], position: dict[str, int], top: np.ndarray) -> float:
    """Share of (query, partner) directions of the 4.0+ pairs whose partner is among the query's 10 best others."""
    found = total = 0
    for a, b, score, _ in pairs:
        if score < 4.0 or a == b:
            continue
        for q, p in ((a, b), (b, a)):
            hits = [h for h in top[position[q]] if h != position[q]][:10]
            found += position[p] in hits
            total += 1
    return found / total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="test", choices=("train", "dev", "test"))
    parser.add_argument("--model", default="minilm", help="the model the corpus is encoded with (minilm:int8: the "
                        "fast path; the peer stays sentence-transformers' full precision)")
    args = parser.parse_args(argv)
    quiet_libraries()
    import torch
    from sentence_transformers import SentenceTransformer, util
    from sklearn.cluster import KMeans
    from sklearn.metrics import normalized_mutual_info_score

    from tools.core.config import Settings
    from tools.corpus import clusters as corpus_clusters
    from tools.corpus import duplicates as corpus_duplicates
    from tools.corpus.encode import load_corpus
    from tools.corpus.store import CorpusStore
    from tools.models.hub import ModelHub

    facts = machine()
    print(f"machine: {facts}")
    path = STSB_TEST.with_name(f"sts-{args.split}.tsv")
    pairs, sentences, files = read_split(path)
    position = {s: i for i, s in enumerate(sentences)}
    work = Path(tempfile.mkdtemp(prefix="bench-corpus-quality-"))
    source = work / "sentences.txt"
    source.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    settings = Settings(corpus_max_rows=len(sentences) + 1, corpus_disk_mb=100_000)
    lm = ModelHub(settings).get(args.model)
    _, report = load_corpus(CorpusStore(work / "store"), source, lm, settings)
    corpus = CorpusStore(work / "store").open(report.info.name)
    texts = list(corpus.rows()["text"])
    assert texts == sentences, "the corpus keeps the file's order and text"
    ours_top, _ = corpus.index().search(np.asarray(corpus.unit_vectors()), 11)

    peer = SentenceTransformer(str(lm.source.location), device="cpu")
    theirs = peer.encode(sentences, batch_size=32, convert_to_tensor=True, normalize_embeddings=True)
    hits = util.semantic_search(theirs, theirs, top_k=11)
    peer_top = np.array([[h["corpus_id"] for h in row] for row in hits])

    strong = sum(1 for p in pairs if p[2] >= 4.0 and p[0] != p[1])
    rate_ours, rate_peer = partner_rate(pairs, position, ours_top), partner_rate(pairs, position, peer_top)
    print(f"\nSTS-B {args.split}: {len(pairs):,} pairs, {len(sentences):,} distinct sentences, "
          f"{len(set(files))} source files")
    print(f"partner in the top 10 ({strong:,} pairs scored 4.0+, both directions): ours {rate_ours:.1%}, "
          f"sentence-transformers semantic_search {rate_peer:.1%}")

    k = len(set(files))
    ours_groups = corpus_clusters.clusters(corpus, k, seed=0)
    peer_labels = KMeans(n_clusters=k, n_init=10, random_state=0).fit_predict(theirs.cpu().numpy())
    nmi_ours = normalized_mutual_info_score(files, ours_groups.labels)
    nmi_peer = normalized_mutual_info_score(files, peer_labels)
    print(f"clusters against the {k} source files (NMI): ours `clusters --k {k}` {nmi_ours:.3f}, "
          f"scikit-learn KMeans on sentence-transformers vectors {nmi_peer:.3f}")

    same = [(position[a], position[b]) for a, b, score, _ in pairs if score >= 5.0 and a != b]
    rows: dict[str, object] = {}
    for threshold in (corpus_duplicates.DEFAULT_THRESHOLD, 0.90):
        found = corpus_duplicates.duplicates(corpus, threshold)
        group_of = {row: g for g, members in enumerate(found.groups) for row in members}
        joined = sum(1 for a, b in same if a in group_of and group_of.get(a) == group_of.get(b))
        cos = [float(torch.dot(theirs[a], theirs[b])) for a, b in same]
        peer_joined = sum(1 for c in cos if c >= threshold)
        print(f"duplicates at {threshold:.2f}: {joined} of the {len(same)} pairs scored 5.0 joined "
              f"({joined / len(same):.1%}); the peer's cosine reaches {threshold:.2f} on {peer_joined}; "
              f"{len(found.pairs):,} pairs reported in all, {len(found.groups):,} groups")
        rows[f"duplicates_{threshold:.2f}"] = {"joined": joined, "of": len(same), "peer_over_threshold": peer_joined,
                                                "pairs_reported": len(found.pairs), "groups": len(found.groups)}
    write("corpus_quality" if args.model == "minilm" else f"corpus_quality-{args.model.replace(':', '-')}",
          {"model": lm.name, "machine": facts, "split": args.split, "pairs": len(pairs),
                             "sentences": len(sentences), "partner_top10": {"ours": rate_ours, "peer": rate_peer,
                                                                            "pairs": strong},
                             "nmi": {"ours": nmi_ours, "peer_kmeans": nmi_peer, "k": k}, **rows})


if __name__ == "__main__":
    main()
