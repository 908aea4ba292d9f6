"""``api-token create|list|revoke``: the service's API tokens, made against the production itself.

``create`` prints the new token once: alone on stdout (so ``> file`` keeps it), or as
``{"token": ...}`` with ``--json``; the production keeps only its SHA-256, so it can never be
shown again. ``list`` shows names, roles and times, never a secret; ``revoke`` refuses the
token from the next request on. Tokens and revocations are stored state: no revision.
"""

from __future__ import annotations

import argparse
import re
from datetime import timedelta

from postproject import humanize
from postproject.cli.common import Context, Parser, choice, command, edit, group
from postproject.cli.output import Result
from postproject.model import clock as clocks
from postproject.model.access import ApiRole, ApiToken
from postproject.model.errors import InvalidArgumentError
from postproject.views import View, micros

ROLES = tuple(role.value for role in ApiRole)
_DAYS = re.compile(r"([0-9]{1,5})d")


def token_view(token: ApiToken) -> View:
    return {
        "name": token.name,
        "role": token.role.value,
        "created_at_unix_micros": micros(token.created_at),
        "expires_at_unix_micros": micros(token.expires_at),
        "revoked_at_unix_micros": micros(token.revoked_at),
    }


def parse_expiry(text: str) -> timedelta:
    """``90d``, ``12h``, ``30m``: how long a token lives (1 s to 100 000 days)."""
    days = _DAYS.fullmatch(text)
    if days is not None:
        lifetime = timedelta(days=int(days.group(1)))
        if lifetime <= timedelta(0):
            raise InvalidArgumentError(f"--expires must be positive; got {text!r}")
        return lifetime
    return humanize.parse_duration(
        text, field="--expires", minimum=timedelta(seconds=1), maximum=timedelta(days=100_000)
    )


def token_create(ctx: Context) -> Result | int:
    args = ctx.args
    role = choice("--role", args.role, ROLES)
    lifetime = parse_expiry(args.expires) if args.expires is not None else None
    production = ctx.open(args.production, write=True)
    expires_at = production.clock.now() + lifetime if lifetime is not None else None
    with edit(production, "Create API token") as tx:
        created = tx.create_api_token(args.name, role, expires_at=expires_at)
        tx.commit()
    if ctx.out.json_mode:
        return Result({"token": created.secret, **token_view(created.token)})
    ctx.out.text(created.secret + "\n")
    when = f", expires {clocks.from_micros(micros(expires_at) or 0).isoformat()}" if expires_at else ""
    ctx.out.note(f"API token {created.token.name} ({role}{when}): shown once; keep it in a file (mode 0600)")
    return 0


def token_list(ctx: Context) -> Result:
    tokens = ctx.open(ctx.args.production).access.tokens()
    return Result({"items": [token_view(t) for t in tokens], "next_cursor": None}, "page:api_token")


def token_revoke(ctx: Context) -> Result:
    production = ctx.open(ctx.args.production, write=True)
    with edit(production, "Revoke API token") as tx:
        token = tx.revoke_api_token(ctx.args.name)
        tx.commit()
    return Result(token_view(token))


def register(sub: argparse._SubParsersAction[Parser]) -> None:
    tokens = group(sub, "api-token", "the service's API tokens: create, list, revoke")
    p = command(tokens, "create", "create an API token for the service; prints it once", token_create)
    p.add_argument("--role", required=True, metavar="ROLE", help=f"one of {', '.join(ROLES)}")
    p.add_argument(
        "--name", required=True, metavar="NAME", help="a unique name (the principal of its revisions)"
    )
    p.add_argument("--expires", metavar="DUR", help="lifetime, e.g. 90d, 12h (default: until revoked)")
    command(tokens, "list", "list API tokens (names, roles, times; never a secret)", token_list)
    p = command(tokens, "revoke", "revoke an API token (refused from the next request on)", token_revoke)
    p.add_argument("name", metavar="NAME", help="the token's name")
