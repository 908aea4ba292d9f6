"""What the service keeps in a production (issue 25): API tokens stored as hashes only, a
revision's principal, recorded replies and worker sessions found again by name, on both engines."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

import pytest

from postproject import (
    AlreadyExistsError,
    ConflictError,
    FakeClock,
    InvalidArgumentError,
    JobRequest,
    NotFoundError,
    Production,
    Reason,
    RepresentationKind,
)
from postproject.model.access import ApiRole, secret_hash
from tests.engines import is_postgresql

DIGEST = hashlib.sha256(b"request").digest()


def _stored_bytes(production: Production) -> bytes:
    """Every byte the production's storage holds (SQLite file and WAL, or a dump of the schema's rows)."""
    if not is_postgresql(production):
        path = production.path
        return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())
    from postproject.storage.postgresql import connection, uri

    with connection.connect(uri.parse(production.location), autocommit=True) as conn:
        tables = [
            r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        ]
        return b"".join(
            repr(conn.execute(f'SELECT * FROM "{table}"').fetchall()).encode() for table in tables
        )


def test_a_token_is_shown_once_and_stored_as_its_hash_only(production: Production) -> None:
    with production.edit(origin="test") as tx:
        created = tx.create_api_token("render-01", ApiRole.WORKER)
        receipt = tx.commit()
    assert receipt.revision is None  # stored state: the feed does not tick
    assert created.secret.startswith("ppa1_") and len(created.secret) == 48
    assert created.secret not in repr(created)
    assert production.access.token(created.secret) == created.token
    assert [t.name for t in production.access.tokens()] == ["render-01"]
    stored = _stored_bytes(production)
    assert created.secret.encode() not in stored
    assert created.secret[5:].encode() not in stored


def test_unknown_malformed_revoked_and_expired_tokens_authenticate_nobody(
    production: Production, clock: FakeClock
) -> None:
    with production.edit() as tx:
        kept = tx.create_api_token("kept", "reader")
        revoked = tx.create_api_token("gone", "supervisor")
        expiring = tx.create_api_token("brief", "submitter", expires_at=clock.now() + timedelta(hours=1))
        tx.commit()
    with production.edit() as tx:
        first = tx.revoke_api_token("gone")
        tx.commit()
    with production.edit() as tx:
        assert tx.revoke_api_token("gone").revoked_at == first.revoked_at  # the first time stays
        tx.commit()
    assert production.access.token(revoked.secret) is None
    assert production.access.token(expiring.secret) is not None
    clock.advance(timedelta(hours=1))
    assert production.access.token(expiring.secret) is None  # expired from expires_at on
    for bad in ("", "ppa1_", kept.secret[:-1], kept.secret + "x", "ppl1:" + kept.secret[5:], 42, None):
        assert production.access.token(bad) is None
    assert production.access.token(kept.secret) is not None


def test_token_names_are_unique_and_checked(production: Production, clock: FakeClock) -> None:
    with production.edit() as tx:
        tx.create_api_token("ci", "reader")
        with pytest.raises(AlreadyExistsError):
            tx.create_api_token("ci", "worker")
        for bad in ("", " ci", "a b", "x" * 129, "-lead"):
            with pytest.raises(InvalidArgumentError, match="token name"):
                tx.create_api_token(bad, "reader")
        with pytest.raises(InvalidArgumentError, match="role"):
            tx.create_api_token("admin", "root")
        with pytest.raises(InvalidArgumentError, match="future"):
            tx.create_api_token("past", "reader", expires_at=clock.now())
        with pytest.raises(NotFoundError):
            tx.revoke_api_token("nobody")
        tx.commit()
    assert [t.name for t in production.access.tokens()] == ["ci"]


def test_a_revision_records_its_principal_in_the_feed_summaries_and_job_history(
    production: Production,
) -> None:
    with production.edit(origin="postproject-service", principal="alice") as tx:
        asset = tx.create_asset("shot")
        job = tx.request_job(JobRequest("org.example:render", (), asset, RepresentationKind.DERIVED))
        receipt = tx.commit()
    with production.edit(origin="postproject-cli") as tx:
        tx.cancel_job(job)
        tx.commit()
    assert receipt.revision is not None and receipt.revision.principal == "alice"
    assert [r.principal for r in production.changes_since(0)] == ["alice", None]
    assert [r.principal for r in production.revisions()] == [None, "alice"]
    assert [(h.kind, h.origin, h.principal) for h in production.job_history(job)] == [
        ("job_requested", "postproject-service", "alice"),
        ("job_cancelled", "postproject-cli", None),
    ]
    with pytest.raises(InvalidArgumentError, match="principal"):
        production.edit(principal="")


def test_a_one_call_claim_records_its_principal(production: Production) -> None:
    """``Production.claim_next_job`` and ``claim_next_job_lease`` (on PostgreSQL one server call,
    which now sets the principal in the call's own transaction) record who they act for, as an
    edit does; a refused claim commits nothing and the next call works."""
    from postproject import ToolIdentity

    tool, lease = ToolIdentity("renderer", "1"), timedelta(minutes=5)
    with production.edit() as tx:
        asset = tx.create_asset("shot")
        first = tx.request_job(JobRequest("org.example:render", (), asset, RepresentationKind.DERIVED))
        second = tx.request_job(JobRequest("org.example:render", (), asset, RepresentationKind.DERIVED))
        tx.commit()
    work = production.claim_next_job(
        tool, lease, origin="postproject-service", message="Claim job", principal="farm-a"
    )
    assert work is not None and work.job.id == first
    claimed = production.claim_next_job_lease(tool, lease, principal="farm-b")
    assert claimed is not None and claimed.job_id == second
    assert production.claim_next_job(tool, lease, principal="farm-c") is None  # nothing left: no revision
    with pytest.raises(InvalidArgumentError, match="principal"):
        production.claim_next_job(tool, lease, principal="x" * 129)
    history = [(h.kind, h.origin, h.principal) for j in (first, second) for h in production.job_history(j)]
    assert history == [
        ("job_requested", None, None),
        ("job_claimed", "postproject-service", "farm-a"),
        ("job_requested", None, None),
        ("job_claimed", None, "farm-b"),
    ]
    assert [r.principal for r in production.changes_since(0)] == [None, "farm-a", "farm-b"]


def test_a_recorded_reply_commits_with_its_edit_or_not_at_all(production: Production) -> None:
    with production.edit() as tx:
        asset = tx.create_asset("shot")
        job = tx.request_job(JobRequest("org.example:render", (), asset, RepresentationKind.DERIVED))
        assert tx.job(job).id == job  # the edit reads its own job before it commits
        tx.record_reply("jobs:alice", "key-1", DIGEST, f'{{"id": "{job}"}}')
        tx.rollback()
    assert production.access.reply("jobs:alice", "key-1") is None
    with production.edit() as tx:
        tx.record_reply("jobs:alice", "key-1", DIGEST, "{}")
        with pytest.raises(AlreadyExistsError):
            tx.record_reply("jobs:alice", "key-1", DIGEST, "{}")
        tx.commit()
    found = production.access.reply("jobs:alice", "key-1")
    assert found is not None and (found.digest, found.reply) == (DIGEST, "{}")
    with production.edit() as tx:
        with pytest.raises(AlreadyExistsError):  # committed: a second reply is refused
            tx.record_reply("jobs:alice", "key-1", secret_hash("ppa1_other"), "[]")
        with pytest.raises(InvalidArgumentError, match="digest"):
            tx.record_reply("jobs:alice", "key-2", b"short", "{}")
        with pytest.raises(InvalidArgumentError, match="scope"):
            tx.record_reply("", "key-2", DIGEST, "{}")


def test_a_worker_session_is_found_again_by_name_until_it_is_replaced(production: Production) -> None:
    with production.edit() as tx:
        first = tx.register_worker("node-1", capacity=2, kinds=["org.example:render"])
        tx.commit()
    again = production.access.worker_session("node-1", first.session_id)
    assert again == first
    with production.edit() as tx:
        tx.register_worker("node-1", capacity=2)
        tx.commit()
    with pytest.raises(ConflictError) as raised:
        production.access.worker_session("node-1", first.session_id)
    assert raised.value.reason is Reason.WORKER_SESSION_REPLACED
    with pytest.raises(NotFoundError):
        production.access.worker_session("node-2", first.session_id)


def test_the_cli_shows_a_revisions_principal(production: Production) -> None:
    from postproject.cli import human
    from postproject.views import revision_view

    with production.edit(origin="postproject-service 1", message="Cancel job", principal="ana") as tx:
        tx.create_asset("x")
        revision = tx.commit().revision
    assert revision is not None
    view = revision_view(revision)
    assert view["principal"] == "ana"
    assert "Cancel job (by ana)" in human.revision_line(view, 0)
    assert "principal: ana" in human.render({"revision": view}, "revision", 0)
