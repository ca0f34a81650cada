"""The conversation around the toolkit.

Lives here: ``commands`` (the command table, by family), ``parsing`` (a line -> an invocation, did-you-mean),
``understanding`` (a question in words -> a command line), ``reading`` (which line a typed line or a question
runs), ``dispatch`` (run under limits; errors -> one sentence and a reference id), ``versus`` (``--vs``: one
command on two models), ``session``, ``store`` and ``visitors`` (what a conversation keeps, and when it is freed),
``memory`` (Gradio's other records of a freed visitor, and memory the allocator keeps), ``conversations`` (each
conversation kept on disk so a reload or a restart loses nothing), ``conversation`` (again, history, export),
``sharing`` (permalinks, exports), ``corpora`` (which corpora a conversation may read; encoding jobs), ``maps``
(corpus maps served to the page: per-conversation tokens and the binary endpoints), ``render`` (the page's
payload, terminal text), ``panel`` (the page's side panel: the latest reply's table and downloads, kept
for a reload), ``app`` (the Gradio page), ``mcp_server`` (the agent face: one MCP tool per command,
served at ``/mcp`` on the page's server) and ``__main__`` (the command line).

May import: ``tools``, gradio (``app`` only) and the MCP SDK (``mcp_server`` only); ``tools`` never imports
this package.
"""
