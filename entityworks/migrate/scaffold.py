"""``entityworks migrations init``: an Alembic environment for a user's own dataclasses.

It writes ``alembic.ini``, ``env.py``, ``script.py.mako`` and an empty ``versions/`` folder.
The ``env.py`` compares revisions with :func:`entityworks.migrate.metadata_for` built for the
database being migrated, through :func:`entityworks.migrate.alembic_options` (only the
models' tables, types and literal defaults compared, SQLite in batch mode, the
``alembic_version`` table), on the connection entityworks migrates with (SQLite foreign keys
are checked before each commit). After that, plain Alembic does the rest::

    alembic -c migrations/alembic.ini revision --autogenerate -m "authors and books"
    alembic -c migrations/alembic.ini upgrade head
"""

from __future__ import annotations

import importlib
import keyword
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..errors import EntityworksError
from ..sql.engine import normalise_url
from .metadata import table_names
from .versions import VERSION_TABLE

USER_VERSION_TABLE = "alembic_version"


def load_model(spec: str) -> type:
    """The class named by ``MODULE:CLASS`` (modules beside the working directory import as
    with ``python -m``); EntityworksError when it cannot be found or is no table."""
    from ..model.schema import table_schema

    module_name, _, attr = spec.partition(":")
    dotted = module_name.split(".")
    if not attr or not all(p.isidentifier() and not keyword.iskeyword(p) for p in [*dotted, attr]):
        raise EntityworksError(f"--model {spec!r}: expected MODULE:CLASS, e.g. library:Author")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise EntityworksError(f"--model {spec!r}: cannot import {module_name!r}: {exc}") from None
    cls = getattr(module, attr, None)
    if not isinstance(cls, type):
        raise EntityworksError(f"--model {spec!r}: {module_name!r} has no class {attr!r}")
    table_schema(cls)  # a SchemaError names the class and field
    return cls


def init_migrations(
    directory: str | os.PathLike[str], models: Sequence[str], *, url: str | None = None
) -> list[Path]:
    """Write an Alembic environment for the dataclasses ``models`` (``MODULE:CLASS``
    each) into ``directory``, which must be new or empty; returns the files written.

    ``url`` becomes ``sqlalchemy.url`` in ``alembic.ini`` (one with a password is refused:
    pass it at run time with ``-x db=URL`` or ``ENTITYWORKS_DB``). Nothing is written
    unless every model imports and is a valid table.
    """
    if not models:
        raise EntityworksError("give at least one --model MODULE:CLASS")
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise EntityworksError(
            f"{target} already exists and is not an empty folder; choose a new one"
        )
    classes = [load_model(spec) for spec in models]
    clash = table_names(classes) & {USER_VERSION_TABLE, VERSION_TABLE}
    if clash:
        raise EntityworksError(
            f"a model's table is named {sorted(clash)[0]!r}, which "
            "Alembic's version table needs; rename it with @table(...)"
        )
    if url is not None:
        parsed = normalise_url(url)  # a plain path names an SQLite file
        if parsed.password:
            raise EntityworksError(
                "a URL with a password is not written to alembic.ini; "
                "pass it when you run Alembic (-x db=URL or "
                "ENTITYWORKS_DB)"
            )
        url = parsed.render_as_string(hide_password=False)
    files = {
        "alembic.ini": _alembic_ini(target, url),
        "env.py": _env_py(models),
        "script.py.mako": SCRIPT_TEMPLATE,
    }
    parent = target.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=parent))
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        (staging / "versions").mkdir()
        if target.exists():
            target.rmdir()  # empty, checked above
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [target / name for name in files] + [target / "versions"]


def _alembic_ini(target: Path, url: str | None) -> str:
    root = os.path.relpath(Path.cwd().resolve(), target.resolve().parent / target.name)
    here = "%(here)s" if root == "." else f"%(here)s{os.sep}{root}"
    return ALEMBIC_INI.format(dir=target.as_posix(), root=here, url=url or "")


