"""How a command ends: bad input as one ``error: ...`` line on stderr and status 2, a bug as
one line and status 1, Ctrl-C as ``error: aborted`` and status 1; never a traceback (unless
``ENTITYWORKS_TRACEBACK`` is set), never a password.

Kept apart from the commands so that every command module, and every group (the root one in
:mod:`.group`, ``sudoku``, ``schema``, ``migrations``), ends the same way through :class:`Group`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click

from ..errors import EntityworksError
from ..sql.backends import driver_errors, driver_message
from ..sql.urls import redact


class Aborted(BaseException):
    """Ctrl-C inside a command, carried past click's own handler to ``main``."""


def _sa_error() -> tuple[type[BaseException], ...]:
    sa_exc = sys.modules.get("sqlalchemy.exc")
    return (sa_exc.SQLAlchemyError,) if sa_exc is not None else ()


def is_user_error(exc: BaseException) -> bool:
    """True for what bad input causes (exit 2); anything else is a bug (exit 1)."""
    return isinstance(
        exc,
        (
            click.ClickException,
            EntityworksError,
            ValueError,
            OSError,
            RecursionError,
            MemoryError,
            *_sa_error(),
            *driver_errors(),  # the drivers' own, once a backend has run
        ),
    )


def error_message(exc: BaseException) -> str:
    """The one-line text shown for a user error, passwords removed."""
    if isinstance(exc, click.ClickException):
        text = exc.format_message()
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            text = f"{exc.ctx.command_path}: {text}"
    elif _sa_error() and isinstance(exc, _sa_error()):
        orig = getattr(exc, "orig", None)
        # a driver's error as a sentence: PyMySQL's (1045, "Access denied ...") becomes
        # "Access denied ... (MariaDB error 1045)" (Backend.driver_message)
        text = driver_message(orig) if orig is not None else str(exc)
        text = text.split("\n[SQL:")[0]
        text = text.split("\n(Background on this error")[0]
    elif isinstance(exc, RecursionError):
        text = "input nested too deeply to process"
    elif isinstance(exc, MemoryError):
        text = f"not enough memory for this input{': ' + str(exc) if str(exc) else ''}"
    else:
        text = str(exc)
    text = " ".join(text.split()) or type(exc).__name__
    return redact(text)


def fail(exc: BaseException) -> NoReturn:
    """Print ``error: <one line>`` on stderr and exit with status 2 (1 for a bug)."""
    if is_user_error(exc):
        click.echo(f"error: {error_message(exc)}", err=True)
        sys.exit(2)
    text = redact(" ".join(str(exc).split()))
    click.echo(
        f"error: unexpected {type(exc).__name__}{': ' + text if text else ''} "
        f"(a bug: please report it; ENTITYWORKS_TRACEBACK=1 shows the traceback)",
        err=True,
    )
    sys.exit(1)


def aborted() -> NoReturn:
    """Ctrl-C: one line and status 1; further Ctrl-C while the process ends are ignored, and
    so are the errors of finalizers of objects the interrupt left half made (a library's
    ``__del__`` would print "Exception ignored in ..." and its traceback as the interpreter
    ends: llvmlite's, when the interrupt lands while numba compiles), unless
    ``ENTITYWORKS_TRACEBACK=1`` asks for them."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not os.environ.get("ENTITYWORKS_TRACEBACK"):
        sys.unraisablehook = _ignored
    click.echo("error: aborted", err=True)
    sys.exit(1)


def _ignored(_unraisable: Any) -> None:
    """An ``unraisablehook`` that says nothing (see :func:`aborted`)."""


#: click >= 8.2 raises this for a group called without a command (older ones print the help)
NO_ARGS_IS_HELP: tuple[type[click.UsageError], ...] = tuple(
    c for c in [getattr(click.exceptions, "NoArgsIsHelpError", None)] if c is not None
)


class Group(click.Group):
    """A group whose ``main`` maps user errors to one stderr line and exit status 2, Ctrl-C to
    ``error: aborted`` and status 1 (click's own ``main`` would add a blank line)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # click would print a blank line first
            raise Aborted from None

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        args = sys.argv[1:] if args is None else list(args)
        prog_name = prog_name or "entityworks"
        status = 0
        try:
            self._main_shell_completion(extra, prog_name, complete_var)
            try:
                with self.make_context(prog_name, args, **extra) as ctx:
                    self.invoke(ctx)
            except click.exceptions.Exit as done:  # --help, --version, ctx.exit()
                status = done.exit_code
        except NO_ARGS_IS_HELP as shown:  # a bare group: its help, as with --help
            click.echo(shown.ctx.get_help() if shown.ctx is not None else shown.message)
            sys.exit(0)
        except (Aborted, KeyboardInterrupt, EOFError, click.exceptions.Abort):
            aborted()
        except BrokenPipeError:  # e.g. 'entityworks query ... | head': the reader left
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - nothing more to report
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
            sys.exit(1)
        except Exception as exc:
            if os.environ.get("ENTITYWORKS_TRACEBACK"):
                raise
            fail(exc)
        sys.exit(status)
