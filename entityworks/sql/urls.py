"""Showing a database location without its password.

Every message entityworks prints about a database goes through :func:`display_db`: an SQLite
file shows as its path, a server as its URL with the password replaced by ``***``. Error
texts come from drivers too, and some embed the URL or a connection string, so
:func:`redact` removes any ``user:password@`` part of a URL, ``password=...`` pairs, and every
password seen by :func:`remember_password` (what the command line calls for each ``--db``),
raw or URL-encoded, from any text before it is shown. Only the standard library is imported
(and :mod:`.backends.light`, which says which backend keeps its database in a file).
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import quote, quote_plus, unquote

from .backends.light import FILE_BACKEND

MASK = "***"
_SECRETS: set[str] = set()
# scheme://user:password@  (the password ends at the last '@' before the path)
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*):(?P<pw>[^/\s]*)@")
_PAIR = re.compile(
    r"(?i)(?P<head>\b(?:password|passwd|pwd)\s*[=:]\s*)"
    r"(?P<pw>'[^']*'|\"[^\"]*\"|[^\s&;,)'\"]+)"
)
_NETLOC = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://(?P<userinfo>[^/?#]*)@")


def remember_password(url: Any) -> None:
    """Note the password of ``url`` (text or SQLAlchemy URL) so that :func:`redact` removes it
    wherever it shows up later, even inside a driver's message. Unparsable text is read too."""
    password: str | None = None
    text = str(getattr(url, "password", None) or "") if not isinstance(url, str) else ""
    if text:
        password = text
    elif isinstance(url, str):
        match = _NETLOC.match(url)
        if match and ":" in match.group("userinfo"):
            password = match.group("userinfo").partition(":")[2]
        for pair in _PAIR.finditer(url):
            _add(pair.group("pw").strip("'\""))
    if password:
        _add(password)


def _add(secret: str) -> None:
    if len(secret) < 3:  # too short to search for without mangling ordinary text
        return
    for form in {secret, unquote(secret), quote(secret, safe=""), quote_plus(secret)}:
        if form:
            _SECRETS.add(form)


def redact(text: str) -> str:
    """``text`` with every password removed (see the module docstring)."""
    text = _USERINFO.sub(lambda m: f"{m.group('head')}:{MASK}@", text)
    text = _PAIR.sub(lambda m: f"{m.group('head')}{MASK}", text)
    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def display_db(db: Any) -> str:
    """How a database is named in output: a database file (SQLite's) by its path, anything
    else by its URL without the password. ``db`` is a path, a URL (text or SQLAlchemy), or a
    Store."""
    url = getattr(db, "url", db)  # a Store
    if isinstance(url, str | os.PathLike):
        text = os.fspath(url)
        if "://" not in text:
            return text
        remember_password(text)
        try:
            from sqlalchemy import make_url

            url = make_url(text)
        except Exception:  # noqa: BLE001 - unparsable: show it masked as text
            return redact(text)
    backend = getattr(url, "get_backend_name", None)
    if (
        backend is not None
        and backend() == FILE_BACKEND
        and url.database not in (None, "", ":memory:")
    ):
        return str(url.database)
    if hasattr(url, "render_as_string"):
        remember_password(url)
        return redact(url.render_as_string(hide_password=True))
    return redact(str(url))


__all__ = ["MASK", "display_db", "redact", "remember_password"]