def _env_py(models: Sequence[str]) -> str:
    by_module: dict[str, list[str]] = {}
    for spec in models:
        module, _, attr = spec.partition(":")
        names = by_module.setdefault(module, [])
        if attr not in names:
            names.append(attr)
    imports = "\n".join(
        f"from {module} import {', '.join(names)}" for module, names in sorted(by_module.items())
    )
    listed = ", ".join(dict.fromkeys(spec.partition(":")[2] for spec in models))
    return ENV_TEMPLATE.format(
        imports=imports, models=listed, specs=", ".join(dict.fromkeys(models))
    )


ALEMBIC_INI = """\
# Alembic for your dataclasses (written by 'entityworks migrations init'; the models are
# listed in env.py). From the folder you ran 'init' in:
#   alembic -c {dir}/alembic.ini revision --autogenerate -m "what changed"
#   alembic -c {dir}/alembic.ini upgrade head
#   alembic -c {dir}/alembic.ini check
# The database, first found: -x db=URL (or an SQLite path), the ENTITYWORKS_DB environment
# variable, sqlalchemy.url below.
[alembic]
script_location = %(here)s
prepend_sys_path = {root}
path_separator = os
file_template = %%(rev)s_%%(slug)s
sqlalchemy.url = {url}

[loggers]
keys = root,sqlalchemy,alembic,alembic_plugins

[handlers]
keys = console

[formatters]
keys = generic

[logger_root]
level = WARNING
handlers = console

[logger_sqlalchemy]
level = WARNING
handlers =
qualname = sqlalchemy.engine

[logger_alembic]
level = INFO
handlers =
qualname = alembic

[logger_alembic_plugins]
level = WARNING
handlers =
qualname = alembic.runtime.plugins

[handler_console]
class = StreamHandler
args = (sys.stderr,)
level = NOTSET
formatter = generic

[formatter_generic]
format = %(levelname)-5.5s [%(name)s] %(message)s
"""

ENV_TEMPLATE = '''\
"""Alembic environment for {specs}
(written by 'entityworks migrations init').

Revisions are compared with the tables entityworks builds for MODELS on the database being
migrated (entityworks.migrate.metadata_for): add a dataclass here when it becomes a table.
Only their tables are compared, other tables in the database are left alone, and literal
field defaults are DDL DEFAULTs, so a new NOT NULL field with a default upgrades a populated
table. The version table is alembic_version (an entityworks catalog keeps its own).

The database, first found: -x db=URL (or an SQLite path), the ENTITYWORKS_DB environment
variable, sqlalchemy.url in alembic.ini.
"""

import os
from logging.config import fileConfig

from alembic import context

from entityworks import Store
from entityworks.migrate import alembic_options, migration_connection
{imports}

MODELS = [{models}]

config = context.config
if config.config_file_name is not None:
    fileConfig(config.config_file_name)


def database() -> str:
    given = (context.get_x_argument(as_dictionary=True).get("db")
             or os.environ.get("ENTITYWORKS_DB") or config.get_main_option("sqlalchemy.url"))
    if not given:
        raise SystemExit("error: no database: pass -x db=URL, set ENTITYWORKS_DB or set "
                         "sqlalchemy.url in alembic.ini")
    return given


def run_offline() -> None:
    """Write the SQL instead of running it (alembic upgrade --sql)."""
    store = Store(database())
    url = store.url
    store.close()
    context.configure(url=url, literal_binds=True,
                      **alembic_options(MODELS, url.get_backend_name()))
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    """Migrate a live database on entityworks' own connection (SQLite foreign keys are
    checked before the commit; MariaDB sessions are strict)."""
    store = Store(database())
    try:
        with migration_connection(store) as connection:
            context.configure(connection=connection, **alembic_options(MODELS, connection))
            with context.begin_transaction():
                context.run_migrations()
    finally:
        store.close()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
'''

SCRIPT_TEMPLATE = '''\
"""${message}

Revision ID: ${up_revision}
Revises: ${down_revision | comma,n}
Create Date: ${create_date}
"""

import sqlalchemy as sa
from alembic import op
${imports if imports else ""}
revision = ${repr(up_revision)}
down_revision = ${repr(down_revision)}
branch_labels = ${repr(branch_labels)}
depends_on = ${repr(depends_on)}


def upgrade() -> None:
    ${upgrades if upgrades else "pass"}


def downgrade() -> None:
    ${downgrades if downgrades else "pass"}
'''

__all__ = ["USER_VERSION_TABLE", "init_migrations", "load_model"]
