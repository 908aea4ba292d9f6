"""The published contract: docs/openapi.json is the document the code generates and the service
serves (a stale copy fails here), and property-based fuzzing from it (schemathesis) with a
bounded number of cases per operation finds no 5xx, every 4xx a problem, every answer as the
document says (status, content type, schema)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from postproject.service import openapi
from postproject.service.app import create_app
from postproject.service.config import ServiceConfig
from tests.service.conftest import ROOT, Service

pytestmark = pytest.mark.xdist_group("service_openapi")  # one worker: tests/README.md

DOCUMENT = ROOT / "docs" / "openapi.json"
CASES = 8  # per operation and generation mode: ~400 requests per engine
SKIPPED = {("GET", "/v1/revisions/stream")}  # never ends by itself: tests/service/test_lifecycle.py


def test_the_checked_in_document_is_the_one_the_code_generates() -> None:
    assert DOCUMENT.read_text() == openapi.text(), (
        "docs/openapi.json is stale: python -m postproject.service.openapi > docs/openapi.json"
    )


def test_the_service_serves_that_document(service: Service) -> None:
    served = service.client().get("/v1/openapi.json")
    assert served.status_code == 200
    assert served.json() == json.loads(DOCUMENT.read_text())
    assert served.json()["openapi"].startswith("3.1")


def _problem_check(response: Any, case: Any) -> None:
    if 400 <= response.status_code < 600:
        assert response.headers["content-type"][0].startswith("application/problem+json"), response.text
        body = json.loads(response.text)
        assert {"type", "title", "status", "detail", "instance", "code"} <= set(body), body
        assert body["status"] == response.status_code
        assert "Traceback" not in response.text


def _operations() -> list[Any]:
    schema = schemathesis.openapi.from_dict(json.loads(DOCUMENT.read_text()))
    found = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) not in SKIPPED:
            found.append(operation)
    return found


@pytest.mark.slow
@pytest.mark.parametrize(
    "mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["positive", "negative"]
)
def test_fuzzing_finds_no_server_error_and_only_documented_answers(
    service: Service, mode: GenerationMode
) -> None:
    failures: list[str] = []
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_headers_conformance,
    ]
    checks += [response_schema_conformance] if mode is GenerationMode.POSITIVE else [negative_data_rejection]
    for operation in _operations():
        token = service.scene.tokens[
            "worker" if "worker" in operation.definition.raw.get("tags", []) else "supervisor"
        ]
        try:
            _fuzz(service.url, operation, mode, checks, token)
        except Unsatisfiable:  # nothing to make invalid (an operation without parameters or body)
            assert mode is GenerationMode.NEGATIVE, operation.path
        except Exception as exc:  # collect every operation's failure, then report them all
            failures.append(f"{operation.method.upper()} {operation.path}: {str(exc)[:1500]}")
    assert failures == [], "\n\n".join(failures)


def _fuzz(url: str, operation: Any, mode: GenerationMode, checks: list[Any], token: str) -> None:
    """``CASES`` generated requests to one operation, each answer checked."""
    query = {"wait_seconds": 0} if operation.path.endswith("/claims") else None

    @settings(
        max_examples=CASES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(mode, query=query))
    def run(case: Any) -> None:
        response = case.call(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        case.validate_response(response, checks=checks)
        _problem_check(response, case)

    run()


def test_each_route_refuses_the_query_parameters_its_document_does_not_list(service: Service) -> None:
    """The names the service accepts (read from each route, not from the document: building
    the document on the first request cost every service start ~0.15 s of CPU) are the
    document's query parameters, a list parameter being the ones that take several values."""
    from fastapi.routing import APIRoute

    from postproject.service import client_api, stream, worker_api

    app = create_app(ServiceConfig("unused.pproj"))  # (its routers' routes are the ones requests reach)
    paths = json.loads(DOCUMENT.read_text())["paths"]
    routes = [*app.routes, *client_api.router.routes, *worker_api.router.routes, *stream.router.routes]
    compared = 0
    for route in routes:
        path = getattr(route, "path_format", None)
        if not isinstance(route, APIRoute) or path not in paths:
            continue
        for method in route.methods:
            operation = paths[path][method.lower()]
            documented = {
                p["name"]: any(o.get("type") == "array" for o in p["schema"].get("anyOf", [p["schema"]]))
                for p in operation.get("parameters", [])
                if p["in"] == "query"
            }
            assert client_api.route_query_names(route) == documented, (method, path)
            compared += 1
    assert compared == sum(len(operations) for operations in paths.values())
    client = service.client("reader")
    unknown = client.get("/v1/jobs", params={"limt": "5"})
    assert unknown.status_code == 400 and unknown.json()["field"] == "limt"
    twice = client.get("/v1/jobs", params=[("limit", "5"), ("limit", "6")])
    assert twice.status_code == 400 and "takes one value" in twice.json()["detail"]
    several = client.get("/v1/revisions", params=[("kind", "job_requested"), ("kind", "job_claimed")])
    assert several.status_code == 200, several.text
