""".NET DiffGrams applied to stored DataSets: changes by key in one transaction, conflicts
refuse the whole document, and every XML hardening guarantee holds (issue 15).

Mono's own DiffGrams (every common .NET type, flat and nested, a key change) are in
test_dotnet_interop.py; these documents are written by hand to reach each rule.
"""
# ruff: noqa: E501 - the documents keep one row per line, as .NET writes them

from __future__ import annotations

import decimal
import gzip
import math
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from entityworks import Store, XMLImportError, table
from entityworks.cli import cli
from entityworks.sql.exchange.diffgram import Changes
from entityworks.xml.diffgram import is_diffgram
from entityworks.xml.table import read_xml

from .test_dataset import FLAT_XML, shop_xsd

HEAD = (
    '<?xml version="1.0" standalone="yes"?>\n'
    '<diffgr:diffgram xmlns:msdata="urn:schemas-microsoft-com:xml-msdata" '
    'xmlns:diffgr="urn:schemas-microsoft-com:xml-diffgram-v1">\n'
)
# The stored shop: customers 1 Ada, 2 (no name); orders 10 (1, 9.50, placed), 11 (1), 12 (2, 3)
CHANGES = (
    HEAD
    + """<Shop>
<customers diffgr:id="customers1" msdata:rowOrder="0"><id>1</id><name>Ada</name></customers>
<customers diffgr:id="customers2" msdata:rowOrder="1" diffgr:hasChanges="modified"><id>2</id><name>Bob</name></customers>
<customers diffgr:id="customers3" msdata:rowOrder="2" diffgr:hasChanges="inserted"><id>3</id><name>Cy</name></customers>
<orders diffgr:id="orders1" msdata:rowOrder="0"><order_id>10</order_id><customer_id>1</customer_id><total>9.50</total><placed>2024-05-01T08:00:00Z</placed></orders>
<orders diffgr:id="orders2" msdata:rowOrder="1" diffgr:hasChanges="modified"><order_id>21</order_id><customer_id>3</customer_id><total>4.5</total></orders>
<orders diffgr:id="orders4" msdata:rowOrder="3" diffgr:hasChanges="inserted"><order_id>13</order_id><customer_id>2</customer_id></orders>
</Shop>
<diffgr:before>
<customers diffgr:id="customers2" msdata:rowOrder="1"><id>2</id></customers>
<orders diffgr:id="orders2" msdata:rowOrder="1"><order_id>11</order_id><customer_id>1</customer_id></orders>
<orders diffgr:id="orders3" msdata:rowOrder="2"><order_id>12</order_id><customer_id>2</customer_id><total>3</total></orders>
</diffgr:before>
</diffgr:diffgram>
"""
)
AFTER = {
    "customers": [(1, "Ada"), (2, "Bob"), (3, "Cy")],
    "orders": [(10, 1, decimal.Decimal("9.50")), (13, 2, None), (21, 3, decimal.Decimal("4.5"))],
}


@pytest.fixture
def shop(tmp_path: Path, store: Store) -> tuple[Store, Path]:
    """The flat shop DataSet stored on each backend, and its XSD."""
    xsd, xml = tmp_path / "shop.xsd", tmp_path / "shop.xml"
    xsd.write_text(shop_xsd(False))
    xml.write_text(FLAT_XML)
    store.import_dataset(xml, xsd)
    return store, xsd


def content(store: Store) -> dict[str, list[tuple[object, ...]]]:
    customers, orders = store.reflect("customers"), store.reflect("orders")
    return {
        "customers": [(c.id, c.name) for c in store.select(customers, order_by="id")],
        "orders": [
            (o.order_id, o.customer_id, o.total) for o in store.select(orders, order_by="order_id")
        ],
    }


