"""Sharing: a conversation leaves the page.

Lives here: ``links`` (permalinks that replay a command line, follow-up specs) and
``export`` (a conversation as a Markdown zip with its charts and tables, or as one
offline HTML file) and ``mapfile`` (one corpus map as a standalone offline HTML file, the scatter
bundle inlined).

May import: ``tools.core``, ``assistant.session``, ``assistant.render``; never
``assistant.commands`` (the command table reaches export through the context).
"""
