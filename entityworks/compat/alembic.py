"""What entityworks needs from alembic that alembic has no public API for (see :mod:`entityworks.compat`)."""

from __future__ import annotations

__all__: list[str] = []
