"""JSON columns the peers made (issue 32, item 4): sqlite-utils' JSON text and SQLModel's
``JSON`` columns (PostgreSQL ``json``, MariaDB ``JSON``, SQLite text) read through a
dataclass of ours as the values the peer wrote, filters into them select what Python
selects over those values, and what we write the peer reads back as we wrote it."""

from __future__ import annotations

import functools
import json
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks import Store, col, table

ROWS: list[dict[str, Any]] = [
    {"id": 1, "meta": {"size": 3, "name": "a", "deep": {"k": [1, 2]}}, "tags": ["x", "y"]},
    {"id": 2, "meta": {"size": 10.5, "flag": True}, "tags": []},
    {"id": 3, "meta": {"size": "3"}, "tags": ["y", "x "]},
    {"id": 4, "meta": {}, "tags": ["X"]},
]


@table("peer_docs")
@dataclass
class Doc:
    id: int
    meta: dict[str, Any]
    tags: list[str]


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    return functools.reduce(operator.getitem, path, value)


def _agree(store: Store, rows: list[dict[str, Any]]) -> None:
    """Every row reads back as the peer wrote it; filters select what Python selects."""
    got = sorted(store.select(Doc), key=lambda d: d.id)
    assert [(d.id, d.meta, d.tags) for d in got] == [(r["id"], r["meta"], r["tags"]) for r in rows]
    checks: list[tuple[Any, Any]] = [
        (col("meta")["size"] >= 3, lambda r: _number(r["meta"].get("size")) >= 3),
        (col("meta")["size"] == "3", lambda r: r["meta"].get("size") == "3"),
        (col("meta")["flag"] == True, lambda r: r["meta"].get("flag") is True),  # noqa: E712
        (col("meta")["deep"]["k"][1] == 2, lambda r: _deep(r) == 2),
        (col("tags")[0] == "x", lambda r: r["tags"][:1] == ["x"]),
        (col("tags").contains(["x"]), lambda r: "x" in r["tags"]),
        (col("meta").contains({"name": "a"}), lambda r: r["meta"].get("name") == "a"),
    ]
    for where, keep in checks:
        assert sorted(d.id for d in store.select(Doc, where=where)) == [
            r["id"] for r in rows if keep(r)
        ], where


def _number(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok else float("-inf")


def _deep(row: dict[str, Any]) -> Any:
    try:
        return _at(row["meta"], ("deep", "k", 1))
    except (KeyError, IndexError, TypeError):
        return None


def test_sqlite_utils_json_text_reads_and_filters(tmp_path: Path) -> None:
    sqlite_utils = pytest.importorskip("sqlite_utils")
    path = tmp_path / "peer.db"
    sqlite_utils.Database(path)["peer_docs"].insert_all(ROWS, pk="id")
    with Store(path) as store:
        _agree(store, ROWS)
        store.insert(Doc(5, {"size": 4}, ["z"]))
    back = {r["id"]: r for r in sqlite_utils.Database(path)["peer_docs"].rows}
    assert json.loads(back[5]["meta"]) == {"size": 4} and json.loads(back[5]["tags"]) == ["z"]


def test_sqlmodel_json_columns_read_and_filter(backend_url: str) -> None:
    sqlmodel = pytest.importorskip("sqlmodel")

    class Base(sqlmodel.SQLModel):
        metadata = sa.MetaData()

    class PeerDoc(Base, table=True):
        __tablename__ = "peer_docs"
        id: int = sqlmodel.Field(primary_key=True)
        meta: dict[str, Any] = sqlmodel.Field(sa_column=sa.Column(sa.JSON, nullable=False))
        tags: list[str] = sqlmodel.Field(sa_column=sa.Column(sa.JSON, nullable=False))

    engine = sa.create_engine(backend_url)
    try:
        Base.metadata.create_all(engine)
        with sqlmodel.Session(engine) as session:
            session.add_all([PeerDoc(**r) for r in ROWS])
            session.commit()
        with Store(backend_url) as store:
            _agree(store, ROWS)
            store.insert(Doc(5, {"size": 4, "name": "e"}, ["z"]))
        with sqlmodel.Session(engine) as session:
            mine = session.get(PeerDoc, 5)
            assert mine is not None and (mine.meta, mine.tags) == ({"size": 4, "name": "e"}, ["z"])
    finally:
        Base.metadata.drop_all(engine)
        engine.dispose()
