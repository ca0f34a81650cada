"""``embedding-assistant`` (or ``python -m assistant``) serves the page;
``embedding-assistant run "<command>"`` answers once."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="embedding-assistant", description=__doc__)
    parser.add_argument("--model", help="default model (ASSISTANT_MODEL)")
    parser.add_argument("--device", help="cpu, cuda, cuda:N or mps (ASSISTANT_DEVICE)")
    sub = parser.add_subparsers(dest="action")
    serve = sub.add_parser("serve", help="serve the chat page (the default)")
    run = sub.add_parser("run", help="run one command and print its reply")
    run.add_argument("command", help='a command line, e.g. "compare A cat. | A kitten."')
    run.add_argument("--json", action="store_true", help="print the JSON reply")
    for p in (serve, parser):
        p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
        p.add_argument("--port", type=int, default=7860)
        p.add_argument("--share", action="store_true", help="ask Gradio for a public link")
        p.add_argument("--mcp", action="store_true", help="also serve MCP for agents at http://HOST:PORT/mcp "
                       "(streamable HTTP): one tool per command, and run")
    for p in (serve, run):
        p.add_argument("--model", dest="sub_model", help=argparse.SUPPRESS)
        p.add_argument("--device", dest="sub_device", help=argparse.SUPPRESS)
    _limit_flags(parser, serve, run)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "transformers", "sentence_transformers", "mcp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()

    from tools.core.config import Settings

    settings = Settings.from_env()
    model = getattr(args, "sub_model", None) or args.model
    device = getattr(args, "sub_device", None) or args.device
    if model:
        settings = dataclasses.replace(settings, model=model)
    if device:
        settings = dataclasses.replace(settings, device=device)
    overrides = {f.name: getattr(args, f"setting_{f.name}") for f in dataclasses.fields(settings)
                 if getattr(args, f"setting_{f.name}", None) is not None}
    if overrides:
        try:
            settings = dataclasses.replace(settings, **overrides)
        except ValueError as exc:
            parser.error(str(exc))

    if args.action == "run":
        from assistant.dispatch import execute
        from assistant.render.terminal import terminal_text
        from assistant.session import Session
        from tools.benchmark.access import DataAccess
        from tools.models.hub import ModelHub

        # the user owns this shell: `--data my.csv` reads their own file, relative to this folder, and a long job
        # (encoding a corpus) runs to its end with a progress bar, unless a time limit is asked for
        if "time_limit_s" not in overrides and "ASSISTANT_TIME_LIMIT_S" not in os.environ:
            settings = dataclasses.replace(settings, time_limit_s=0)
        bar = ProgressBar()
        reply = execute(args.command, Session(), ModelHub(settings), settings, access=DataAccess.local(),
                        progress=bar, background=False)
        bar.end()
        try:
            print(json.dumps(reply.to_json(), indent=1) if args.json else terminal_text(reply))
        except BrokenPipeError:  # `| head` read what it wanted: not an error of ours
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0 if reply.ok else 2

    from assistant.app import launch

    launch(settings, host=args.host, port=args.port, share=args.share, mcp=args.mcp or None)
    return 0


class ProgressBar:
    """A one-line progress bar on the terminal's error stream (the reply goes to standard output)."""

    WIDTH = 30

    def __init__(self) -> None:
        self.shown = False

    def __call__(self, fraction: float, message: str) -> None:
        done = int(max(0.0, min(1.0, fraction)) * self.WIDTH)
        sys.stderr.write(f"\r[{'#' * done}{' ' * (self.WIDTH - done)}] {fraction:4.0%} {message[:60]:<60}")
        sys.stderr.flush()
        self.shown = True

    def end(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def _limit_flags(parser: argparse.ArgumentParser, *subparsers: argparse.ArgumentParser) -> None:
    """One flag per setting (``--max-chars`` for ASSISTANT_MAX_CHARS ...), before or after the action."""
    from tools.core.config import Settings, parse_value

    for f in dataclasses.fields(Settings):
        if f.name in ("model", "device"):
            continue
        flag = "--" + f.name.replace("_", "-")

        def convert(raw: str, name: str = f.name) -> object:
            try:
                return parse_value(name, raw)
            except ValueError as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None

        helptext = f"{f.metadata.get('help', '')} (ASSISTANT_{f.name.upper()}, default {f.default!r})"
        bare = {"nargs": "?", "const": True} if isinstance(f.default, bool) else {}  # `--fast` alone = on
        parser.add_argument(flag, dest=f"setting_{f.name}", type=convert, default=None, help=helptext, **bare)
        for sub in subparsers:
            sub.add_argument(flag, dest=f"setting_{f.name}", type=convert, default=argparse.SUPPRESS,
                             help=helptext, **bare)


if __name__ == "__main__":
    sys.exit(main())
