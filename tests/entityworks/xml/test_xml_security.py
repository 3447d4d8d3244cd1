"""Hostile XML and XSD: every trick is refused with a clear error, nothing is read from disk
or network, and nothing reaches the database."""

from __future__ import annotations

import gzip
import http.server
import resource
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from entityworks import Store, XMLImportError
from entityworks.xml.table import read_xml, write_xml
from entityworks.xml.xsd import read_xsd
from entityworks.xml.xsdwrite import xsd_bytes

SECRET = "TOP-SECRET-7c1f"

#: Our two refusals of a DTD: the DOCTYPE check, or the hardened parser stopping first (libxml2
#: 2.13+ stops an entity amplification before the DOCTYPE is seen). Only entityworks' own
#: wording is matched: libxml2's part of a message changes between versions.
DTD_REFUSED = "has a DOCTYPE|is not well-formed XML"


@dataclass
class Note:
    id: int
    text: str | None


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        _Counter.hits.append(self.path)
        body = f'<!ENTITY secret "{SECRET}">'.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    """A local HTTP server that records every request it gets."""
    _Counter.hits = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    assert _Counter.hits == [], "the parser made a network request"


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET)
    return path


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Store, Path]:
    """A store already holding one row, and our XSD for Note."""
    store = Store(tmp_path / "db.sqlite")
    store.create(Note)
    store.insert(Note(1000, "existing"))
    xsd = tmp_path / "note.xsd"
    xsd.write_bytes(xsd_bytes(Note))
    return store, xsd


def refused(store: Store, xsd: Path, xml: Path, match: str | None = None) -> XMLImportError:
    """Both readers refuse with our error (``match``: entityworks' own wording, never the
    parser's); the secret never shows; no row added."""
    for attempt in (lambda: read_xml(Note, xml, xsd), lambda: store.import_xml(Note, xml, xsd)):
        with pytest.raises(XMLImportError) as info:
            attempt()
        if match is not None:
            assert info.match(match)
        assert SECRET not in str(info.value)
    assert [n.id for n in store.select(Note)] == [1000]
    return info.value


