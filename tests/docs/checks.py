"""Assertions beyond the shown output, run by the harness right after the block marked
``<!-- check: NAME -->``, with the page's namespace (what the block defined)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def tour(ns: dict[str, Any]) -> None:
    """The API tour's first block: the rows it wrote, read back."""
    from entityworks import col

    store, level = ns["store"], ns["Level"]
    assert ns["lvl"].id == 1
    assert [(r.x, r.y, r.label) for r in store.get(level, 1).rooms] == [
        (1, 2, None),
        (5, 5, "exit"),
    ]
    assert store.count(level, where=col("name").like("gen-%")) == 961  # 1001-1039 deleted
    assert store.get(level, 1).note == "edited" and store.get(level, 5000).name == "new"
    assert store.count(level, where=col("width") > 1000) == 0
    assert ns["Legacy"].__name__  # reflect gave a class


def update(ns: dict[str, Any]) -> None:
    """Update by filter, then every note back to None; projections."""
    from entityworks import col

    store, level = ns["store"], ns["Level"]
    wide = store.count(level, where=col("width") >= 80)
    assert wide > 0
    assert store.count(level, where={"note": None}) == store.count(level)
    assert store.count(level, where={"open_ratio": 0.5}) == wide
    assert next(store.select(level, columns=["name", "width"], order_by="name")) == ("first", 80)
    assert list(
        store.select(level, columns=["width", "note"], where={"name": "first"}, as_dict=True)
    ) == [{"width": 80, "note": None}]


def engines(ns: dict[str, Any]) -> None:
    """The Store on an engine of your own uses that engine and sees the same rows."""
    store, engine = ns["store"], ns["engine"]
    assert store.engine is engine
    assert store.count(ns["Level"]) > 1000
    store.close()


def relations(ns: dict[str, Any]) -> None:
    assert [b.isbn for b in ns["store"].select(ns["Book"])] == ["b2"]


def composite(ns: dict[str, Any]) -> None:
    assert [(s.sku, s.count) for s in ns["store"].select(ns["Stock"])] == [("pear", 9)]


def column_names(ns: dict[str, Any]) -> None:
    assert [lv.id for lv in ns["store"].select(ns["Level"], where={"remark": None})] == [2]


def nested(ns: dict[str, Any]) -> None:
    assert ns["store"].get(ns["House"], ns["house"].id) == ns["house"]


def dataset(ns: dict[str, Any]) -> None:
    """The nested DataSet export puts each customer's orders inside its row."""
    from pathlib import Path

    assert "<customers><id>1</id><name>Ada</name><orders><id>10</id>" in Path(
        "nested.xml"
    ).read_text(encoding="utf-8")


def alembic(ns: dict[str, Any]) -> None:
    """The second revision adds a NOT NULL column with a DEFAULT; the rows written before it
    got the DEFAULT, and the database holds only our tables' version table."""
    import os
    from pathlib import Path

    import sqlalchemy as sa

    from entityworks import Store
    from entityworks.migrate.versions import version_tables

    second = Path("migrations/versions/0002_book_pages.py").read_text(encoding="utf-8")
    assert "server_default=sa.text('0')" in second and "nullable=False" in second
    with Store(os.environ["ENTITYWORKS_DB"]) as store, store.engine.connect() as conn:
        pages = conn.execute(sa.text("SELECT pages FROM book ORDER BY id")).scalars().all()
        assert pages == [0, 0]
        assert version_tables(conn) == {"alembic_version": ("0002",)}


def dask(ns: dict[str, Any]) -> None:
    """The cluster stored every map once, in seed order."""
    stats = ns["stats"]
    assert (stats.count, stats.ids, stats.seeds) == (40, (1, 40), (1, 40))


CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    f.__name__: f
    for f in (
        tour,
        update,
        engines,
        relations,
        composite,
        column_names,
        nested,
        dataset,
        alembic,
        dask,
    )
}
