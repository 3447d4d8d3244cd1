"""What entityworks needs from alembic that alembic has no public API for (see
:mod:`entityworks.compat`).

Nothing so far: a column with CHECKs of its own is rendered through Alembic's public
``render_python_code`` (:mod:`entityworks.migrate.hooks`), and the catalog's revisions create
tables through ``MigrationContext.impl.create_table``.
"""

from __future__ import annotations

__all__: list[str] = []
