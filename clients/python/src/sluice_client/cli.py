"""``python -m sluice_client worker module:function --queue q``: runs a handler function as a
worker until SIGTERM / SIGINT, which drain it (stop leasing, finish running jobs, hand back the
rest) and exit 0. Prints ``Sluice worker ready on queue <q> (...)`` once it is polling. Exits 1
when the handler's module fails to import or the server refuses the worker's lease requests for
good (a wrong URL or token), 2 on bad usage (argparse's status)."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
import traceback
from typing import Any, Callable, Dict, List, Optional

from . import __version__
from .client import Sluice

_QUEUE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
_DEFAULT_URL = "http://127.0.0.1:9324"


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sluice_client", description="Sluice jobs client and worker.")
    parser.add_argument("--version", action="version", version=f"sluice_client {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    worker = commands.add_parser(
        "worker",
        help="run a handler function as a worker",
        description="Run module:function as a worker: function(job) or function(job, ctx) returns the job's output.",
    )
    worker.add_argument("target", metavar="module:function", help="the handler, e.g. mypkg.inference:predict (imported with the current directory on sys.path)")
    worker.add_argument("--queue", required=True, help="queue to lease jobs from (1–80 characters of A–Z, a–z, 0–9, _ and -)")
    worker.add_argument("--url", default=None, help=f"the server (default: $SLUICE_URL, else {_DEFAULT_URL})")
    worker.add_argument("--token", default=None, help="bearer token (default: $SLUICE_TOKEN)")
    worker.add_argument("--account", default=None, help="act for this account, 12 digits (default: $SLUICE_ACCOUNT); a token of the server's own account may name any")
    worker.add_argument("--concurrency", type=_int_in(1, 10_000), default=1, help="handlers (or batches) running at once (default 1)")
    worker.add_argument("--lease-seconds", type=_int_in(1, 43_200), default=30, help="lease length; heartbeats extend it every third of it (default 30)")
    worker.add_argument("--wait-seconds", type=_int_in(0, 20), default=20, help="long-poll length of each lease request, 0–20 (default 20)")
    worker.add_argument("--batch-size", type=_int_in(1, 100), default=None, help="lease up to n jobs at a time and pass them to the handler as a list (1–100)")
    worker.add_argument("--batch-window-ms", type=_int_in(0, 10_000), default=None, help="with --batch-size: how long to gather a batch after its first job (default 20)")
    worker.add_argument("--labels", type=_labels, default=None, help="the worker's labels, e.g. gpu=a100,region=eu: it also leases the jobs whose requires these contain")
    worker.add_argument("--worker-id", default=None, help="names the worker in `sluice workers` (default: one id per process)")
    worker.add_argument(
        "--drain-timeout-seconds",
        type=float,
        default=None,
        help="on SIGTERM, after this long hand back the jobs whose handlers still run (their attempt counts) and exit (default: wait for them)",
    )
    return parser


def _int_in(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if not re.fullmatch(r"[0-9]+", text) or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"must be an integer in {low}–{high}, got {text!r}")
        return int(text)

    return parse


def _labels(text: str) -> Dict[str, str]:
    labels: Dict[str, str] = {}
    for pair in text.split(","):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise argparse.ArgumentTypeError(f"must be key=value pairs separated by commas, got {pair!r}")
        labels[key.strip()] = value.strip()
    return labels


def load_handler(target: str) -> Callable[..., Any]:
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(f"the handler must be given as module:function, got {target!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name is not None and (module_name == err.name or module_name.startswith(err.name + ".")):
            raise UsageError(f"handler module {module_name} not found (searched the current directory and sys.path)") from err
        raise
    handler: Any = module
    for part in attribute.split("."):
        if not hasattr(handler, part):
            raise UsageError(f"{module_name} has no {attribute}")
        handler = getattr(handler, part)
    if not callable(handler):
        raise UsageError(f"{target} is not callable")
    return handler


def _worker(args: argparse.Namespace) -> int:
    if not _QUEUE_NAME.match(args.queue):
        raise UsageError(f"--queue must be 1–80 characters of A–Z, a–z, 0–9, _ and -, got {args.queue!r}")
    if args.batch_window_ms is not None and args.batch_size is None:
        raise UsageError("--batch-window-ms needs --batch-size")
    url = args.url or os.environ.get("SLUICE_URL") or _DEFAULT_URL
    # Checked before the module loads: loading may take long (a model) before a typo shows.
    account = args.account or os.environ.get("SLUICE_ACCOUNT") or None
    if account is not None and not re.fullmatch(r"[0-9]{12}", account):
        raise UsageError(f"--account (or SLUICE_ACCOUNT) must be a 12-digit account id, got {account!r}")
    sluice = Sluice(url, args.token or os.environ.get("SLUICE_TOKEN"), account=account)
    try:
        handler = load_handler(args.target)
    except UsageError:
        raise
    except BaseException:  # noqa: BLE001 - the module itself failed: say which, and how
        print(f"sluice worker: cannot load the handler module of {args.target}: importing it raised:", file=sys.stderr)
        traceback.print_exc()
        return 1
    batch = None if args.batch_size is None else (args.batch_size, (args.batch_window_ms if args.batch_window_ms is not None else 20) / 1000)
    worker = sluice.queue(args.queue).work(
        handler, concurrency=args.concurrency, lease_seconds=args.lease_seconds, wait_seconds=args.wait_seconds, batch=batch,
        labels=args.labels, worker_id=args.worker_id,
    )  # fmt: skip
    shape = f"batches of ≤ {batch[0]} within {round(batch[1] * 1000)} ms" if batch else "single jobs"
    print(f"Sluice worker ready on queue {args.queue} (concurrency {args.concurrency}, {shape}, lease {args.lease_seconds} s)", flush=True)
    try:
        worker.serve(args.drain_timeout_seconds)
    except Exception as err:  # noqa: BLE001 - the worker stopped on its own: say why
        print(f"sluice worker: stopped: the server refuses its lease requests: {err}", file=sys.stderr)
        return 1
    print(f"sluice worker: drained ({json.dumps(worker.stats.as_dict())})", file=sys.stderr, flush=True)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "worker":
            return _worker(args)
    except UsageError as err:
        print(f"sluice worker: {err}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"sluice worker: {err}", file=sys.stderr)
        return 2
    return 2
