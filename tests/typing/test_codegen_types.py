"""``entityworks codegen`` output is a module a user keeps in a strictly checked project:
mypy --strict and pyright (strict) accept it for every field order the runtime accepts
(a key or a ``column(...)`` before fields without a default, optional and required fields
in any order), for child tables, every registry type and names that shadow the imports; and
it imports and round-trips a document (issue 29 item 14). The README's Python quick start
passes both checkers too."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import importlib.util
import re
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner

from entityworks import AwareDatetime, Store, column, primary_key, table
from entityworks.cli import cli
from entityworks.xml.table import read_xml, write_xml
from entityworks.xml.xsd import write_xsd
from tests.entityworks.sql.test_logical import DOTNET_XML, DOTNET_XSD
from tests.entityworks.xml.test_diffgram import FLAT_XML, shop_xsd
from tests.typing.test_type_checks import _errors, _mypy, _pyright


@dataclass
class Line:
    sku: str = column(max_length=12)  # a column(...) first, then a required field
    count: int = 0
    note: str | None = None


@dataclass
class Tag:
    label: str | None  # optional first
    weight: float


@table("every type")
@dataclass
class EveryType:
    id: int = primary_key()  # the key, then required fields after it
    flag: bool = False
    n: int = 0
    x: float = 0.0
    s: str = column(max_length=40, default="")
    raw: bytes = b""
    price: decimal.Decimal = decimal.Decimal(0)
    at: dt.datetime = dt.datetime(2000, 1, 1)
    aware: AwareDatetime = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    day: dt.date = dt.date(2000, 1, 1)
    clock: dt.time = dt.time(0)
    took: dt.timedelta = dt.timedelta(0)
    uid: uuid.UUID = uuid.UUID(int=0)
    maybe_n: int | None = None
    maybe_at: AwareDatetime | None = None
    lines: list[Line] = field(default_factory=list)
    tags: list[Tag] = field(default_factory=list)


@dataclass
class Clash:
    """Fields and a class named like the generated module's imports."""

    column: str = primary_key(max_length=10)
    field: int | None = None
    entity: str = ""
    dt: dt.date | None = None
    list: list[Tag] = dataclasses.field(default_factory=lambda: [])


def rows() -> dict[type, list[Any]]:
    aware = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    return {
        EveryType: [
            EveryType(
                1,
                True,
                -(2**63),
                -0.0,
                "café\tü",
                b"\x00\xff",
                decimal.Decimal("-1.50"),
                dt.datetime(1999, 12, 31, 23, 59, 59, 999999),
                aware,
                dt.date(1, 1, 1),
                dt.time(23, 59, 59, 1),
                dt.timedelta(days=-1, seconds=1),
                uuid.UUID(int=2**128 - 1),
                None,
                aware,
                [Line("a1", 2, None), Line("b2")],
                [Tag(None, 1.5), Tag("t", -2.0)],
            ),
            EveryType(2, False, maybe_n=7),
        ],
        Clash: [Clash("k", 1, "e", dt.date(2020, 2, 29), [Tag("x", 0.5)]), Clash("l")],
    }


