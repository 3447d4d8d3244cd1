"""Every registry type, keys given, through the doors the Python API's own tests do not use.

``tests/entityworks/test_promise.py`` checks rows of every registry type (``AllTypes``,
companions and a child table included) through the Store's methods. Here the same rows, once
stored through the Python API, are read back through the command line's ``export-xml`` and
``parquet`` (and the library's readers of those files) and the CLI's ``query``, and every
plain column is filtered the way Datasette and a web form filter it: ``column = ?`` with the
value bound as text. Each door sees the rows the API sees, or refuses in one clear line.
"""

from __future__ import annotations

import json
import math
import sqlite3
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from entityworks import Store, read_parquet, read_xml
from entityworks.cli import cli
from tests.entityworks.strategies import AllTypes, assert_same_rows, keeps_dict_order, rows
from tests.entityworks.test_promise import storable, xml_writable

EXAMPLES = {"sqlite": 15, "postgresql": 8, "mariadb": 8}
SETTINGS: dict[str, Any] = dict(
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _one_clear_line(code: int, err: str) -> None:
    assert code != 0 and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_every_type_through_the_cli_doors(
    backend: str, databases: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    url = databases(backend, "every_type")
    with Store(url) as store:
        store.create(AllTypes)

    ordered = keeps_dict_order(backend)  # PostgreSQL's jsonb: equal dicts, its key order

    @settings(max_examples=EXAMPLES[backend], **SETTINGS)
    @given(data=rows(xml=True))
    def check(data: list[AllTypes]) -> None:
        work = tmp_path_factory.mktemp("doors")
        with Store(url) as store:
            store.delete(AllTypes, where={})
            if not storable(backend, data):
                return
            store.insert_many(data)
            stored = list(store.select(AllTypes, order_by="id"))
        assert_same_rows(data, stored, dict_order=ordered)

        doc = work / "all.xml"
        code, _, err = _cli("export-xml", "all_types", str(doc), "--db", url)
        if xml_writable(data):
            assert code == 0, err
            from_xml = read_xml(AllTypes, doc, doc.with_suffix(".xsd"))
            assert_same_rows(data, from_xml, dict_order=ordered)
        else:
            _one_clear_line(code, err)
            assert not doc.exists()

        parquet = work / "all.parquet"
        code, _, err = _cli("parquet", "all_types", str(parquet), "--db", url)
        assert code == 0, err
        assert_same_rows(data, read_parquet(AllTypes, parquet), dict_order=ordered)

        code, out, err = _cli("query", "all_types", "--format", "jsonl", "--db", url)
        assert code == 0, err
        seen = [json.loads(line) for line in out.splitlines()]
        assert [r["id"] for r in seen] == [r.id for r in data]
        assert [r["i"] for r in seen] == [r.i for r in data]
        assert [r["s"] for r in seen] == [r.s for r in data]

    check()


#: The plain columns of AllTypes whose value another tool compares directly.
PLAIN = ("i", "oi", "f", "of", "s", "os")


@given(data=rows(xml=False))
@settings(max_examples=25, **SETTINGS)
def test_sqlite_text_bound_equality_finds_every_plain_value(
    tmp_path_factory: Any, data: list[AllTypes]
) -> None:
    """Datasette binds ``?column=value`` as text: on a table entityworks wrote, that finds
    the rows holding the value, as ``column = value`` typed in the sqlite3 shell does."""
    if not data or not storable("sqlite", data):
        return
    path = tmp_path_factory.mktemp("affinity") / "t.db"
    with Store(path) as store:
        store.create(AllTypes)
        store.insert_many(data)
    with sqlite3.connect(path) as conn:
        for name in PLAIN:
            for row in data:
                value = getattr(row, name)
                if value is None or (isinstance(value, float) and not math.isfinite(value)):
                    continue
                text = repr(value) if isinstance(value, float) else str(value)
                if isinstance(value, float):
                    # SQLite's own text-to-REAL conversion is not correctly rounded for
                    # every double (3.40 reads '4.9818369065191467e-293' one unit off): the
                    # text then finds the rows holding what SQLite reads it as, as in its shell
                    (value,) = conn.execute("SELECT CAST(? AS REAL)", (text,)).fetchone()
                want = sorted(r.id for r in data if _equal(getattr(r, name), value))
                found = sorted(
                    k
                    for (k,) in conn.execute(
                        f'SELECT id FROM all_types WHERE "{name}" = ?', (text,)
                    )
                )
                assert found == want, (name, value, text)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b
    return bool(type(a) is type(b) and a == b)
