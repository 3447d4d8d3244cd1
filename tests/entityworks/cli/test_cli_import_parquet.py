"""``entityworks import-parquet``: a Parquet file's rows into an existing table, through the
columnar lane (``Store.insert_parquet``), all or nothing, one line on error."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from entityworks import AwareDatetime, Store, table
from entityworks.arrow import write_parquet

from ..sql.test_columnar import Reading, readings


def entityworks(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "entityworks", *args], capture_output=True, text=True, timeout=120
    )


def test_import_parquet_writes_what_insert_many_writes(tmp_path: Path) -> None:
    objs = readings(25)
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    with Store(source) as store:
        store.create(Reading)
        store.insert_many(objs)
    with Store(target) as store:
        store.create(Reading)
    out = tmp_path / "r.parquet"
    assert entityworks("parquet", "reading", str(out), "--db", str(source)).returncode == 0
    done = entityworks(
        "import-parquet", str(out), "reading", "--db", str(target), "--batch-size", "7"
    )
    assert done.returncode == 0, done.stderr
    assert "25" in done.stdout
    with Store(target) as store:
        assert list(store.select(Reading, order_by="id")) == objs
    # again: the keys clash, nothing more is written, one line names the row and column
    again = entityworks("import-parquet", str(out), "reading", "--db", str(target))
    assert again.returncode != 0
    assert len(again.stderr.strip().splitlines()) == 1 and "Traceback" not in again.stderr
    assert "row 0" in again.stderr and "'id'" in again.stderr
    with Store(target) as store:
        assert store.count(Reading) == 25


def test_import_parquet_keys_generated_and_refusals(tmp_path: Path) -> None:
    target = tmp_path / "b.db"
    with Store(target) as store:
        store.create(Reading)
    path = tmp_path / "r.parquet"
    write_parquet(Reading, readings(10), path)
    keyless = tmp_path / "keyless.parquet"
    pq.write_table(pq.read_table(path).drop_columns(["id"]), keyless)
    assert (
        entityworks("import-parquet", str(keyless), "reading", "--db", str(target)).returncode == 0
    )
    with Store(target) as store:
        assert [r.id for r in store.select(Reading, order_by="id")] == list(range(1, 11))
    bad = tmp_path / "bad.parquet"
    t = pq.read_table(keyless)
    sensors = pa.array(["s" if i != 4 else None for i in range(10)], pa.string())
    pq.write_table(t.set_column(t.column_names.index("sensor"), "sensor", sensors), bad)
    refused = entityworks("import-parquet", str(bad), "reading", "--db", str(target))
    assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1
    assert "row 4" in refused.stderr and "'sensor'" in refused.stderr
    not_parquet = entityworks("import-parquet", __file__, "reading", "--db", str(target))
    assert not_parquet.returncode != 0 and "Traceback" not in not_parquet.stderr
    with Store(target) as store:
        assert store.count(Reading) == 10


@dataclass
class Line:
    sku: str
    price: Decimal
    at: AwareDatetime | None = None


@table("orders")
@dataclass
class Order:
    id: int
    lines: list[Line] = field(default_factory=list)


def test_a_table_with_child_tables_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "o.db"
    with Store(db) as store:
        store.create(Order)
    path = tmp_path / "o.parquet"
    write_parquet(Order, [Order(1, [Line("a", Decimal("1.5"))])], path)
    refused = entityworks("import-parquet", str(path), "orders", "--db", str(db))
    assert refused.returncode != 0 and "insert_many" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    with Store(db) as store:
        assert store.count(Order) == 0
