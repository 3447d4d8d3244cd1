"""The entityworks Datasette plugin: maps as pictures, sudokus as grids, entropy histograms.

Installed with ``pip install "entityworks[web]"`` and registered through the ``datasette``
entry point, so ``datasette catalog.db`` (or ``entityworks browse catalog.db``) shows:

* in table views of ``maps``, each grid as a small picture. The table page only writes an
  ``<img>`` whose size comes from the row's width and height; the picture is a separate
  request, rendered then and kept in a bounded LRU cache, so a 100,000-map catalog lists
  as fast as a small one;
* on a map's row page, the map large with its corridors, rooms, caves and placements
  drawn, and those listed;
* ``sudoku_puzzles`` puzzles and solutions as 9x9 grids (clues bold), and the byte
  distribution of ``entropy_reports`` as a histogram.

Routes (``DB`` is the database's name in Datasette's URLs)::

    /-/entityworks/DB/maps/ID.png            the map as 'entityworks render --png' draws it
                                             (?block=1..32 pixels per cell, default 5)
    /-/entityworks/DB/maps/ID/overlay.png    the large picture of the row page (?block=)
    /-/entityworks/DB/maps/ID/thumb.png      the thumbnail (?size=8..256, default 96)
    /-/entityworks/DB/maps/ID.tiled.json     a Tiled map; its tileset is
    /-/entityworks/DB/maps/entityworks_tiles.png

``DB`` is tilde-encoded as in Datasette's own URLs, so any file name (quotes, ``#``, ``?``,
``%``, spaces) gives a working URL, and every value put into markup is escaped.

Every route answers only for a database whose ``maps`` table is an entityworks catalog, and
checks the same view permissions as Datasette's own table pages, for the actor of the
request: ``maps`` denied is a 403; each child table (``maps_rooms``, ``maps_corridors``,
``maps_caves``, ``maps_placements``) denied is neither listed nor drawn. A map whose stored
grid cannot be read (damaged, or claiming more cells than a catalog map may have) is a 500
with the reason, refused before it is inflated.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable
from typing import Any, TypeVar

import markupsafe
from datasette import Forbidden, NotFound, Response
from datasette import hookimpl as _datasette_hookimpl
from datasette.utils import tilde_decode, tilde_encode

from .. import _pictures as pictures

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def hookimpl(function: F) -> F:
    """datasette's ``hookimpl``, typed: it marks ``function`` as a hook and returns it."""
    marked: F = _datasette_hookimpl(function)
    return marked


PLUGIN = "entityworks"
#: Columns that make a ``maps`` table an entityworks catalog table.
MAP_COLUMNS = frozenset({"id", "kind", "width", "height", "grid"})

CACHE = pictures.PictureCache()
READER = pictures.CatalogReader()


def _prefix(datasette: Any, database: str) -> str:
    """``/-/entityworks/DB/maps`` with the database's route tilde-encoded, exactly as
    ``datasette.urls.database`` encodes it (base_url included): no character of a file
    name can end the path, start a query or a fragment, or leave an attribute."""
    route = datasette.get_database(database).route
    path: str = datasette.urls.path(f"-/{PLUGIN}/{tilde_encode(route)}/maps")
    return path


def _int_arg(request: Any, name: str, default: int, low: int, high: int) -> int:
    raw = request.args.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise BadRequest(f"{name} must be between {low} and {high}, got {value}")
    return value


class BadRequest(Exception):
    """A query parameter out of range: answered with status 400."""


class Unreadable(Exception):
    """A stored map that cannot be decoded (damaged, or over the size limit): status 500."""


async def _in_thread(fn: Callable[..., T], *args: Any) -> T:
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, functools.partial(fn, *args))


async def _may_view(datasette: Any, actor: Any, database: str, table: str) -> bool:
    """Whether ``actor`` may see ``table``: the checks of Datasette's own table page
    (the table, then its database, then the instance; the first that decides wins)."""
    visible, _private = await datasette.check_visibility(
        actor,
        permissions=[
            ("view-table", (database, table)),
            ("view-database", database),
            "view-instance",
        ],
    )
    return bool(visible)


@functools.cache
def _child_tables() -> tuple[tuple[str, str], ...]:
    """``(field, table)`` of each child list of a catalog map: caves, rooms, corridors..."""
    from ...catalog import MapRecord
    from ...model.schema import table_schema

    return tuple((child.field, child.schema.name) for child in table_schema(MapRecord).children)


async def _visible_record(datasette: Any, actor: Any, database: str, record: Any) -> Any:
    """``record`` with the child lists whose table ``actor`` may not view emptied: what
    is denied is neither listed nor drawn (nor part of a picture's ETag)."""
    denied: dict[str, list[Any]] = {
        field: []
        for field, table in _child_tables()
        if not await _may_view(datasette, actor, database, table)
    }
    return dataclasses.replace(record, **denied) if denied else record


