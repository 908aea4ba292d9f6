"""Setup and provenance commands: init, asset, representation, media-root, activity, metadata."""

from __future__ import annotations

import argparse

from postproject import transfer, views
from postproject.cli.common import (
    Context,
    Parser,
    add_limit,
    command,
    commit,
    edit,
    group,
    parse_id,
    parse_int,
)
from postproject.cli.output import Result
from postproject.locations import display_location, is_location_uri
from postproject.model import values
from postproject.model.activities import ActivitySpec, EdgeInput
from postproject.model.assets import RepresentationKind
from postproject.model.clock import from_micros
from postproject.model.errors import ConflictError, InvalidArgumentError
from postproject.model.identity import AgentIdentity, ToolIdentity
from postproject.model.ids import ActivityId, AssetId, RepresentationId
from postproject.model.metadata import Property
from postproject.model.refs import REF_KINDS, parse_ref
from postproject.model.values import MetadataValue
from postproject.production import Production


def init(ctx: Context) -> Result:
    production = Production.create(ctx.args.production, clock=ctx.clock, allow_injected_clock=True)
    ctx.opened.append(production)
    where = production.location
    data = {
        "id": str(production.id),
        "path": where if is_location_uri(where) else str(production.path.resolve()),
    }
    receipt = {"production_id": str(production.id), "revision": None}
    return Result(views.with_receipt(data, receipt), "created")


# --- assets -----------------------------------------------------------------------------


def asset_create(ctx: Context) -> Result:
    production = ctx.open(ctx.args.production, write=True)
    with edit(production, "Create asset") as tx:
        asset_id = tx.create_asset(ctx.args.name)
        receipt = commit(tx)
    return Result({"id": str(asset_id), "commit_receipt": receipt})


def asset_show(ctx: Context) -> Result:
    asset_id = parse_id(AssetId, ctx.args.asset)
    return Result(views.asset_view(ctx.open(ctx.args.production).asset(asset_id)))


def asset_list(ctx: Context) -> Result:
    limit = parse_int("--limit", ctx.args.limit)
    page = ctx.open(ctx.args.production).assets(limit=limit, cursor=ctx.args.cursor)
    return Result(views.paged(page, views.asset_view), "page:asset")


# --- representations --------------------------------------------------------------------


def representation_add(ctx: Context) -> Result:
    args = ctx.args
    asset_id = parse_id(AssetId, args.asset)
    kind = RepresentationKind.parse(args.kind)
    production = ctx.open(args.production, write=True)
    with edit(production, "Add representation") as tx:
        rep_id = tx.add_representation(asset_id, kind, args.path, root=args.root)
        receipt = commit(tx)
    return Result({"id": str(rep_id), "commit_receipt": receipt})


def representation_show(ctx: Context) -> Result:
    rep_id = parse_id(RepresentationId, ctx.args.representation)
    production = ctx.open(ctx.args.production)
    view = views.representation_view(production.representation(rep_id))
    view["availability"] = production.availability(rep_id).value
    return Result(view)


def representation_list(ctx: Context) -> Result:
    args = ctx.args
    asset_id = parse_id(AssetId, args.asset) if args.asset else None
    kind = RepresentationKind.parse(args.kind) if args.kind else None
    limit = parse_int("--limit", args.limit)
    page = ctx.open(args.production).representations(asset_id, kind, limit=limit, cursor=args.cursor)
    return Result(views.paged(page, views.representation_view), "page:representation")


def representation_observe(ctx: Context) -> Result:
    rep_id = parse_id(RepresentationId, ctx.args.representation)
    production = ctx.open(ctx.args.production, write=True)
    with edit(production, "Observe representation") as tx:
        changed = tx.observe_representation(rep_id)
        receipt = commit(tx)
    return Result({"id": str(rep_id), "changed": changed, "commit_receipt": receipt})


# --- media roots ------------------------------------------------------------------------


def media_root_add(ctx: Context) -> Result:
    production = ctx.open(ctx.args.production, write=True)
    with edit(production, "Add media root") as tx:
        tx.add_media_root(ctx.args.name, ctx.args.path)
        receipt = commit(tx)
    root = next(r for r in production.media_roots() if r.name == ctx.args.name)
    return Result(views.with_receipt(views.media_root_view(root), receipt))


def media_root_list(ctx: Context) -> Result:
    roots = ctx.open(ctx.args.production).media_roots()
    return Result(views.page_view(views.media_root_view(r) for r in roots), "page:media_root")


# --- activities -------------------------------------------------------------------------


