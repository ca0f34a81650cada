"""Which files a command may read: the user's own on the command line, the data folders and uploads on the web.

A :class:`DataAccess` value is made once per face and passed explicitly down to the
loaders (``execute(..., access=)`` -> ``Context.access`` -> ``benchmark(access=)``);
nothing reads it from the environment or changes it per request.

- On the **command line** (:meth:`DataAccess.local`) the user owns the machine and the
  shell: ``--data my.csv`` reads ``my.csv`` relative to the folder the command started
  in, or any absolute path; the configured data folders are searched after it.
- On the **web faces** (page, HTTP, MCP: :data:`WEB`, the default) a visitor must not
  make the server read its own files: only the data folders (``ASSISTANT_DATA_DIR``) and
  that conversation's uploads are readable (:func:`tools.benchmark.data.resolve_path`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tools.core.errors import UserError
from tools.core.text import code


@dataclass(frozen=True)
class DataAccess:
    """What ``--data PATH`` may name.

    Attributes:
        local_files: True on the command line: any file the user can read, by absolute
            path or relative to ``cwd``.
        cwd: the folder relative paths start from (the CLI's working folder, fixed when
            the value is made).
    """

    local_files: bool = False
    cwd: Path | None = None

    @classmethod
    def local(cls, cwd: Path | str | None = None) -> DataAccess:
        """The command line's access: the user's own files, relative to ``cwd`` (default: the current folder)."""
        return cls(local_files=True, cwd=Path(cwd if cwd is not None else Path.cwd()).resolve())

    @property
    def face(self) -> str:
        """``"command line"`` or ``"web"``, for messages."""
        return "command line" if self.local_files else "web"

    def local_file(self, raw: str) -> Path | None:
        """The user's own file ``raw`` names, on the command line; None when this face has no such access.

        Raises:
            UserError: on the command line, when the name is unusable or names a folder.
        """
        if not self.local_files:
            return None
        try:
            given = Path(raw).expanduser()
            path = (given if given.is_absolute() else (self.cwd or Path.cwd()) / given).resolve()
            folder, found = path.is_dir(), path.is_file()
        except (OSError, ValueError, RuntimeError):  # a NUL byte, a name too long, an unknown ~user
            raise UserError(f"{code(raw, 60, path=True)} is not a usable file name; pass the path of a data "
                            "file.") from None
        if folder:
            raise UserError(f"{code(raw, 60, path=True)} is a folder; pass the data file inside it, like "
                            f"{code(str(Path(raw) / 'pairs.csv'), 60, path=True)}.")
        return path if found else None

    def missing(self, raw: str) -> UserError:
        """The sentence for a command-line path that names no file."""
        folder = code(str(self.cwd or Path.cwd()), 80, path=True)
        return UserError(f"There is no file {code(raw, 60, path=True)} (looked in {folder} and the data folders); "
                         "check the path.")


#: The page's, the HTTP API's and the MCP tool's access: data folders and this conversation's uploads only.
WEB = DataAccess()