async def _catalog_db(datasette: Any, request: Any) -> Any:
    """The Datasette database of the request, if its ``maps`` table is a catalog's."""
    route = tilde_decode(request.url_vars["database"])
    try:
        db = datasette.get_database(route=route)
    except KeyError:
        raise NotFound(f"no database {route!r}") from None
    if not await _may_view(datasette, request.actor, db.name, "maps"):
        raise Forbidden("you may not view this table")
    if not db.path or not await _is_catalog(db):
        raise NotFound(f"{db.name!r} holds no entityworks maps table")
    return db


#: Database files found to hold a catalog (a catalog never stops being one: no re-checks).
_CATALOGS: set[str] = set()


@functools.cache
def _catalog_columns() -> frozenset[str]:
    """Every column of a catalog's ``maps`` table (its companions aside), as this version
    reads it."""
    from ...catalog import MapRecord
    from ...model.schema import table_schema

    return frozenset(c.sql_name for c in table_schema(MapRecord).columns)


async def _is_catalog(db: Any) -> bool:
    """Whether ``db``'s ``maps`` table is an entityworks catalog this version can read: every
    column of the catalog's maps and each of its child tables. Another application's
    ``maps`` table (even one with ``id``, ``kind``, ``width``, ``height`` and ``grid``) is
    left to Datasette alone: no pictures, no map page, its routes a 404."""
    if db.path in _CATALOGS:
        return True
    if not await db.table_exists("maps"):
        return False
    found = MAP_COLUMNS | _catalog_columns() <= set(await db.table_columns("maps"))
    for _field, child in _child_tables():
        found = found and await db.table_exists(child)
    if found and db.path:
        _CATALOGS.add(db.path)
    return found


def _png(data: bytes, etag: str) -> Response:
    return Response(
        data,
        content_type="image/png",
        headers={"Cache-Control": "max-age=300", "ETag": f'"{etag}"'},
    )


def _not_modified(request: Any, etag: str) -> Response | None:
    if request.headers.get("if-none-match") == f'"{etag}"':
        return Response(b"", status=304, headers={"ETag": f'"{etag}"'})
    return None


async def _read(read: Callable[[str, int], T], db: Any, map_id: int) -> T:
    try:
        found = await _in_thread(read, db.path, map_id)
    except Exception as exc:  # noqa: BLE001 - a damaged or crafted blob, refused by its
        # decoder, or a row another tool edited: the reason, never a traceback
        raise Unreadable(f"map {map_id} cannot be read: {' '.join(str(exc).split())}") from None
    if found is None:
        raise NotFound(f"no map {map_id}")
    return found


async def _grid(db: Any, map_id: int) -> Any:
    return await _read(READER.grid, db, map_id)


async def _record(datasette: Any, request: Any, db: Any, map_id: int) -> Any:
    """The map with what the request's actor may see of its child rows."""
    record = await _read(READER.record, db, map_id)
    return await _visible_record(datasette, request.actor, db.name, record)


