"""What several command rows share: the pooling and layer options, and the usual handler."""

from __future__ import annotations

from collections.abc import Callable

from assistant.commands.options import Option
from assistant.commands.spec import Context, Invocation
from tools.core.results import Result
from tools.encoding.pooling import Pooling

#: The poolings a command may be asked for: the toolkit's own enum, read once here.
POOLINGS = tuple(p.value for p in Pooling)


def pool_option(help: str = "how token vectors become the sentence vector", *, extra: tuple[str, ...] = (),
                several: bool = False) -> Option:
    """The ``--pool`` option: one pooling (default mean), or several (``several``: default every one)."""
    if several:
        return Option("pool", "choices", help, choices=POOLINGS + extra)
    return Option("pool", "choice", help, choices=POOLINGS + extra, default="mean")


POOL = pool_option("how token vectors become a sentence vector", extra=("all",))
LAYER = Option("layer", "int", "hidden state to use: 0 = embeddings, the last layer by default",
               minimum=0, maximum=1000)


def using(tool: Callable[..., Result], progress: bool = False,
          samples: bool = False) -> Callable[[Context, Invocation], Result]:
    """The usual handler: ``tool(conversation model, texts, **options)``, plus the page's progress bar
    for long tools, and the chart's row limit for tools that sample their maps (``samples``)."""

    def handler(ctx: Context, inv: Invocation) -> Result:
        extra = {"progress": ctx.progress} if progress else {}
        if samples:
            extra["chart_rows"] = ctx.settings.max_chart_rows
        return tool(ctx.model(), inv.texts, **extra, **inv.options)

    handler.__name__ = f"using_{tool.__name__}"
    return handler
