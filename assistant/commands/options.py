"""Typed command options, generated from a command's parameter dataclass.

A command declares its parameters once, as a frozen dataclass whose fields carry their help
(:func:`param`); :func:`options_of` turns those fields into the parser's :class:`Option` rows,
and each option's :class:`ParamType` converts the typed value and fails with one sentence, as
click's parameter types do. Choices come from the toolkit's enums (``choices=Pooling``), never
copied by hand.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import functools
import typing
from dataclasses import dataclass
from typing import Any

from tools.core.errors import UserError
from tools.core.text import code


class ParamType:
    """How one option's typed value becomes a Python value."""

    metavar = "VALUE"
    numeric = False
    choices: tuple[str, ...] = ()
    several = False  # a comma-separated list

    def convert(self, name: str, raw: str) -> Any:
        return raw


@dataclass(frozen=True)
class Number(ParamType):
    """A whole number (``whole``) or a float, within optional bounds."""

    whole: bool = True
    minimum: float | None = None
    maximum: float | None = None

    numeric = True

    @property
    def metavar(self) -> str:  # type: ignore[override]
        return "N" if self.whole else "X"

    def convert(self, name: str, raw: str) -> int | float:
        try:
            value: int | float = int(raw) if self.whole else float(raw)
        except ValueError:
            kind = "a whole number" if self.whole else "a number"
            raise UserError(f"--{name} takes {kind}{self.range()}; got {code(raw, 30)}.") from None
        if value != value:  # NaN
            raise UserError(f"--{name} takes a number{self.range()}; got {code(raw, 30)}.")
        if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
            raise UserError(f"--{name} must be{self.range()}; got {code(raw, 30)}.")
        return value

    def range(self) -> str:
        lo, hi = self.minimum, self.maximum
        fmt = (lambda v: f"{int(v)}") if self.whole else (lambda v: f"{v:g}")
        if lo is not None and hi is not None:
            return f" from {fmt(lo)} to {fmt(hi)}"
        if lo is not None:
            return f" of at least {fmt(lo)}"
        if hi is not None:
            return f" of at most {fmt(hi)}"
        return ""


@dataclass(frozen=True)
class Choice(ParamType):
    """One of ``choices`` (or, with ``several``, a comma-separated list of them), any case."""

    choices: tuple[str, ...] = ()
    several: bool = False

    @property
    def metavar(self) -> str:  # type: ignore[override]
        return ("," if self.several else "|").join(self.choices)

    def convert(self, name: str, raw: str) -> str | list[str]:
        if self.several:
            return [self._one(name, part) for part in raw.split(",") if part.strip()]
        return self._one(name, raw)

    def _one(self, name: str, raw: str) -> str:
        value = raw.strip().lower()
        if value in self.choices:
            return value
        close = difflib.get_close_matches(value, self.choices, n=1, cutoff=0.5)
        hint = f" Did you mean `{close[0]}`?" if close else ""
        raise UserError(f"--{name} {code(raw, 30)} is not allowed; use one of {', '.join(self.choices)}.{hint}",
                        fixes=tuple((raw.strip(), c) for c in close))


class Flag(ParamType):
    """Present or absent: takes no value."""


FLAG = Flag()
TEXT = ParamType()


@dataclass(frozen=True)
class Option:
    """One ``--name value`` option of a command.

    Attributes:
        name: as typed, without dashes (``max-length``).
        type: converts the value (:class:`Number`, :class:`Choice`, :data:`FLAG` or :data:`TEXT`).
        help: one line for ``help``.
        default: the value when the option is absent.
        metavar: how the value is written in the usage line (default: the type's own).
        field: the parameter field it fills, when its name is not the option's (``--in`` fills ``among``).
        view: whether it picks what the reply shows of the results the other options make (``clusters --group``):
            a follow-up that changes those results, or asks the command anew, leaves it out.
    """

    name: str
    type: ParamType
    help: str
    default: Any = None
    metavar: str = ""
    field: str = ""  # the parameter it fills, when not its name with `_` for `-` (``with`` fills ``with_``)
    view: bool = False

    @property
    def dest(self) -> str:
        """The keyword argument this option becomes (``max_length``)."""
        return self.field or self.name.replace("-", "_")

    @property
    def is_flag(self) -> bool:
        return isinstance(self.type, Flag)

    @property
    def choices(self) -> tuple[str, ...]:
        return self.type.choices

    def usage(self) -> str:
        return f"--{self.name}" if self.is_flag else f"--{self.name} {self.metavar or self.type.metavar}"

    def convert(self, raw: str | None) -> Any:
        """Turn the typed value into a Python value, or raise a sentence naming what is allowed."""
        if self.is_flag:
            return True
        if raw is None or raw == "":
            raise UserError(f"--{self.name} needs a value: {self.usage()}.")
        return self.type.convert(self.name, raw)

    def accepts(self, raw: str | None) -> bool:
        """Whether :meth:`convert` takes ``raw`` (a flag takes anything: it is said or not)."""
        try:
            self.convert(raw)
        except UserError:
            return False
        return True


def param(help: str, default: Any = None, *, minimum: float | None = None, maximum: float | None = None,
          choices: type[enum.Enum] | tuple[str, ...] = (), extra: tuple[str, ...] = (), several: bool = False,
          metavar: str = "", name: str = "", view: bool = False) -> Any:
    """A parameter dataclass field: its default and how it is typed on the command line.

    Args:
        help: one line for ``help`` and for the MCP tool's schema.
        default: the value when the option is absent.
        minimum, maximum: bounds of a number.
        choices: an enum of the toolkit (its values are the choices) or the values themselves.
        extra: values allowed beside the enum's (``all``).
        several: a comma-separated list of choices.
        metavar: how the value is written in the usage line.
        name: the option's name when it is not the field's with ``_`` as ``-``.
        view: it picks what the reply shows of the results the others make (see :class:`Option`).
    """
    values = tuple(str(m.value) for m in choices) if isinstance(choices, type) else tuple(choices)
    meta = {"help": help, "minimum": minimum, "maximum": maximum, "choices": values + tuple(extra),
            "several": several, "metavar": metavar, "name": name, "view": view}
    return dataclasses.field(default=default, metadata={"option": meta})


@functools.cache
def options_of(params: type) -> tuple[Option, ...]:
    """The options a parameter dataclass declares, in field order (read once per class)."""
    hints = typing.get_type_hints(params)
    out = []
    for f in dataclasses.fields(params):
        meta = f.metadata.get("option", {"help": "", "choices": ()})
        kind = _base(hints[f.name])
        ptype: ParamType
        if meta["choices"]:
            ptype = Choice(meta["choices"], meta.get("several", False))
        elif kind is bool:
            ptype = FLAG
        elif kind in (int, float):
            ptype = Number(kind is int, meta.get("minimum"), meta.get("maximum"))
        else:
            ptype = TEXT
        name = meta.get("name") or f.name.replace("_", "-")
        out.append(Option(name, ptype, meta["help"], f.default, meta.get("metavar", ""),
                          f.name if f.name != name.replace("-", "_") else "", meta.get("view", False)))
    return tuple(out)


def _base(hint: Any) -> Any:
    """``int | None`` -> ``int``."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if typing.get_origin(hint) in (typing.Union, __import__("types").UnionType) and args \
        else hint
