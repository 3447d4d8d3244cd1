"""What entityworks needs from psycopg that psycopg has no public API for (see :mod:`entityworks.compat`)."""

from __future__ import annotations

__all__: list[str] = []
