"""parse -> run -> Reply. Nothing raises past :func:`execute`."""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from assistant.commands import TABLE
from assistant.parsing import parse
from assistant.spec import Context, Session
from tools.config import Settings
from tools.errors import UserError
from tools.hub import ModelHub
from tools.results import Result, error_json

log = logging.getLogger("assistant")


@dataclass(frozen=True)
class Reply:
    """What one command line produced: a result, or one sentence saying what was wrong."""

    line: str
    result: Result | None = None
    error: str | None = None
    command: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        """The JSON of DESIGN.md, for ``--json`` and the HTTP ``run`` endpoint."""
        if self.result is not None:
            return self.result.to_json()
        return error_json(self.error or "", self.command)


def execute(
    line: str,
    session: Session,
    hub: ModelHub,
    settings: Settings | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> Reply:
    """Run one command line in a conversation.

    Predictable mistakes come back as ``Reply.error`` with their sentence; any
    other exception is logged with its traceback and a reference id, and the
    user gets one sentence naming that id. The session keeps its state either way.
    """
    settings = settings or hub.settings
    verb = ""
    try:
        inv = parse(line, TABLE, settings)
        verb = inv.verb
        start = time.perf_counter()
        ctx = Context(session, hub, settings, progress or (lambda fraction, message: None))
        result = TABLE[inv.verb].run(ctx, inv)
        elapsed = (time.perf_counter() - start) * 1000
        result = dataclasses.replace(result, elapsed_ms=elapsed)
    except UserError as exc:
        return Reply(line, error=str(exc), command=verb)
    except Exception:
        ref = uuid.uuid4().hex[:8]
        log.exception("command failed [ref %s]: %r", ref, line[:500])
        return Reply(
            line,
            error=f"Something went wrong inside `{verb or 'the command'}` (reference {ref}, logged on the "
                  "server); nothing you had is lost, and the next command will work.",
            command=verb,
        )
    session.history.append(line.strip())
    session.last = result
    return Reply(line, result=result, command=verb)