def write(tmp_path: Path, text: str, name: str = "changes.xml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_changes_apply_by_key_in_one_transaction(tmp_path: Path, shop: tuple[Store, Path]) -> None:
    store, xsd = shop
    path = write(tmp_path, CHANGES)
    assert is_diffgram(path) and not is_diffgram(xsd)
    changes = store.import_diffgram(path, xsd)
    # order 11 became 21 (a new key: insert 21, delete 11), pointing at the new customer
    assert changes == {
        "customers": Changes(inserted=1, updated=1, deleted=0, unchanged=1),
        "orders": Changes(inserted=2, updated=0, deleted=2, unchanged=1),
    }
    assert content(store) == AFTER


def test_the_schema_can_come_from_the_database(tmp_path: Path, shop: tuple[Store, Path]) -> None:
    store, _ = shop
    store.import_diffgram(write(tmp_path, CHANGES))  # tables and relations as recorded
    assert content(store) == AFTER


def test_applying_twice_is_a_conflict_and_changes_nothing(
    tmp_path: Path, shop: tuple[Store, Path]
) -> None:
    store, xsd = shop
    path = write(tmp_path, CHANGES)
    store.import_diffgram(path, xsd)
    with pytest.raises(
        XMLImportError, match="conflict in table 'customers'.*stored row already has this key"
    ) as info:
        store.import_diffgram(path, xsd)
    assert info.value.row == 3
    assert content(store) == AFTER


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # a before image that does not match the stored row (someone changed it meanwhile)
        (
            '<orders diffgr:id="orders3" msdata:rowOrder="2"><order_id>12</order_id>'
            "<customer_id>2</customer_id><total>3</total>",
            '<orders diffgr:id="orders3" msdata:rowOrder="2"><order_id>12</order_id>'
            "<customer_id>2</customer_id><total>3.01</total>",
            r"diffgr:before row 3, line 14 \(order_id=12\): the stored row differs from the before "
            r"image in column 'total' \(Decimal\('3'\), not Decimal\('3.01'\)\)",
        ),
        # a delete of a row that is not stored
        (
            "<order_id>12</order_id><customer_id>2</customer_id><total>3</total>",
            "<order_id>99</order_id><customer_id>2</customer_id><total>3</total>",
            r"diffgr:before row 3, line 14 \(order_id=99\): the DiffGram deletes this row, but no "
            "stored row has its key",
        ),
        # an unchanged row that differs from the stored one
        (
            '<customers diffgr:id="customers1" msdata:rowOrder="0"><id>1</id><name>Ada</name>',
            '<customers diffgr:id="customers1" msdata:rowOrder="0"><id>1</id><name>Eve</name>',
            r"row 1, line 4 \(id=1\): unchanged in the DiffGram, but the stored row differs in "
            "column 'name'",
        ),
        # a modified row without its before image
        (
            '<customers diffgr:id="customers2" msdata:rowOrder="1"><id>2</id></customers>',
            "",
            r"row 2, line 5 \(id=2\): a modified row without a before image",
        ),
        # a before image paired with an inserted row
        (
            '<customers diffgr:id="customers2" msdata:rowOrder="1"><id>2</id>',
            '<customers diffgr:id="customers3" msdata:rowOrder="1"><id>2</id>',
            "the before image belongs to a row marked inserted",
        ),
    ],
)
def test_conflicts_refuse_the_whole_document(
    tmp_path: Path, shop: tuple[Store, Path], old: str, new: str, message: str
) -> None:
    store, xsd = shop
    before = content(store)
    assert old in CHANGES
    path = write(tmp_path, CHANGES.replace(old, new, 1))
    with pytest.raises(XMLImportError, match=message):
        store.import_diffgram(path, xsd)
    assert content(store) == before


def test_a_reference_to_a_missing_parent_is_refused(
    tmp_path: Path, shop: tuple[Store, Path]
) -> None:
    store, xsd = shop
    before = content(store)
    text = CHANGES.replace(
        "<order_id>13</order_id><customer_id>2</customer_id>",
        "<order_id>13</order_id><customer_id>7</customer_id>",
    )
    with pytest.raises(XMLImportError, match="cannot insert a row of 'orders'"):
        store.import_diffgram(write(tmp_path, text), xsd)
    assert content(store) == before


def test_bad_values_name_section_row_line_and_column(
    tmp_path: Path, shop: tuple[Store, Path]
) -> None:
    store, xsd = shop
    before = content(store)
    text = CHANGES.replace("<total>4.5</total>", "<total>lots</total>")
    with pytest.raises(
        XMLImportError,
        match=r"^changes.xml: row 5 \(line 8\), column "
        "'total'",
    ) as info:
        store.import_diffgram(write(tmp_path, text), xsd)
    assert (info.value.row, info.value.column) == (5, "total")
    text = CHANGES.replace("<total>3</total>", "<total>3</total><total>4</total>")
    with pytest.raises(XMLImportError, match=r"^changes.xml: diffgr:before row 3 \(line 14\)"):
        store.import_diffgram(write(tmp_path, text), xsd)
    text = CHANGES.replace('diffgr:hasChanges="inserted"><id>3', 'diffgr:hasChanges="x"><id>3')
    with pytest.raises(XMLImportError, match=r"row 3 \(line 6\): diffgr:hasChanges='x'"):
        store.import_diffgram(write(tmp_path, text), xsd)
    text = CHANGES.replace(
        'msdata:rowOrder="2" diffgr:hasChanges="inserted"',
        'msdata:rowOrder="2" colour="red" diffgr:hasChanges="inserted"',
    )
    with pytest.raises(XMLImportError, match="row 3 .*colour"):
        store.import_diffgram(write(tmp_path, text), xsd)
    assert content(store) == before


