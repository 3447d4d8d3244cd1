"""What the backends' bind processors share: whether SQLAlchemy's processor of a column type
does anything a driver needs."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa


def plain_binary(impl: sa.types.TypeEngine[Any]) -> bool:
    """``impl`` is SQLAlchemy's LargeBinary, or a decorator of it that binds its values as
    they are (``sqltypes.Blob``): its bind processor only wraps each value in the driver's
    ``Binary``, which psycopg and PyMySQL do not need for ``bytes`` (a Python call per value
    on the bulk paths)."""
    base = getattr(impl, "impl_instance", impl)
    if not isinstance(base, sa.LargeBinary):
        return False
    return base is impl or (
        isinstance(impl, sa.types.TypeDecorator)
        and type(impl).process_bind_param is sa.types.TypeDecorator.process_bind_param
        and type(impl).bind_processor is sa.types.TypeDecorator.bind_processor
    )


__all__ = ["plain_binary"]