def generate(xsd: Path, out: Path) -> str:
    result = CliRunner().invoke(cli, ["codegen", str(xsd)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    out.write_text("# pyright: strict\n" + result.stdout, encoding="utf-8")
    return result.stdout


def load(path: Path) -> ModuleType:
    name = f"generated_typing_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve annotations through it
    spec.loader.exec_module(module)
    return module


def main_class(module: ModuleType, source: str) -> Any:
    """The last class of the generated source: the table (its child classes come first)."""
    last = [
        line.split()[1].rstrip(":") for line in source.splitlines() if line.startswith("class ")
    ][-1]
    return getattr(module, last)


def plain(value: Any) -> Any:
    """A row as nested tuples (the generated classes are other classes than ours)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return tuple(plain(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Each XSD, the source codegen wrote for it and its module, in one folder."""
    folder = tmp_path_factory.mktemp("codegen")
    made: dict[str, Any] = {}
    for cls, instances in rows().items():
        stem = cls.__name__.lower()
        xsd, xml = folder / f"{stem}.xsd", folder / f"{stem}.xml"
        write_xsd(cls, xsd)
        write_xml(cls, instances, xml)
        made[stem] = (xsd, xml, generate(xsd, folder / f"{stem}_model.py"), instances)
    for stem, text in (
        ("dotnet", DOTNET_XSD),
        ("shop_flat", shop_xsd(False)),
        ("shop_nested", shop_xsd(True)),
    ):
        xsd = folder / f"{stem}.xsd"
        xsd.write_text(text, encoding="utf-8")
        made[stem] = (xsd, None, generate(xsd, folder / f"{stem}_model.py"), None)
    return folder, made


def test_the_sources_cover_what_broke(generated: tuple[Path, dict[str, Any]]) -> None:
    """A field without a default after a column(...) and after a primary key, children, and
    imports renamed around fields that shadow them: the cases the checkers must take."""
    _, made = generated
    every = made["everytype"][2]
    assert "@entity('every type')" in every and "id: int = column(primary_key=True)" in every
    assert "s: str = column(max_length=40)\n    raw: bytes\n" in every
    assert "sku: str = column(max_length=12)\n    count: int\n" in every
    assert "lines: list[EveryTypeLines] = field(default_factory=list[EveryTypeLines])" in every
    assert "import column as _column" in made["clash"][2]


def test_mypy_strict_accepts_generated_code(generated: tuple[Path, dict[str, Any]]) -> None:
    folder, _ = generated
    done = _mypy(folder)
    assert done.returncode == 0, done.stdout + done.stderr


def test_pyright_strict_accepts_generated_code(generated: tuple[Path, dict[str, Any]]) -> None:
    folder, _ = generated
    assert _errors(_pyright(folder)) == []


@pytest.mark.parametrize("stem", ["everytype", "clash"])
def test_generated_classes_round_trip_a_document(
    generated: tuple[Path, dict[str, Any]], stem: str
) -> None:
    folder, made = generated
    xsd, xml, source, instances = made[stem]
    cls = main_class(load(folder / f"{stem}_model.py"), source)
    back = read_xml(cls, xml, xsd)
    assert [plain(r) for r in back] == [plain(r) for r in instances]
    again = folder / f"{stem}_again.xml"
    write_xml(cls, back, again)
    assert again.read_bytes() == xml.read_bytes()


def test_generated_dataset_classes_read_what_dotnet_wrote(
    generated: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    folder, made = generated
    module = load(folder / "dotnet_model.py")
    xml = tmp_path / "shop.xml"
    xml.write_text(DOTNET_XML, encoding="utf-8")
    items = read_xml(module.Item, xml, made["dotnet"][0])
    assert [i.id for i in items] == [1, 2]
    assert load(folder / "shop_nested_model.py").Orders is not None
    shop = load(folder / "shop_flat_model.py")
    flat = tmp_path / "flat.xml"
    flat.write_text(FLAT_XML, encoding="utf-8")
    with Store(tmp_path / "shop.db") as store:
        store.import_dataset(flat, made["shop_flat"][0])
        customers = store.select(shop.Customers, order_by="id")
        orders = store.select(shop.Orders, order_by="order_id")
    assert customers and orders
    assert {o.customer_id for o in orders} <= {c.id for c in customers}


def readme_module(folder: Path) -> Path:
    """The README's Python quick start as a module (its python blocks, in order)."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert blocks and any("store.get(" in block for block in blocks)
    path = folder / "readme_quickstart.py"
    path.write_text("# pyright: strict\n" + "\n".join(blocks), encoding="utf-8")
    return path


def test_the_readme_quick_start_passes_mypy_strict(tmp_path: Path) -> None:
    done = _mypy(readme_module(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_readme_quick_start_passes_pyright_strict(tmp_path: Path) -> None:
    assert _errors(_pyright(readme_module(tmp_path))) == []