def _guarded(view: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(view)
    async def wrapper(datasette: Any, request: Any) -> Response:
        try:
            return await view(datasette, request)
        except BadRequest as exc:
            return Response.text(f"{exc}\n", status=400)
        except Unreadable as exc:
            return Response.text(f"{exc}\n", status=500)

    return wrapper


@_guarded
async def thumb_view(datasette: Any, request: Any) -> Response:
    db = await _catalog_db(datasette, request)
    box = _int_arg(request, "size", pictures.THUMB_BOX, *pictures.THUMB_RANGE)
    grid = await _grid(db, int(request.url_vars["id"]))
    etag = f"t{box}-{pictures.grid_digest(grid)}"
    if (early := _not_modified(request, etag)) is not None:
        return early
    data = await _in_thread(
        CACHE.get_or_render, ("thumb", etag), functools.partial(pictures.thumbnail_png, grid, box)
    )
    return _png(data, etag)


@_guarded
async def png_view(datasette: Any, request: Any) -> Response:
    db = await _catalog_db(datasette, request)
    block = _int_arg(request, "block", pictures.FULL_BLOCK, *pictures.BLOCK_RANGE)
    record = await _record(datasette, request, db, int(request.url_vars["id"]))
    marks = [(p.x, p.y) for p in getattr(record, "placements", [])]
    etag = f"p{block}-{pictures.record_digest(record, features=False)}"
    if (early := _not_modified(request, etag)) is not None:
        return early
    data = await _in_thread(
        CACHE.get_or_render,
        ("png", etag),
        functools.partial(pictures.full_png, record.grid, block, marks),
    )
    return _png(data, etag)


@_guarded
async def overlay_view(datasette: Any, request: Any) -> Response:
    db = await _catalog_db(datasette, request)
    record = await _record(datasette, request, db, int(request.url_vars["id"]))
    default = pictures.page_block(record.width, record.height)
    block = _int_arg(request, "block", default, *pictures.BLOCK_RANGE)
    etag = f"o{block}-{pictures.record_digest(record)}"
    if (early := _not_modified(request, etag)) is not None:
        return early
    data = await _in_thread(
        CACHE.get_or_render,
        ("overlay", etag),
        functools.partial(pictures.overlay_png, record, block),
    )
    return _png(data, etag)


@_guarded
async def tiled_view(datasette: Any, request: Any) -> Response:
    db = await _catalog_db(datasette, request)
    grid = await _grid(db, int(request.url_vars["id"]))
    data = await _in_thread(pictures.tiled_json, grid)
    return Response(data, content_type="application/json")


@_guarded
async def tileset_view(datasette: Any, request: Any) -> Response:
    await _catalog_db(datasette, request)
    data = CACHE.get_or_render(("tileset",), pictures.tileset_png)
    return _png(data, "tileset-16")


@hookimpl
def register_routes() -> list[tuple[str, Callable[..., Any]]]:
    base = rf"^/-/{PLUGIN}/(?P<database>[^/]+)/maps/"
    return [
        (base + r"entityworks_tiles\.png$", tileset_view),
        (base + r"(?P<id>\d{1,18})\.png$", png_view),
        (base + r"(?P<id>\d{1,18})/thumb\.png$", thumb_view),
        (base + r"(?P<id>\d{1,18})/overlay\.png$", overlay_view),
        (base + r"(?P<id>\d{1,18})\.tiled\.json$", tiled_view),
    ]


@hookimpl
def extra_css_urls(datasette: Any) -> list[str]:
    return [datasette.urls.static_plugins(PLUGIN, "entityworks.css")]


def _row_value(row: Any, name: str) -> Any:
    try:
        return row[name]
    except (KeyError, IndexError, TypeError):
        return None


def _map_cell(row: Any, value: Any, column: str, database: str, datasette: Any) -> Any:
    """A cell of a catalog's ``maps``: the grid as a thumbnail, the parameters folded;
    another application's ``maps`` table is shown as Datasette shows it."""

    async def inner() -> Any:
        db = datasette.get_database(database)
        if not db.path or not await _is_catalog(db):
            return None
        if column == "parameters":
            text = pictures.parameters_html(value)
            return markupsafe.Markup(text) if text else None
        map_id, width, height = (_row_value(row, n) for n in ("id", "width", "height"))
        if not all(isinstance(v, int) for v in (map_id, width, height)):
            return None
        w, h = pictures.display_size(width, height)
        kind = _row_value(row, "kind")
        alt = f"map {map_id}: {kind} {width}x{height}"
        src = f"{_prefix(datasette, database)}/{map_id}/thumb.png"
        # Markup.format escapes every argument: none can leave its attribute
        return markupsafe.Markup(
            '<img class="ew-map" src="{}" width="{}" height="{}" loading="lazy" '
            'alt="{}" title="{}">'
        ).format(src, w, h, alt, alt)

    return inner


@hookimpl
def render_cell(
    row: Any, value: Any, column: str, table: str | None, database: str, datasette: Any
) -> Any:
    if table == "maps" and column in ("grid", "parameters"):
        return _map_cell(row, value, column, database, datasette)
    if table == "sudoku_puzzles" and column in ("puzzle", "solution"):
        if column == "puzzle":
            grid = pictures.sudoku_html(value)
        else:
            grid = pictures.sudoku_html(_row_value(row, "puzzle"), value)
        return markupsafe.Markup(grid) if grid else None
    if table == "entropy_reports" and column == "distribution":
        svg = pictures.histogram_svg(value)
        return markupsafe.Markup(svg) if svg else None
    return None


@hookimpl
def extra_template_vars(
    view_name: str, table: str | None, database: str | None, request: Any, datasette: Any
) -> Any:
    if view_name != "row" or table != "maps" or request is None or database is None:
        return {}

    async def inner() -> dict[str, Any]:
        db = datasette.get_database(database)
        if not db.path or not await _is_catalog(db):
            return {}
        pks = request.url_vars.get("pks", "")
        try:
            map_id = int(pks)
        except ValueError:
            return {}
        try:
            record = await _in_thread(READER.record, db.path, map_id)
        except Exception:  # noqa: BLE001 - damaged, over the limit, edited by another tool:
            return {}  # the page is Datasette's, and shows the row alone
        if record is None:
            return {}
        record = await _visible_record(datasette, request.actor, database, record)
        block = pictures.page_block(record.width, record.height)
        prefix = _prefix(datasette, database)
        return {
            "entityworks_map": {
                "id": record.id,
                "kind": record.kind,
                "seed": record.seed,
                "width": record.width,
                "height": record.height,
                "pixel_width": record.width * block,
                "pixel_height": record.height * block,
                "overlay_url": f"{prefix}/{record.id}/overlay.png",
                "png_url": f"{prefix}/{record.id}.png",
                "tiled_url": f"{prefix}/{record.id}.tiled.json",
                "listings": pictures.listings(record),
            }
        }

    return inner
