"""Running the service under uvicorn: logging, TLS, and a shutdown that drains and exits 0.

Ctrl-C (SIGINT) or SIGTERM starts a drain: the instance stops accepting connections, ends
its event streams and held claims at once (within 5 s), lets the requests in flight finish
(up to 35 s), stops the loss sweep, closes its handles and returns 0. A second Ctrl-C stops
without waiting. uvicorn's own handling would raise the signal again once it is done (the
process would then end by SIGTERM, or with a KeyboardInterrupt); this server does not.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

import uvicorn
from fastapi import FastAPI

from postproject.logs import secret_free
from postproject.service.app import begin_drain, create_app
from postproject.service.config import DRAIN_SECONDS, ServiceConfig

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class DrainingServer(uvicorn.Server):
    """uvicorn's server, whose signals begin the app's drain and are not raised again."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self._app = app

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
            return
        self.should_exit = True
        begin_drain(self._app)  # signal handlers run on the main thread, the event loop's


def configure_logging(*, json_lines: bool = False) -> None:
    """Log lines (the access log among them) to stderr, never carrying a secret."""
    from postproject.logs import JsonFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter()
        if json_lines
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    secret_free(handler)
    for name in ("postproject", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(logging.INFO)
        logger.propagate = False


def serve(
    config: ServiceConfig,
    *,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    json_logs: bool = False,
) -> int:
    """Serve until Ctrl-C or SIGTERM; 0 once drained."""
    configure_logging(json_lines=json_logs)
    app = create_app(config)
    settings = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        access_log=False,  # the service writes its own (request id, principal; never a header)
        log_config=None,
        lifespan="on",
        timeout_graceful_shutdown=int(DRAIN_SECONDS),
        ssl_certfile=tls_cert,
        ssl_keyfile=tls_key,
        server_header=False,
        proxy_headers=False,
    )
    server = DrainingServer(settings, app)
    server.run()
    return 0 if server.started else 1