def _edge(text: str) -> EdgeInput:
    """``REP`` or ``REP:ROLE`` (the role is a namespaced identifier, so it may hold colons)."""
    rep, colon, role = text.partition(":")
    rep_id = parse_id(RepresentationId, rep)
    return (rep_id, role) if colon else rep_id


def _tool(args: argparse.Namespace) -> ToolIdentity | None:
    if args.tool_name is None:
        if args.tool_version is not None or args.tool_uri is not None:
            raise InvalidArgumentError("--tool-version and --tool-uri need --tool-name")
        return None
    return ToolIdentity(args.tool_name, args.tool_version, args.tool_uri)


def _instant(field: str, text: str | None) -> int | None:
    """Unix microseconds within the calendar (years 1970-9999; the option takes no sign)."""
    if text is None:
        return None
    micros = parse_int(field, text)
    if micros > values.MAX_TIMESTAMP_MICROS:
        raise InvalidArgumentError(
            f"{field} must be at most {values.MAX_TIMESTAMP_MICROS} (year 9999); got {text}"
        )
    return micros


def activity_create(ctx: Context) -> Result:
    args = ctx.args
    started = _instant("--started-at-unix-micros", args.started_at)
    finished = _instant("--finished-at-unix-micros", args.finished_at)
    spec = ActivitySpec(
        args.kind,
        inputs=tuple(_edge(e) for e in args.input),
        outputs=tuple(_edge(e) for e in args.output),
        tool=_tool(args),
        agent=AgentIdentity(args.agent_name) if args.agent_name is not None else None,
        started_at=from_micros(started) if started is not None else None,
        finished_at=from_micros(finished) if finished is not None else None,
    )
    production = ctx.open(args.production, write=True)
    with edit(production, "Create activity") as tx:
        activity_id = tx.create_activity(spec)
        receipt = commit(tx)
    return Result({"id": str(activity_id), "commit_receipt": receipt})


def activity_show(ctx: Context) -> Result:
    activity_id = parse_id(ActivityId, ctx.args.activity)
    return Result(views.activity_view(ctx.open(ctx.args.production).activity(activity_id)), "activity")


def activity_list(ctx: Context) -> Result:
    limit = parse_int("--limit", ctx.args.limit)
    page = ctx.open(ctx.args.production).activities(limit=limit, cursor=ctx.args.cursor, kind=ctx.args.kind)
    return Result(views.paged(page, views.activity_view), "page:activity")


# --- metadata ---------------------------------------------------------------------------


def parse_value(text: str) -> MetadataValue:
    """A typed value from its tagged JSON (``{"type": "string", "value": "x"}``)."""
    return values.parse_json(text)


def metadata_add(ctx: Context) -> Result:
    args = ctx.args
    target = parse_ref(args.target)
    prop = Property(args.vocabulary, args.property)
    value = parse_value(args.value)
    production = ctx.open(args.production, write=True)
    with edit(production, "Add metadata") as tx:
        tx.add_metadata(target, prop, value)
        receipt = commit(tx)
    data = {
        "target": views.ref_view(target),
        "vocabulary": prop.vocabulary,
        "property": prop.name,
        "value": values.to_json(value),
    }
    return Result(views.with_receipt(data, receipt))


def metadata_list(ctx: Context) -> Result:
    target = parse_ref(ctx.args.target)
    assertions = ctx.open(ctx.args.production).metadata[target]
    return Result(views.page_view(views.assertion_view(a) for a in assertions), "page:metadata")


# --- parser -----------------------------------------------------------------------------

TARGET_HELP = f"KIND:ID with KIND one of {', '.join(REF_KINDS)} (e.g. job:0190…)"


def copy(ctx: Context) -> Result:
    report = transfer.copy(ctx.args.production, ctx.args.destination)
    data = {
        "source": display_location(ctx.args.production),
        "destination": display_location(ctx.args.destination),
        "production_id": str(report.production_id),
        "rows": report.rows,
    }
    return Result(data, "object")


def verify(ctx: Context) -> Result:
    report = transfer.verify(ctx.args.production, ctx.args.other)
    data = {
        "equal": report.equal,
        "rows": {name: {"first": a, "second": b} for name, (a, b) in report.rows.items()},
        "differences": report.differences,
    }
    if not report.equal:
        raise ConflictError("the productions differ: " + "; ".join(report.differences[:5]))
    return Result(data, "object")


