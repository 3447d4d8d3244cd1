"""The type layer knows no SQL: companions are asked with a storage's capabilities (a
``Target``), the SQL types of the built-in entries are names the SQL layer resolves, and
none of it imports SQLAlchemy or ``entityworks.sql``."""

from __future__ import annotations

import datetime as dt
import decimal
import subprocess
import sys
import textwrap

import pytest

from entityworks.registry import (
    ARROW,
    AwareDatetime,
    Companion,
    TypeInfo,
    TypeRegistry,
    registry,
)
from entityworks.types.registry import Target, as_target, every_target


def _suffixes(tp: object, target: str) -> tuple[str, ...]:
    return tuple(part.suffix for part in registry.lookup(tp).companions_for(target))


def test_companions_follow_what_a_target_keeps_not_its_name() -> None:
    everything = Target("anything")
    assert _suffixes(decimal.Decimal, everything) == ()
    assert _suffixes(float, everything) == ()
    assert _suffixes(AwareDatetime, everything) == ("offset",)
    padded = Target("anything", keeps_decimal_scale=False)
    assert _suffixes(decimal.Decimal, padded) == ("scale",)
    keyed = Target("anything", keeps_decimal_scale=False, decimal_as_key=True)
    assert _suffixes(decimal.Decimal, keyed) == ("text",)
    assert _suffixes(float, Target("x", keeps_negative_zero=False)) == ("negzero",)


def test_arrow_is_a_target_and_still_its_name() -> None:
    assert ARROW == "arrow" and isinstance(ARROW, str) and isinstance(ARROW, Target)
    assert as_target("arrow") is ARROW
    assert _suffixes(decimal.Decimal, ARROW) == ("scale",)
    assert _suffixes(float, ARROW) == ()


def test_a_target_pickles_with_its_capabilities() -> None:
    import pickle

    target = Target("x", keeps_decimal_scale=False, keeps_negative_zero=False)
    again = pickle.loads(pickle.dumps(target))
    assert again == "x" and again.capabilities() == target.capabilities()
    assert "keeps_negative_zero=False" in repr(target)


def test_every_target_covers_every_combination_of_capabilities() -> None:
    seen = {t.capabilities() for t in every_target()}
    assert len(seen) == 8


def test_each_backend_tells_the_type_layer_what_it_keeps() -> None:
    from entityworks.sql.backends import for_name, names_where
    from entityworks.sql.sqltypes import target_of

    for name in names_where(lambda _backend: True):
        backend, target = for_name(name), target_of(name)
        assert target == name
        assert target.keeps_decimal_scale == backend.keeps_decimal_scale
        assert target.keeps_negative_zero == backend.keeps_negative_zero
        assert target.decimal_as_key == backend.text_values
        # a name still stands for its backend's target
        assert registry.companion_types(name) == registry.companion_types(target)
        assert as_target(name).capabilities() == target.capabilities()


def test_a_companions_function_written_for_names_still_works() -> None:
    """``companions`` of a user entry written when targets were dialect names."""
    from entityworks.sql.sqltypes import target_of

    stamp = Companion("zone", lambda v: 0, lambda main, part: main, "the zone")
    info = TypeInfo(
        "Stamp",
        dt.datetime,
        lambda: None,
        lambda: None,
        "xs:dateTime",
        str,
        dt.datetime.fromisoformat,
        companions=lambda target: (stamp,) if target == "mysql" else (),
    )
    assert info.companions_for(target_of("mysql")) == (stamp,)
    assert info.companions_for("mysql") == (stamp,)
    assert info.companions_for(target_of("postgresql")) == ()
    own = TypeRegistry()
    own.register(info)
    assert own.companion_types("mysql") == {"zone": dt.datetime}


def test_the_type_layer_and_the_model_import_no_sql() -> None:
    """Building the registry, looking types up, asking companions and building a schema
    (with its companion-name check) import neither SQLAlchemy nor ``entityworks.sql``; a
    storage type name is made only by the SQL layer."""
    code = textwrap.dedent(
        """
        import decimal, sys
        from dataclasses import dataclass
        from entityworks.registry import AwareDatetime, registry
        from entityworks.model.schema import table_schema
        from entityworks.types import storage
        from entityworks.types.registry import Target
        from entityworks.errors import InvalidNameError

        assert registry.lookup(decimal.Decimal).companions_for(
            Target("t", keeps_decimal_scale=False))[0].suffix == "scale"

        @dataclass
        class Clash:
            id: int
            at: AwareDatetime
            at__offset: int

        try:
            table_schema(Clash)
        except InvalidNameError:
            pass
        else:
            raise AssertionError("the companion's name was not refused")
        try:
            storage.named("text")()
        except LookupError:
            pass
        else:
            raise AssertionError("a storage type was made without the SQL layer")
        print(sorted(m for m in sys.modules
                     if m.startswith(("sqlalchemy", "entityworks.sql"))))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # the SQL layer's codec makers (its register_codecs plugin) say what the types become in
    # SQL; they import no SQLAlchemy and no other SQL module
    assert done.stdout.strip() == "['entityworks.sql', 'entityworks.sql.codecs']"


@pytest.mark.parametrize("name", ["text", "big_integer", "ExactDecimal", "AwareDateTime"])
def test_the_sql_layer_makes_each_storage_type(name: str) -> None:
    import sqlalchemy as sa

    from entityworks.sql import sqltypes
    from entityworks.types import storage

    made = storage.named(name)()
    assert isinstance(made, sa.types.TypeEngine)
    assert type(made) is type(getattr(sqltypes, name)())
