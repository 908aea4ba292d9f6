"""``postproject serve PRODUCTION``: the HTTP service (:mod:`postproject.service`, docs/service.md)."""

from __future__ import annotations

import argparse

from postproject.cli.common import Context, Parser, command, parse_int
from postproject.model.errors import InvalidArgumentError, UnsupportedError
from postproject.production import Production
from postproject.service.config import DEFAULT_HOST, DEFAULT_PORT, MAX_STREAMS, ServiceConfig, parse_listen


def serve(ctx: Context) -> int:
    """Serve until Ctrl-C or SIGTERM (then drain and exit 0)."""
    try:
        from postproject.service.server import serve as run_server  # FastAPI and uvicorn only when serving
    except ImportError as exc:
        raise UnsupportedError(
            f"postproject serve needs the service extra ({exc.name} is missing): "
            "pip install 'postproject-monitor[service]'"
        ) from None
    args = ctx.args
    host, port = parse_listen(args.listen)
    pool = parse_int("--pool-size", args.pool_size, minimum=1)
    if pool > 64:
        raise InvalidArgumentError(f"--pool-size must be 1-64; got {pool}")
    streams = parse_int("--max-streams", args.max_streams, minimum=1)
    if (args.tls_cert is None) != (args.tls_key is None):
        raise InvalidArgumentError("--tls-cert and --tls-key go together")
    roots = {name: str(path) for name, path in ctx.root_map().items()}
    Production.open(args.production, root_map=roots or None).close()  # a bad location fails here, clearly
    config = ServiceConfig(
        args.production,
        host=host,
        port=port,
        sweep=args.sweep,
        pool_size=pool,
        root_map=roots,
        cors_origins=tuple(args.cors_origin),
        max_streams=streams,
    )
    return run_server(
        config, tls_cert=args.tls_cert, tls_key=args.tls_key, json_logs=args.log_format == "json"
    )


def register(sub: argparse._SubParsersAction[Parser]) -> None:
    p = command(
        sub, "serve", "serve the Client and Worker HTTP APIs over a production (docs/service.md)", serve
    )
    p.add_argument(
        "--listen", default=f"{DEFAULT_HOST}:{DEFAULT_PORT}", metavar="HOST:PORT",
        help=f"where to listen (default {DEFAULT_HOST}:{DEFAULT_PORT}; 0.0.0.0:{DEFAULT_PORT} for every interface)",
    )  # fmt: skip
    p.add_argument(
        "--no-sweep", dest="sweep", action="store_false",
        help="do not run the loss sweep in this instance (on by default: at start, then every 5 s)",
    )  # fmt: skip
    p.add_argument(
        "--pool-size", default="4", metavar="N",
        help="production handles (one edit at a time each): the bound on database connections (default 4)",
    )  # fmt: skip
    p.add_argument(
        "--max-streams", default=str(MAX_STREAMS), metavar="N",
        help=f"event streams served at once (default {MAX_STREAMS}; then 503)",
    )  # fmt: skip
    p.add_argument(
        "--cors-origin", action="append", default=[], metavar="ORIGIN",
        help="allow browsers on ORIGIN (e.g. https://dash.studio) to call the API (repeatable; default none)",
    )  # fmt: skip
    p.add_argument(
        "--tls-cert", metavar="FILE", help="serve HTTPS with this certificate (PEM), with --tls-key"
    )
    p.add_argument("--tls-key", metavar="FILE", help="the certificate's private key (PEM)")
    p.add_argument("--log-format", choices=("text", "json"), default="text", help="log lines as text or JSON")
