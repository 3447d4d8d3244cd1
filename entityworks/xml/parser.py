"""The hardened lxml parser every XML and XSD document is read with.

Nothing is fetched, nothing expanded: no DTD (a DOCTYPE is refused outright), no entity, no
network or file access through resolvers, no huge text nodes, and compressed input is refused
before a byte is inflated. :mod:`entityworks.xml.xsd` and :mod:`entityworks.xml.table` both read
through here, so neither needs the other for it.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from lxml import etree

from ..errors import XMLImportError

#: Parser options shared by every document we read: nothing is fetched, nothing expanded.
SAFE_OPTIONS: dict[str, Any] = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
    "remove_comments": True,
    "remove_pis": True,
    "collect_ids": False,
}
#: The streaming pass runs after a first pass has refused any DOCTYPE, so no entity can be
#: declared; "internal" instead of False works around lxml swallowing a premature end of
#: the document when entity resolution is off and a schema validates the stream.
STREAM_OPTIONS: dict[str, Any] = {**SAFE_OPTIONS, "resolve_entities": "internal"}
#: The root element of a .NET DiffGram (``DataSet.WriteXml(..., XmlWriteMode.DiffGram)``).
DIFFGRAM_NS = "urn:schemas-microsoft-com:xml-diffgram-v1"
DIFFGRAM_ROOT = f"{{{DIFFGRAM_NS}}}diffgram"
_COMPRESSED = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"PK\x03\x04", b"\x28\xb5\x2f\xfd")


class RefuseResolver(etree.Resolver):
    """Answers every request for an external resource with an empty document."""

    def resolve(self, system_url: str | None, public_id: str | None, context: Any) -> Any:
        return self.resolve_string("", context)


def hardened_parser() -> etree.XMLParser:
    """An lxml parser that loads no DTD, expands no entity and touches no network or file."""
    parser: etree.XMLParser = etree.XMLParser(**SAFE_OPTIONS)
    parser.resolvers.add(RefuseResolver())
    return parser


def check_prolog(path: Path, what: str) -> None:
    """Refuse compressed input (a small file must not claim gigabytes)."""
    with open(path, "rb") as f:
        head = f.read(8)
    if any(head.startswith(magic) for magic in _COMPRESSED):
        raise XMLImportError(
            f"{what} {path.name!r} is compressed; decompress it first "
            "(compressed input is refused so that a small file cannot "
            "claim gigabytes)"
        )


def refuse_doctype(tree: etree._ElementTree, path: Path, what: str) -> None:
    info = tree.docinfo
    if info.doctype or info.internalDTD is not None or info.externalDTD is not None:
        raise XMLImportError(
            f"{what} {path.name!r} has a DOCTYPE; DTDs and entity declarations are refused"
        )


def syntax_error(exc: etree.XMLSyntaxError, path: Path, what: str) -> XMLImportError:
    message = str(exc.msg if getattr(exc, "msg", None) else exc)
    return XMLImportError(
        f"{what} {path.name!r} is not well-formed XML (line {exc.lineno}): {message}"
    )


def check_size(path: Path, what: str, limit: int | None) -> None:
    """Refuse a file larger than ``limit`` bytes (``None``: no limit) before parsing it."""
    if limit is None:
        return
    size = path.stat().st_size
    if size > limit:
        raise XMLImportError(
            f"{what} {path.name!r} is {size:,} bytes, more than the {limit:,} bytes allowed"
        )


def parse_document(
    path: str | Path, *, what: str = "XML", max_bytes: int | None = None
) -> etree._ElementTree:
    """Parse a small document (an XSD) safely into a tree; ``max_bytes`` bounds its size."""
    path = Path(path)
    check_prolog(path, what)
    check_size(path, what, max_bytes)
    try:
        with open(path, "rb") as f:
            tree = etree.parse(f, hardened_parser())
    except etree.XMLSyntaxError as exc:
        raise syntax_error(exc, path, what) from None
    refuse_doctype(tree, path, what)
    return tree


def root_tag(path: Path) -> str:
    """The document's root element tag (``{namespace}name`` if it has one), read safely
    from the start of the file."""
    check_prolog(path, "XML file")
    with open(path, "rb") as f:
        events = etree.iterparse(f, events=("start",), **SAFE_OPTIONS)
        events.resolvers.add(RefuseResolver())
        try:
            for _, element in events:
                refuse_doctype(element.getroottree(), path, "XML file")
                return str(element.tag)
        except etree.XMLSyntaxError as exc:
            raise syntax_error(exc, path, "XML file") from None
    raise XMLImportError(f"XML file {path.name!r} has no root element")


def root_name(path: Path) -> str:
    """The document's root element name, which must not be in a namespace."""
    tag = root_tag(path)
    if tag == DIFFGRAM_ROOT:
        raise XMLImportError(
            f"{path.name} is a .NET DiffGram (changes, not a table): "
            "apply it with Store.import_diffgram or 'entityworks import-xml'"
        )
    if "}" in tag:
        raise XMLImportError(
            f"root element {tag!r} is in a namespace; only datasets "
            "without a namespace (and .NET DiffGrams) are read"
        )
    return tag


_XS_SCHEMA = "{http://www.w3.org/2001/XMLSchema}schema"


def inline_schema(path: Path, max_bytes: int) -> etree._ElementTree | None:
    """The ``xs:schema`` a document carries as the first child of its root (.NET's
    ``WriteXml(..., XmlWriteMode.WriteSchema)``), as a tree of its own; ``None`` if the
    first child is anything else. Reading stops at the schema's end (or after
    ``max_bytes``), so the rows are not parsed here."""
    check_prolog(path, "XML file")
    with open(path, "rb") as f:
        events = etree.iterparse(f, events=("start", "end"), **SAFE_OPTIONS)
        events.resolvers.add(RefuseResolver())
        depth = 0
        try:
            for event, element in events:
                if f.tell() > max_bytes + 2**16:  # the parser reads ahead in 64 KiB blocks
                    raise XMLImportError(
                        f"the schema inside {path.name!r} is larger than "
                        f"the {max_bytes:,} bytes allowed for an XSD"
                    )
                if event == "end":
                    if depth == 2:
                        return etree.ElementTree(copy.deepcopy(element))
                    depth -= 1
                    continue
                depth += 1
                if depth == 1:
                    refuse_doctype(element.getroottree(), path, "XML file")
                elif depth == 2 and element.tag != _XS_SCHEMA:
                    return None
        except etree.XMLSyntaxError as exc:
            raise syntax_error(exc, path, "XML file") from None
    return None


__all__ = [
    "DIFFGRAM_NS",
    "DIFFGRAM_ROOT",
    "SAFE_OPTIONS",
    "STREAM_OPTIONS",
    "RefuseResolver",
    "check_prolog",
    "check_size",
    "hardened_parser",
    "inline_schema",
    "parse_document",
    "refuse_doctype",
    "root_name",
    "root_tag",
    "syntax_error",
]
