"""What entityworks needs from sqlalchemy that sqlalchemy has no public API for (see :mod:`entityworks.compat`)."""

from __future__ import annotations

__all__: list[str] = []
