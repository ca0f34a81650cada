"""The command language: one object per command, one module per family.

Lives here: ``base`` (``Command``, ``Context``, ``Invocation``, ``Texts``: a command's parameters, ``compute``
-> facts, ``reply`` -> Result, optional ``differ`` for ``--vs``, and its hints for the router), ``options``
(typed options generated from a command's parameter dataclass, with did-you-mean; their choices come from the
toolkit's enums), ``registry`` (the registered commands in ``help``'s order and the verb table), ``slots``
(the texts a question carries, which the commands' text-shape hints read; ``splitting`` cuts a payload into
texts), and the families: ``about`` (help,
model, tokenize), ``similarity`` (compare, why, word, embed, static, neighbors), ``fillmask`` (mask),
``attention`` (attend, selfattn, syntax), ``projection`` (project, vocab), ``layers`` (probe, contextuality,
cka, rollout, lens), ``benchmark``, ``corpus`` (corpus) and ``corpus_analysis`` (search, clusters, duplicates,
outliers), ``maps`` (map) and ``conversation`` (again, history, export).

May import: ``tools``, ``assistant.session``, ``assistant.versus``, ``assistant.parsing``,
``assistant.sharing``, ``assistant.corpora``, ``assistant.maps``; never ``assistant.app``,
``assistant.render`` or ``assistant.understanding``.
"""
