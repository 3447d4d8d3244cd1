"""Which XSD ``import-xml`` reads when none is given: the document's inline schema, else the
file ``export-xml`` writes beside it (``big.xml`` -> ``big.xsd``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import click


def xsd_beside(xml_file: str, xsd: str | None) -> str | None:
    """``xsd`` if given; else, for a regular file ``xml_file`` without an inline schema, the
    ``.xsd`` file with the same stem beside it when there is one (said on stderr in one line);
    else ``None`` (standard input, a FIFO, an inline schema or no such file)."""
    from .._files import is_stdio

    if xsd is not None or is_stdio(xml_file):
        return xsd
    document = Path(xml_file)
    candidate = document.with_suffix(".xsd")
    if candidate == document or not _regular(document) or not _regular(candidate):
        return None  # a FIFO or a device is read only once, by the import itself
    from ..xml.parser import inline_schema
    from ..xml.xsdwrite import MAX_XSD_BYTES

    if inline_schema(document, MAX_XSD_BYTES) is not None:
        return None
    click.echo(
        f"using the schema beside {str(document)!r}: {str(candidate)!r} (--xsd chooses another)",
        err=True,
    )
    return str(candidate)


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


__all__ = ["xsd_beside"]
