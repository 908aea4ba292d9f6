"""``db-roles create URI``: the PostgreSQL roles of a production (docs/postgresql.md, "Database
roles"): ``pp_owner`` owns the schema (migrations only), ``pp_writer`` runs the farm's writes
(history append-only), ``pp_reader`` reads. ``--sql`` prints the SQL for a database
administrator instead of running it.
"""

from __future__ import annotations

import argparse

from postproject import locations
from postproject.cli.common import Context, Parser, command, group
from postproject.cli.output import Result

ROLES = ("pp_owner", "pp_writer", "pp_reader")


def roles_create(ctx: Context) -> Result | int:
    args = ctx.args
    text = locations.database_roles(args.production, apply=not args.sql)
    if args.sql and not ctx.out.json_mode:
        ctx.out.text(text)
        return 0
    shown = locations.display_location(args.production)
    if not ctx.out.json_mode:
        ctx.out.note(
            f"roles {', '.join(ROLES)} made and given production {shown}; grant them to login roles "
            "(GRANT pp_writer TO render)"
        )
        return 0
    return Result({"production": shown, "roles": list(ROLES), "applied": not args.sql, "sql": text})


def register(sub: argparse._SubParsersAction[Parser]) -> None:
    roles = group(sub, "db-roles", "PostgreSQL roles for a production: pp_owner, pp_writer, pp_reader")
    p = command(
        roles,
        "create",
        "create the roles and grant them the production (a PostgreSQL URI; run as an administrator)",
        roles_create,
    )
    p.add_argument(
        "--sql", action="store_true", help="print the SQL for a database administrator; run nothing"
    )