def register(sub: argparse._SubParsersAction[Parser]) -> None:
    command(sub, "init", "create a new, empty production file (no revision yet)", init)
    p = command(sub, "copy", "copy a whole production to a new or empty one (another engine too)", copy)
    p.add_argument("destination", metavar="DESTINATION", help="a new .pproj path or a postgresql:// URI")
    p = command(sub, "verify", "prove two productions hold the same facts", verify)
    p.add_argument("other", metavar="OTHER", help="the other production (path or URI)")
    _register_assets(group(sub, "asset", "create and read assets (logical media identities)"))
    _register_representations(
        group(sub, "representation", "add and read representations (files realising an asset)")
    )
    _register_media_roots(group(sub, "media-root", "configure named media roots"))
    _register_activities(group(sub, "activity", "record and read provenance activities"))
    _register_metadata(group(sub, "metadata", "add and read typed metadata"))


def _register_assets(assets: argparse._SubParsersAction[Parser]) -> None:
    p = command(assets, "create", "create an asset; prints its id", asset_create)
    p.add_argument("--name", help="a display name")
    p = command(assets, "show", "show one asset", asset_show)
    p.add_argument("asset", metavar="ASSET", help="asset id")
    add_limit(command(assets, "list", "list assets in creation order", asset_list))


def _register_representations(reps: argparse._SubParsersAction[Parser]) -> None:
    p = command(reps, "add", "add a file as a representation of an asset; prints its id", representation_add)
    p.add_argument("asset", metavar="ASSET", help="asset id")
    p.add_argument("kind", metavar="KIND", help="original, proxy, optimized or derived")
    p.add_argument("path", metavar="PATH", help="the file (relative to --root when given)")
    p.add_argument("--root", metavar="NAME", help="store the path relative to this media root")
    about = "show one representation and whether its file is online here"
    p = command(reps, "show", about, representation_show)
    p.add_argument("representation", metavar="REP", help="representation id")
    p = command(reps, "list", "list representations", representation_list)
    p.add_argument("--asset", metavar="ASSET", help="only this asset's")
    p.add_argument("--kind", metavar="KIND", help="only this kind")
    add_limit(p)
    about = "re-read a representation's file and record a changed fingerprint"
    p = command(reps, "observe", about, representation_observe)
    p.add_argument("representation", metavar="REP", help="representation id")


def _register_media_roots(roots: argparse._SubParsersAction[Parser]) -> None:
    about = "configure a media root, optionally with this machine's directory"
    p = command(roots, "add", about, media_root_add)
    p.add_argument("name", metavar="NAME", help="root name (no '/' or '\\')")
    p.add_argument("path", metavar="PATH", nargs="?", help="this machine's directory for the root")
    command(roots, "list", "list the configured media roots", media_root_list)


def _register_activities(acts: argparse._SubParsersAction[Parser]) -> None:
    about = "record a completed activity (inputs -> outputs); prints its id"
    p = command(acts, "create", about, activity_create)
    p.add_argument("--kind", required=True, metavar="K", help="namespaced kind, e.g. org.example:transcode")
    p.add_argument("--input", action="append", default=[], metavar="REP[:ROLE]", help="an input (repeatable)")
    p.add_argument(
        "--output", action="append", default=[], metavar="REP[:ROLE]", help="an output (repeatable)"
    )
    p.add_argument("--tool-name", metavar="N", help="the tool that did the work")
    p.add_argument("--tool-version", metavar="V", help="its version")
    p.add_argument("--tool-uri", metavar="U", help="its absolute URI")
    p.add_argument("--agent-name", metavar="A", help="who ran it (person, host or service)")
    p.add_argument("--started-at-unix-micros", dest="started_at", metavar="T", help="start time")
    p.add_argument("--finished-at-unix-micros", dest="finished_at", metavar="T", help="finish time")
    p = command(acts, "show", "show one activity with its edge snapshots", activity_show)
    p.add_argument("activity", metavar="ACTIVITY", help="activity id")
    p = command(acts, "list", "list activities", activity_list)
    p.add_argument("--kind", metavar="K", help="only this kind")
    add_limit(p)


def _register_metadata(meta: argparse._SubParsersAction[Parser]) -> None:
    p = command(meta, "add", "append a typed value of a property to an object", metadata_add)
    p.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    p.add_argument("vocabulary", metavar="VOCABULARY", help="the vocabulary (often a URI)")
    p.add_argument("property", metavar="PROPERTY", help="the property name within it")
    value_help = 'tagged JSON, e.g. \'{"type": "string", "value": "x"}\''
    p.add_argument("value", metavar="VALUE_JSON", help=value_help)
    p = command(meta, "list", "list an object's metadata", metadata_list)
    p.add_argument("target", metavar="TARGET", help=TARGET_HELP)
