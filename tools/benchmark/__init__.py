"""Benchmark: sentence vectors scored against human similarity judgements (STS-B).

Lives here: ``data`` (the STS-B splits beside the project or from the ``datasets``
library on a Space; stratified samples), ``files`` (one CSV/TSV/JSONL file of scored
pairs, read safely), ``metrics`` (correlations, the threshold decision, edge cases), ``access`` (which
files a face may read: the command line reads the user's own, the page only uploads
and the configured data folder), ``run`` (the benchmark itself: systems, correlations,
the best paraphrase threshold, edge cases, computed as facts),
``facts`` (what a benchmark finds, as typed dataclasses: pairs, systems' cosines, scores, choices) and
``reference`` (a model's cosines on STS-B dev by gold band and for unrelated pairs, that ``compare`` reads
a cosine against: shipped for the embedded model in ``references/``, computed and cached for others),
``published`` (the STS-B figures published for the embedded models) and
``replies`` (the family's one formatter: the summary, tables, chart and CSV / JSON downloads).

May import: ``tools.core``, ``tools.models``, ``tools.encoding``, ``tools.similarity``,
``tools.charts``; never ``assistant`` or ``gradio``.
"""