def document(tmp_path: Path, text: str, name: str = "evil.xml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


ROWS = "<note><id>1</id><text>&x;</text></note>"


def test_external_entity_file(tmp_path: Path, setup: tuple[Store, Path], secret_file: Path) -> None:
    xml = document(
        tmp_path,
        f'<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY x SYSTEM '
        f'"file://{secret_file}">]>\n<DocumentElement>{ROWS}'
        "</DocumentElement>",
    )
    refused(*setup, xml, DTD_REFUSED)


def test_external_entity_http(tmp_path: Path, setup: tuple[Store, Path], server: str) -> None:
    xml = document(
        tmp_path,
        f'<!DOCTYPE d [<!ENTITY x SYSTEM "{server}/x">]><DocumentElement>{ROWS}</DocumentElement>',
    )
    refused(*setup, xml, DTD_REFUSED)


def peak_memory_mib() -> float:
    """This process's peak resident memory so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_billion_laughs(tmp_path: Path, setup: tuple[Store, Path]) -> None:
    # 10**9 "lol"s (3 GB) if expanded: refused without expanding, so the process's peak memory
    # barely moves, and the error does not carry the expansion either
    entities = '<!ENTITY l0 "lol">' + "".join(
        f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 10)
    )
    xml = document(
        tmp_path,
        f"<!DOCTYPE d [{entities}]><DocumentElement><note><id>1</id>"
        "<text>&l9;</text></note></DocumentElement>",
    )
    before = peak_memory_mib()
    error = refused(*setup, xml, DTD_REFUSED)
    assert peak_memory_mib() - before < 256
    assert "lollol" not in str(error) and len(str(error)) < 1000


def test_external_dtd(
    tmp_path: Path, setup: tuple[Store, Path], server: str, secret_file: Path
) -> None:
    for system in (f"{server}/evil.dtd", f"file://{secret_file}"):
        xml = document(
            tmp_path,
            f'<!DOCTYPE DocumentElement SYSTEM "{system}">'
            f"<DocumentElement>{ROWS}</DocumentElement>",
        )
        refused(*setup, xml, DTD_REFUSED)


def test_parameter_entities(
    tmp_path: Path, setup: tuple[Store, Path], server: str, secret_file: Path
) -> None:
    xml = document(
        tmp_path,
        f'<!DOCTYPE d [<!ENTITY % file SYSTEM "file://{secret_file}">'
        f'<!ENTITY % remote SYSTEM "{server}/p.dtd">%remote;%file;]>'
        f"<DocumentElement>{ROWS}</DocumentElement>",
    )
    refused(*setup, xml, DTD_REFUSED)


def test_xinclude(
    tmp_path: Path, setup: tuple[Store, Path], secret_file: Path, server: str
) -> None:
    include = '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="{}" parse="text"/>'
    inside = document(
        tmp_path,
        "<DocumentElement><note><id>1</id><text>"
        f"{include.format(secret_file)}</text></note></DocumentElement>",
    )
    error = refused(*setup, inside, "XInclude is not processed")
    assert (error.row, error.column) == (1, "text")
    between = document(
        tmp_path,
        "<DocumentElement><note><id>1</id></note>"
        f"{include.format(server + '/x')}</DocumentElement>",
    )
    error = refused(*setup, between, "XInclude is not processed")
    assert error.row == 2


def test_a_gigabyte_claiming_compressed_document(tmp_path: Path, setup: tuple[Store, Path]) -> None:
    # A small gzip member whose trailer claims 1 GiB of XML: refused before inflating a byte.
    body = gzip.compress(
        b"<DocumentElement>" + b"<note><id>1</id></note>" * 10 + b"</DocumentElement>"
    )
    bomb = body[:-4] + struct.pack("<I", 2**30)
    path = tmp_path / "bomb.xml"
    path.write_bytes(bomb)
    refused(*setup, path, "compressed")


def test_a_huge_text_node(tmp_path: Path, setup: tuple[Store, Path]) -> None:
    path = tmp_path / "huge.xml"
    with open(path, "w") as f:
        f.write("<DocumentElement><note><id>1</id><text>")
        chunk = "A" * 2**20
        for _ in range(11):  # past libxml2's 10 MB limit for one text node
            f.write(chunk)
        f.write("</text></note></DocumentElement>")
    refused(*setup, path, "not well-formed")


def test_deep_nesting(tmp_path: Path, setup: tuple[Store, Path]) -> None:
    xml = document(
        tmp_path, "<DocumentElement>" + "<a>" * 300 + "</a>" * 300 + "</DocumentElement>"
    )
    refused(*setup, xml, "not well-formed|row 1")


def test_invalid_utf8(tmp_path: Path, setup: tuple[Store, Path]) -> None:
    path = tmp_path / "bad.xml"
    path.write_bytes(
        b'<?xml version="1.0" encoding="UTF-8"?><DocumentElement><note><id>1</id>'
        b"<text>caf\xc3\x28</text></note></DocumentElement>"
    )
    error = refused(*setup, path, "not well-formed")
    assert "line 1" in str(error)


def test_truncated_file(tmp_path: Path, setup: tuple[Store, Path]) -> None:
    store, xsd = setup
    path = tmp_path / "cut.xml"
    write_xml(Note, [Note(i, f"note {i}") for i in range(2000, 32_000)], path)
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 5):
        path.write_bytes(data[:cut])
        refused(store, xsd, path, "not well-formed|truncated")


def test_empty_and_non_xml_files(tmp_path: Path, setup: tuple[Store, Path]) -> None:
    refused(*setup, document(tmp_path, ""), "not well-formed|no root")
    refused(*setup, document(tmp_path, "id,text\n1,a\n"), "not well-formed")


def test_hostile_xsd_is_refused(tmp_path: Path, secret_file: Path, server: str) -> None:
    xml = tmp_path / "n.xml"
    write_xml(Note, [Note(1, "a")], xml)
    base = xsd_bytes(Note).decode()
    doctype = base.replace(
        "<xs:schema",
        f'<!DOCTYPE xs:schema [<!ENTITY x SYSTEM "file://{secret_file}">]>\n<xs:schema',
        1,
    )
    include = base.replace(
        '<xs:element name="DocumentElement"',
        f'<xs:include schemaLocation="{server}/a.xsd"/><xs:element name="DocumentElement"',
        1,
    )
    imported = base.replace(
        '<xs:element name="DocumentElement"',
        f'<xs:import namespace="urn:x" schemaLocation="file://{secret_file}"/>'
        '<xs:element name="DocumentElement"',
        1,
    )
    for name, text, match in (
        ("doctype.xsd", doctype, "DOCTYPE"),
        ("include.xsd", include, "another schema"),
        ("import.xsd", imported, "another schema"),
    ):
        path = document(tmp_path, text, name)
        with pytest.raises(XMLImportError, match=match) as info:
            read_xml(Note, xml, path)
        assert SECRET not in str(info.value)
    with pytest.raises(XMLImportError, match="DOCTYPE"):
        read_xsd(tmp_path / "doctype.xsd")
