"""Typed command options: each converts and checks its own value at the boundary."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from tools.core.errors import UserError
from tools.core.text import code


@dataclass(frozen=True)
class Option:
    """One ``--name value`` option of a command.

    Attributes:
        name: as typed, without dashes (``max-length``).
        kind: ``int``, ``float``, ``choice``, ``choices`` (comma-separated list),
            ``flag`` (no value) or ``str``.
        help: one line for ``help``.
        choices: the allowed values of ``choice`` and ``choices``.
        default: the value when the option is absent.
        minimum, maximum: bounds for ``int`` and ``float``.
    """

    name: str
    kind: str
    help: str
    choices: tuple[str, ...] = ()
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None

    @property
    def dest(self) -> str:
        """The keyword argument this option becomes (``max_length``)."""
        return self.name.replace("-", "_")

    @property
    def is_flag(self) -> bool:
        return self.kind == "flag"

    def usage(self) -> str:
        if self.kind == "flag":
            return f"--{self.name}"
        if self.kind in ("choice", "choices"):
            return f"--{self.name} {'|'.join(self.choices)}"
        return f"--{self.name} {'N' if self.kind == 'int' else 'X' if self.kind == 'float' else 'VALUE'}"

    def convert(self, raw: str | None) -> Any:
        """Turn the typed value into a Python value, or raise a sentence naming what is allowed."""
        if self.kind == "flag":
            return True
        if raw is None or raw == "":
            raise UserError(f"--{self.name} needs a value: {self.usage()}.")
        if self.kind == "choice":
            return self._choice(raw)
        if self.kind == "choices":
            return [self._choice(part) for part in raw.split(",") if part.strip()]
        if self.kind in ("int", "float"):
            return self._number(raw)
        return raw

    def _choice(self, raw: str) -> str:
        value = raw.strip().lower()
        if value in self.choices:
            return value
        close = difflib.get_close_matches(value, self.choices, n=1, cutoff=0.5)
        hint = f" Did you mean `{close[0]}`?" if close else ""
        raise UserError(
            f"--{self.name} {code(raw, 30)} is not allowed; use one of {', '.join(self.choices)}.{hint}"
        )

    def _number(self, raw: str) -> int | float:
        try:
            value: int | float = int(raw) if self.kind == "int" else float(raw)
        except ValueError:
            kind = "a whole number" if self.kind == "int" else "a number"
            raise UserError(f"--{self.name} takes {kind}{self._range()}; got {code(raw, 30)}.") from None
        if self.kind == "float" and value != value:  # NaN
            raise UserError(f"--{self.name} takes a number{self._range()}; got {code(raw, 30)}.")
        if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
            raise UserError(f"--{self.name} must be{self._range()}; got {code(raw, 30)}.")
        return value

    def _range(self) -> str:
        lo, hi = self.minimum, self.maximum
        fmt = (lambda v: f"{int(v)}") if self.kind == "int" else (lambda v: f"{v:g}")
        if lo is not None and hi is not None:
            return f" from {fmt(lo)} to {fmt(hi)}"
        if lo is not None:
            return f" of at least {fmt(lo)}"
        if hi is not None:
            return f" of at most {fmt(hi)}"
        return ""
