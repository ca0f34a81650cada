"""The registered commands, in ``help``'s order, and the verb table the parser reads.

Every module of this package is imported once (in the order of its ``ORDER`` constant), and each
command class it decorates with :func:`register` joins the table. ``help``, the parser, the router,
the README's table and the MCP tools all read :func:`commands` / :func:`table`, so a command added in
one module (or registered by a test) is found everywhere without touching another file.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Iterator, Mapping, Sequence, ValuesView
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

from assistant.commands.base import Command

_COMMANDS: dict[str, Command[Any, Any]] = {}
_LOCK = threading.Lock()
_loaded = False
#: The verb table as last built (None after a command joins or leaves): read on every look-up, built once.
_table: Mapping[str, Command[Any, Any]] | None = None


def register(cls: type[Command[Any, Any]]) -> type[Command[Any, Any]]:
    """Class decorator: one instance of ``cls`` joins the command table under its name."""
    global _table
    with _LOCK:
        _COMMANDS[cls.name] = cls()
        _table = None
    return cls


def unregister(name: str) -> None:
    global _table
    with _LOCK:
        _COMMANDS.pop(name, None)
        _table = None


@contextmanager
def registered(cls: type[Command[Any, Any]]) -> Iterator[Command[Any, Any]]:
    """``cls`` registered for the duration of a block (for tests and plug-ins)."""
    commands()
    register(cls)
    try:
        yield _COMMANDS[cls.name]
    finally:
        unregister(cls.name)


def _load() -> None:
    global _loaded, _table
    if _loaded:
        return
    import assistant.commands as package

    found = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if hasattr(module, "ORDER"):
            found.append((module.ORDER, info.name))
    _loaded = True
    order = {name: rank for rank, name in found}
    with _LOCK:  # families in their ORDER, commands in the order each family registers them
        ranked = sorted(_COMMANDS.values(), key=lambda c: order.get(type(c).__module__.rsplit(".", 1)[-1], 1000))
        _COMMANDS.clear()
        _COMMANDS.update((c.name, c) for c in ranked)
        _table = None


def commands() -> list[Command[Any, Any]]:
    """Every command, in ``help``'s order."""
    _load()
    with _LOCK:
        return list(_COMMANDS.values())


def table() -> Mapping[str, Command[Any, Any]]:
    """Verbs and aliases -> command, as the parser looks them up (built once per set of commands, read-only)."""
    global _table
    _load()
    with _LOCK:
        if _table is None:
            _table = MappingProxyType({key: c for c in _COMMANDS.values() for key in (c.name, *c.aliases)})
        return _table


class _Live(Mapping[str, Command[Any, Any]]):
    """The verb table, read anew on each look-up (a command registered later is found)."""

    def __getitem__(self, key: str) -> Command[Any, Any]:
        return table()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(table())

    def __len__(self) -> int:
        return len(table())

    def values(self) -> ValuesView[Command[Any, Any]]:
        return table().values()  # one table for the whole walk, not one per command


class _LiveList(Sequence[Command[Any, Any]]):
    """Every command in ``help``'s order, read anew each time."""

    def __getitem__(self, index: Any) -> Any:
        return commands()[index]

    def __len__(self) -> int:
        return len(commands())

    def __iter__(self) -> Iterator[Command[Any, Any]]:
        return iter(commands())


#: Verbs and aliases -> command (live).
TABLE: Mapping[str, Command[Any, Any]] = _Live()
#: Every command in ``help``'s order (live).
COMMANDS: Sequence[Command[Any, Any]] = _LiveList()