# Each message is entityworks' own wording (the parser's part changes between libxml2 versions)
@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            CHANGES.replace(
                '<?xml version="1.0" standalone="yes"?>\n',
                '<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY x "boom">]>\n',
            ),
            "DOCTYPE",
        ),
        (CHANGES.replace("<name>Cy</name>", "<name>&x;</name>"), "not well-formed"),
        (
            CHANGES.replace(
                "<name>Cy</name>",
                '<name><xi:include xmlns:xi="http://www.w3.org/'
                '2001/XInclude" href="/etc/passwd"/></name>',
            ),
            "XInclude is not processed",
        ),
        (CHANGES[: len(CHANGES) // 2], "not well-formed"),
        (
            CHANGES.replace("<name>Cy</name>", "<name>" + "<a>" * 300 + "</a>" * 300 + "</name>"),
            "not well-formed",
        ),
        (CHANGES.replace("</Shop>", "</Shop><diffgr:after/>"), "unexpected element"),
        (CHANGES.replace("</Shop>", "</Shop><Shop/>"), "a second"),
        (
            CHANGES.replace("</customers>\n<orders", "</customers>stray<orders", 1),
            "text 'stray' inside the current rows",
        ),
        (
            CHANGES.replace("<diffgr:before>", "<diffgr:before>stray"),
            "text 'stray' inside the diffgr:before rows",
        ),
    ],
)
def test_hostile_diffgrams_are_refused(
    tmp_path: Path,
    shop: tuple[Store, Path],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    message: str,
) -> None:
    store, xsd = shop
    before = content(store)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(XMLImportError, match=message):
        store.import_diffgram(write(tmp_path, text), xsd)
    assert content(store) == before
    assert list(scratch.iterdir()) == []  # the split sections are gone too


def test_compressed_diffgrams_are_refused(tmp_path: Path, shop: tuple[Store, Path]) -> None:
    store, xsd = shop
    path = tmp_path / "changes.xml"
    path.write_bytes(gzip.compress(CHANGES.encode()))
    with pytest.raises(XMLImportError, match="compressed"):
        store.import_diffgram(path, xsd)


def test_a_diffgram_is_not_a_table_document(tmp_path: Path, shop: tuple[Store, Path]) -> None:
    store, _ = shop
    with pytest.raises(XMLImportError, match="is a .NET DiffGram"):
        read_xml(store.reflect("customers"), write(tmp_path, CHANGES))


def test_missing_tables_are_refused(tmp_path: Path) -> None:
    xsd = tmp_path / "shop.xsd"
    xsd.write_text(shop_xsd(False))
    with Store(tmp_path / "empty.db") as store:
        with pytest.raises(XMLImportError, match="table 'customers' does not exist"):
            store.import_diffgram(write(tmp_path, CHANGES), xsd)
        with pytest.raises(
            XMLImportError, match="rows of table 'customers', which the database does not have"
        ):
            store.import_diffgram(write(tmp_path, CHANGES))
        assert store.table_names() == []


@pytest.mark.parametrize("nested", [False, True])
def test_our_diffgram_export_reads_back_unchanged(
    tmp_path: Path, store: Store, nested: bool
) -> None:
    xsd, xml = tmp_path / "shop.xsd", tmp_path / "shop.xml"
    xsd.write_text(shop_xsd(False))
    xml.write_text(FLAT_XML)
    store.import_dataset(xml, xsd)
    store.import_diffgram(write(tmp_path, CHANGES), xsd)
    ours = tmp_path / "ours.xml"
    counts = store.export_dataset(
        ["customers", "orders"], ours, tmp_path / "ours.xsd", nested=nested, diffgram=True
    )
    assert counts == {"customers": 3, "orders": 3}
    text = ours.read_text()
    assert text.count("<diffgr:diffgram ") == 1 and "diffgr:before" not in text
    assert '<orders diffgr:id="orders3" msdata:rowOrder="2">' in text
    changes = store.import_diffgram(ours, tmp_path / "ours.xsd")
    assert changes == {"customers": Changes(unchanged=3), "orders": Changes(unchanged=3)}
    assert content(store) == AFTER


