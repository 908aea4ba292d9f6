"""The OpenAPI 3.1 document, as the service serves it at ``/v1/openapi.json``.

``python -m postproject.service.openapi > docs/openapi.json`` writes the checked-in copy (a
test fails when it is stale). Building it opens no production.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from postproject.service.app import create_app
from postproject.service.config import ServiceConfig


def document() -> dict[str, Any]:
    return create_app(ServiceConfig("unused.pproj")).openapi()


def text() -> str:
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(text())
