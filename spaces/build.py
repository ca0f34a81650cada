"""Assemble a ready-to-push Hugging Face Space folder from this repository.

Usage::

    python spaces/build.py OUT_DIR [--force]

OUT_DIR gets ``app.py``, ``README.md`` (the Spaces front matter), ``requirements.txt``
(the repository's own, so the Space installs exactly the pins the tests ran with, ``datasets``
included for ``benchmark``) and the ``tools/`` and ``assistant/`` packages. Push it with ``git`` (``git init``,
``git remote add origin https://huggingface.co/spaces/OWNER/NAME``, commit, push) or
``hf upload OWNER/NAME OUT_DIR --repo-type space``.

Before copying, the bundle is checked: the front matter's ``sdk_version`` must be the
Gradio the repository pins.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PACKAGES = ("tools", "assistant")
FILES = ("app.py", "README.md")
#: The bundle's requirements: the repository's file, with this line on top.
REQUIREMENTS_HEADER = ("# Copied from the repository's requirements.txt by spaces/build.py: "
                       "the pins the tests ran with.\n")
REQUIRED_KEYS = ("title", "emoji", "colorFrom", "colorTo", "sdk", "sdk_version", "app_file", "python_version",
                 "short_description")


class BundleError(Exception):
    """The Space bundle does not match the repository; the message says what to fix."""


def front_matter(readme: str) -> dict[str, str]:
    """The top-level ``key: value`` pairs of a README's YAML front matter (values unquoted)."""
    match = re.match(r"---\n(.*?)\n---\n", readme, re.S)
    if not match:
        raise BundleError("spaces/README.md must start with the Spaces front matter between `---` lines.")
    pairs = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key and not key.startswith((" ", "-", "#")):
            pairs[key.strip()] = value.strip().strip("\"'")
    return pairs


def pins(text: str) -> dict[str, str]:
    """``name -> version`` of the ``name==version`` lines of a requirements file (extras dropped)."""
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            out[re.sub(r"\[.*\]", "", name).strip().lower().replace("_", "-")] = version.strip()
    return out


def check(source: Path = HERE, root: Path = ROOT) -> None:
    """Raise :class:`BundleError` when the bundle disagrees with the repository."""
    meta = front_matter((source / "README.md").read_text(encoding="utf-8"))
    missing = [k for k in REQUIRED_KEYS if not meta.get(k)]
    if missing:
        raise BundleError(f"spaces/README.md front matter lacks {', '.join(missing)}.")
    if meta["sdk"] != "gradio" or meta["app_file"] != "app.py":
        raise BundleError("spaces/README.md front matter needs `sdk: gradio` and `app_file: app.py`.")
    repo = pins((root / "requirements.txt").read_text(encoding="utf-8"))
    if meta["sdk_version"] != repo.get("gradio"):
        raise BundleError(f"spaces/README.md has sdk_version {meta['sdk_version']}, but requirements.txt pins "
                          f"gradio {repo.get('gradio')}; make them equal.")
    for name in FILES:
        if not (source / name).is_file():
            raise BundleError(f"spaces/{name} is missing.")


def build(out: Path, force: bool = False, source: Path = HERE, root: Path = ROOT) -> list[Path]:
    """Write the Space folder into ``out`` and return the paths written (top level)."""
    check(source, root)
    out = out.resolve()
    if out in (root, source) or any(out == root / p or root / p in out.parents for p in PACKAGES):
        raise BundleError("OUT_DIR must be a new folder, not the repository or one of its packages.")
    if out.exists() and any(out.iterdir()):
        if not force:
            raise BundleError(f"{out} is not empty; choose an empty folder or pass --force to replace it.")
        for name in (*PACKAGES, *FILES, "requirements.txt"):
            target = out / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".pytest_cache")
    for package in PACKAGES:
        shutil.copytree(root / package, out / package, ignore=ignore)
        written.append(out / package)
    for name in FILES:
        shutil.copy2(source / name, out / name)
        written.append(out / name)
    requirements = out / "requirements.txt"
    requirements.write_text(REQUIREMENTS_HEADER + (root / "requirements.txt").read_text(encoding="utf-8"),
                            encoding="utf-8")
    written.append(requirements)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python spaces/build.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder to fill (empty or new)")
    parser.add_argument("--force", action="store_true", help="replace the bundle's files in a non-empty folder")
    args = parser.parse_args(argv)
    try:
        written = build(args.out, force=args.force)
    except BundleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Space folder ready: {args.out.resolve()}")
    for path in written:
        print(f"  {path.name}{'/' if path.is_dir() else ''}")
    print(f"Push it: hf upload OWNER/NAME {args.out} --repo-type space  (or git push to the Space's repository)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
