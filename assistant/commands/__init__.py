"""The command language: one table, one row per command, grouped by family.

Lives here: ``table`` (``COMMANDS`` and ``TABLE``: the rows in ``help``'s order, the
small handlers of help, model, mask and benchmark, and the conversation commands),
the family modules ``similarity`` (compare, why, word, embed, static, neighbors),
``attention`` (attend, selfattn, syntax) and ``projection`` (project, vocab), each a
list of rows; ``common`` (the ``--pool`` and ``--layer`` options, the usual handler),
``spec`` (``CommandSpec``, ``Context``, ``Invocation``), ``options`` (typed options with
did-you-mean, their choices derived from the toolkit's enums) and ``phrasings`` (each
command's example questions, which plain-English routing compares a question with).

May import: ``tools``, ``assistant.session``, ``assistant.conversation``,
``assistant.versus``, ``assistant.sharing.links``; never ``assistant.app`` or
``assistant.render`` (the conversation commands reach this table through the
``Context``, so there is no cycle).
"""