def test_cli_applies_a_diffgram(tmp_path: Path) -> None:
    db = tmp_path / "shop.db"
    xsd, xml = tmp_path / "shop.xsd", tmp_path / "shop.xml"
    xsd.write_text(shop_xsd(False))
    xml.write_text(FLAT_XML)
    runner = CliRunner()
    assert (
        runner.invoke(cli, ["import-xml", str(xml), "--xsd", str(xsd), "--db", str(db)]).exit_code
        == 0
    )
    path = write(tmp_path, CHANGES)
    result = runner.invoke(cli, ["import-xml", str(path), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert (
        "applied " + str(path) + " (customers: 1 inserted, 1 updated, 0 deleted, "
        "1 unchanged, orders: 2 inserted, 0 updated, 2 deleted, 1 unchanged)"
    ) in result.output
    result = runner.invoke(cli, ["import-xml", str(path), "--db", str(db)])
    assert result.exit_code != 0
    assert "conflict in table 'customers'" in result.stderr
    assert "Traceback" not in result.output + result.stderr
    out = tmp_path / "out.xml"
    result = runner.invoke(
        cli,
        [
            "export-xml",
            "customers",
            "orders",
            str(out),
            "--diffgram",
            "--inline-schema",
            "--db",
            str(db),
        ],
    )
    assert result.exit_code != 0 and not out.exists()
    result = runner.invoke(
        cli, ["export-xml", "customers", "orders", str(out), "--diffgram", "--db", str(db)]
    )
    assert result.exit_code == 0 and out.read_text().startswith("<?xml")
    with Store(db) as store:
        assert content(store) == AFTER
    internal = write(
        tmp_path,
        CHANGES.replace("<customers ", "<alembic_version ").replace(
            "</customers>", "</alembic_version>"
        ),
        "internal.xml",
    )
    result = runner.invoke(cli, ["import-xml", str(internal), "--db", str(db)])
    assert result.exit_code != 0 and "'alembic_version' is an internal table" in result.stderr


def test_row_errors_are_annotations_and_not_kept(tmp_path: Path, shop: tuple[Store, Path]) -> None:
    store, xsd = shop
    text = CHANGES.replace(
        'diffgr:hasChanges="modified"><id>2</id>',
        'diffgr:hasChanges="modified" diffgr:hasErrors="true"><id>2</id>',
    ).replace(
        "</diffgr:before>",
        "</diffgr:before>\n<diffgr:errors><customers diffgr:id="
        '"customers2" diffgr:Error="checked by hand"/></diffgr:errors>',
    )
    assert "diffgr:errors" in text and "hasErrors" in text
    store.import_diffgram(write(tmp_path, text), xsd)
    assert content(store) == AFTER


def test_the_rows_checked_stay_locked_until_the_write(
    tmp_path: Path, shop: tuple[Store, Path]
) -> None:
    """PostgreSQL and MariaDB: the import locks the stored rows it compares (FOR UPDATE),
    so a writer that holds one of them makes it wait, and what that writer commits is what
    the import then checks: here an unchanged row changed meanwhile, a conflict."""
    import threading
    import time

    import sqlalchemy as sa

    store, xsd = shop
    if store.dialect.name == "sqlite":
        pytest.skip("SQLite locks the whole file for the write")
    path = write(tmp_path, CHANGES)
    other = sa.create_engine(store.url)
    outcome: list[BaseException | None] = []
    try:
        with other.connect() as conn:
            table = sa.Table("customers", sa.MetaData(), autoload_with=conn)
            conn.execute(table.update().where(table.c.id == 1).values(name="Eve"))

            def apply() -> None:
                try:
                    store.import_diffgram(path, xsd)
                    outcome.append(None)
                except BaseException as exc:  # noqa: BLE001 - reported below
                    outcome.append(exc)

            worker = threading.Thread(target=apply)
            worker.start()
            time.sleep(1.0)  # the import reaches customer 1 and waits for its lock
            conn.commit()
        worker.join(60)
    finally:
        other.dispose()
    assert len(outcome) == 1 and isinstance(outcome[0], XMLImportError), outcome
    assert "unchanged in the DiffGram, but the stored row differs in column 'name'" in str(
        outcome[0]
    )


def test_deleting_everything_and_an_empty_diffgram(
    tmp_path: Path, shop: tuple[Store, Path]
) -> None:
    store, xsd = shop
    empty = write(tmp_path, HEAD + "</diffgr:diffgram>\n", "empty.xml")
    assert store.import_diffgram(empty) == {} and store.import_diffgram(empty, xsd) == {}
    deletes = write(
        tmp_path,
        HEAD
        + """<Shop/>
<diffgr:before>
<orders diffgr:id="orders3" msdata:rowOrder="2"><order_id>12</order_id><customer_id>2</customer_id><total>3</total></orders>
<customers diffgr:id="customers2" msdata:rowOrder="1"><id>2</id></customers>
</diffgr:before>
</diffgr:diffgram>
""",
        "deletes.xml",
    )
    assert store.import_diffgram(deletes) == {
        "customers": Changes(deleted=1),
        "orders": Changes(deleted=1),
    }
    assert content(store) == {
        "customers": [(1, "Ada")],
        "orders": [(10, 1, decimal.Decimal("9.50")), (11, 1, None)],
    }


@dataclass
class Measure:
    id: int
    f: float
    d: decimal.Decimal
    tags: list[float]


def test_before_images_compare_every_type_exactly(tmp_path: Path, store: Store) -> None:
    """Issue 29 item 12: one rule for every column of a before image or an unchanged row --
    the stored value exactly, as the Store keeps it: -0.0 is not 0 (floats to the bit, inside
    a JSON list too), 1.50 is not 1.5 (Decimals with their exponent). A conflict names the
    column and changes nothing; the exact image applies."""
    cls = table("measures")(Measure)
    store.create(cls)
    # PostgreSQL's jsonb holds no -0.0 (refused there: test_jsonb)
    in_json = store.engine.dialect.name != "postgresql"
    store.insert_many(
        [
            cls(1, -0.0, decimal.Decimal("1.50"), [-0.0 if in_json else 0.5, 1.0]),
            cls(2, 0.0, decimal.Decimal("2"), []),
        ]
    )
    xsd = tmp_path / "m.xsd"
    store.export_dataset([cls], tmp_path / "unchanged.xml", xsd, diffgram=True)
    text = (tmp_path / "unchanged.xml").read_text()
    assert "<f>-0.0</f>" in text and "<d>1.50</d>" in text  # the oracle holds the exact values
    assert store.import_diffgram(tmp_path / "unchanged.xml", xsd)["measures"] == Changes(
        unchanged=2
    )
    stored = sorted(store.select(cls), key=lambda m: m.id)

    row = re.search(r'<measures diffgr:id="measures1".*?</measures>', text)
    assert row is not None
    image = row.group(0)
    modified = image.replace(
        'msdata:rowOrder="0"', 'msdata:rowOrder="0" diffgr:hasChanges="modified"'
    ).replace("<d>1.50</d>", "<d>7.25</d>")

    def diffgram(before: str) -> Path:
        path = tmp_path / "changes.xml"
        path.write_text(
            text.replace(image, modified).replace(
                "</diffgr:diffgram>", f"<diffgr:before>{before}</diffgr:before></diffgr:diffgram>"
            )
        )
        return path

    for old, new, column in (
        ("<f>-0.0</f>", "<f>0</f>", "f"),
        ("<d>1.50</d>", "<d>1.5</d>", "d"),
        ("<d>1.50</d>", "<d>1.500</d>", "d"),
    ):
        with pytest.raises(XMLImportError, match=f"in column '{column}'") as conflict:
            store.import_diffgram(diffgram(image.replace(old, new)), xsd)
        assert conflict.value.column == column
        assert sorted(store.select(cls), key=lambda m: m.id) == stored
    for old, new, column in (("<f>-0.0</f>", "<f>0</f>", "f"), ("<d>1.50</d>", "<d>1.5</d>", "d")):
        with pytest.raises(XMLImportError, match=f"in column '{column}'"):  # unchanged rows
            store.import_diffgram(write(tmp_path, text.replace(old, new), "u.xml"), xsd)
    got = re.search(r"<tags>(.*?)</tags>", image)
    assert got is not None and ("-0.0" if in_json else "0.5") in got.group(1)
    with pytest.raises(XMLImportError, match="in column 'tags'"):  # -0.0 inside a JSON list
        old_tags = "-0.0" if in_json else "0.5"
        new_tags = "0.0" if in_json else "0.50000000000000011"  # the next float
        store.import_diffgram(
            diffgram(
                image.replace(
                    got.group(0), "<tags>" + got.group(1).replace(old_tags, new_tags) + "</tags>"
                )
            ),
            xsd,
        )
    assert sorted(store.select(cls), key=lambda m: m.id) == stored

    assert store.import_diffgram(diffgram(image), xsd)["measures"] == Changes(
        updated=1, unchanged=1
    )
    assert [(m.id, m.d) for m in store.select(cls, order_by="id")] == [
        (1, decimal.Decimal("7.25")),
        (2, decimal.Decimal("2")),
    ]
    first = next(iter(store.select(cls, where={"id": 1})))
    assert math.copysign(1.0, first.f) == -1.0
