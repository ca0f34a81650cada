"""The project installs as a package: a wheel built from pyproject.toml gives the `embedding-assistant` command.

The wheel is built from this checkout with the venv's own setuptools (no network, no
build isolation) and installed, without dependencies, into a throwaway venv that sees
the project venv's packages through a ``.pth`` file. So the test exercises the real
metadata, the package data and the console script, and runs from a folder that holds
no copy of the source.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.long

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = tmp_path_factory.mktemp("source") / "project"  # a copy: setuptools leaves build/ behind in its tree
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", "docs", "bench", "tests", ".gradio"))
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-q", "-w", str(out), str(source)],
        capture_output=True, text=True, timeout=600,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (found,) = out.glob("embedding_assistant-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding only the wheel; the dependencies come from the project venv via a .pth file."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "project_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
         "--disable-pip-version-check", "-q", str(wheel)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return venv


def test_the_wheel_holds_both_packages_the_page_assets_and_the_pinned_dependencies(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "assistant/static/page.js" in names and "assistant/static/page.css" in names
    sources = {str(f.relative_to(ROOT)) for pkg in ("tools", "assistant") for f in (ROOT / pkg).rglob("*.py")}
    assert sources - set(names) == set()  # every module of every subpackage, not only the top level
    assert not any(n.startswith(("tests/", "bench/", "spaces/")) for n in names)
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Requires-Python: >=3.11" in metadata
    # the pins come from requirements*.txt, the one place they are written
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            assert f"Requires-Dist: {line}" in metadata, line
    assert "Provides-Extra: umap" in metadata and "Provides-Extra: test" in metadata
    assert "Provides-Extra: ray" in metadata
    ray_pin = next(line for line in (ROOT / "requirements-ray.txt").read_text().splitlines() if line.startswith("ray"))
    assert f'Requires-Dist: {ray_pin}; extra == "ray"' in metadata  # the Ray extra
    assert f'Requires-Dist: {ray_pin}; extra == "test"' in metadata  # and the test extra, whose test runs Ray
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "embedding-assistant = assistant.__main__:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_the_console_command_answers_from_another_folder(installed, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSISTANT_")}
    env.update(HF_HUB_OFFLINE="1", PYTHONPATH="")
    done = subprocess.run(
        [str(installed / "bin" / "embedding-assistant"), "run", "compare A cat sat on the mat. | A kitten sat.",
         "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    reply = json.loads(done.stdout)
    assert reply["ok"] and reply["command"] == "compare" and reply["model"] == "minilm"
    table = reply["tables"][0]
    cosine = table["rows"][0][table["columns"].index("cosine")]
    assert 0.3 < cosine < 1.0
    assert "typical of" in reply["text"] or "unrelated pairs" in reply["text"]  # the shipped reference was found
    # and it ran the installed copy, not this checkout
    where = subprocess.run([str(installed / "bin" / "python"), "-c", "import assistant; print(assistant.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert str(installed) in where and str(ROOT) not in where


def test_bad_input_exits_2_with_one_sentence(capsys):
    """The command line's exit code and JSON for bad input, in this process: the installed console script itself
    answers from another folder above (a second cold start of it took 29 s of a fresh clone's `make test`)."""
    from assistant.__main__ import main

    assert main(["run", "compare", "--json"]) == 2
    out = capsys.readouterr()
    reply = json.loads(out.out)
    assert not reply["ok"] and reply["error"].count(".") >= 1 and "Traceback" not in out.err
