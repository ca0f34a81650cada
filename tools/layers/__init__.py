"""Layers: what each hidden state holds, measured as the papers measure it.

Lives here: ``probe`` (linear probes for spaCy's POS and dependency labels per hidden state, the
control task and selectivity of Hewitt & Liang 2019, the peak and expected layer after Tenney et
al. 2019), ``contextuality`` (self-similarity, intra-sentence similarity and maximum explainable
variance with their anisotropy baselines, Ethayarajh 2019), ``cka`` (linear CKA between hidden
states, biased or debiased, Kornblith et al. 2019), ``rollout`` (attention rollout and attention
flow, Abnar & Zuidema 2020, against a gradient x input attribution), ``lens`` (the logit lens: the
masked-LM head read at every layer), ``inputs`` (what they share: size checks, STS-B or given
sentences, chunked cancellable encoding, words aligned to word pieces), ``facts`` (the typed
results and the ``str`` enums of every choice) and the family's formatters ``replies`` (probe,
contextuality, cka) and ``replies_maps`` (rollout, lens), the only modules that write words,
tables, charts and downloads.

Each command has a facts function (``probing``, ``contextuality_measures``, ``layer_similarity``,
``attention_rollout``, ``logit_lens``) and a Result-returning wrapper (``probe``, ``contextuality``,
``cka``, ``rollout``, ``lens``). Hidden states are numbered 0 (embeddings) to L.

May import: ``tools.core``, ``tools.models``, ``tools.encoding``, ``tools.charts``, ``tools.benchmark``'s
data (the STS-B splits), ``tools.attention``'s syntax (the one spaCy pipeline), ``tools.inspection``'s
masking (mask spelling and positions), numpy, pandas, scipy, scikit-learn, networkx and torch;
never ``assistant`` or ``gradio``.
"""
