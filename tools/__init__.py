"""The embedding toolkit: pure computation over one shared model hub.

Every tool function takes a model (a :class:`~tools.models.hub.LoadedModel` or a model
name) plus its inputs, and returns a :class:`~tools.core.results.Result`. It works as
is in a notebook::

    from tools.similarity import compare
    compare.compare("minilm", ["A cat.", "A kitten."]).tables[0].frame

Inside each family the numbers come first and the words after: a tool computes a typed
fact (``compare.comparison(...)`` returns a :class:`~tools.similarity.facts.Comparison`,
cosine matrices and the choices made), and the family's one formatter, its ``replies``
module, turns that fact into the Result's sentences, tables, charts and downloads.

Lives here: ``core`` (results, errors, settings), ``models`` (the hub and its
backends), ``encoding`` (text -> hidden states and sentence vectors), the command
families ``similarity``, ``attention``, ``projection``, ``benchmark``, ``inspection``
(fill-mask, tokenize, a model's facts), ``layers`` (probes, contextuality, CKA, rollout,
the logit lens) and ``corpus`` (a person's own texts: stored, encoded once, searched,
clustered), and ``charts`` (Altair builders).

May import: torch, transformers, sentence-transformers, numpy, pandas, altair and the
other libraries of the job; never gradio and never the ``assistant`` package.
"""

import os as _os

from tools.models.cpu import cores as _cores  # (standard library only: torch is not loaded yet)

#: On a machine with this many cores or fewer, OpenMP's threads (torch's) sleep as soon as their work is done
#: instead of spinning for it (OpenMP's own default): they share the cores with ONNX Runtime's threads, and spinning
#: ones slowed the ONNX Runtime pass that followed (a question's embedding) and the other way round. Measured on a
#: 2-core Intel Xeon (family 6 model 207, avx512, no AMX; the README's performance section, 2026-11-27): a question
#: 1.22-1.28x its command against 1.31-1.41x (five runs each), `word` 2-3x and `attend` 20-33% faster, `benchmark`
#: 10-36% and `rollout` 2-18% slower (three runs each). Measured on 2 cores only: above that OpenMP keeps its default.
#: Set before torch is imported (it reads the variable once); an ``OMP_WAIT_POLICY`` already set is left alone.
PASSIVE_OPENMP_CORES = 2

if _cores() <= PASSIVE_OPENMP_CORES:
    _os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
