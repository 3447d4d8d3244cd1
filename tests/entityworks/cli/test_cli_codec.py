"""``entityworks codec compress / decompress``: the posts' bit-packing compressor on files.

Round trips through click's runner and through the real command, one-line refusals of
damaged input with nothing written, and the input never overwritten.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from entityworks.cli import cli
from generators.bytes import codec

ROOT = Path(__file__).resolve().parents[3]


def run(*args: str, input: bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def refused(result: Result, message: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert message in lines[0], lines[0]
    assert "Traceback" not in result.stdout + result.stderr


def files_in(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


SAMPLES = {
    "empty": b"",
    "one_symbol": b"\x00" * 1000,
    "dna": b"ACGT" * 250 + b"A",
    "map": b"#.\n" * 333,
    "all_bytes": bytes(range(256)) * 4,  # 8 bits a symbol: stored as is
    "odd_tail": bytes([1, 2, 3, 4, 5]) * 7,  # 3 bits x 35 symbols: last byte part-filled
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_round_trip_and_header(name: str, tmp_path: Path) -> None:
    data = SAMPLES[name]
    source = tmp_path / "in.bin"
    source.write_bytes(data)
    packed, back = tmp_path / "out.ewbp", tmp_path / "back.bin"
    result = run("codec", "compress", str(source), str(packed))
    assert result.exit_code == 0, result.output
    blob = packed.read_bytes()
    assert blob == codec.pack(data)  # the library's format, header included
    assert blob[:4] == codec.MAGIC and int.from_bytes(blob[5:13], "little") == len(data)
    distinct = len(set(data))
    if blob[4] == codec.PACKED:  # width, symbol count - 1 and the symbol table follow
        head = blob[codec.HEADER_SIZE :]
        assert head[0] == codec.code_width(distinct) and head[1] + 1 == distinct
        assert head[2 : 2 + distinct] == bytes(sorted(set(data)))
        assert len(blob) < codec.HEADER_SIZE + len(data)  # else it would be stored raw
    else:
        assert blob[codec.HEADER_SIZE :] == data
    result = run("codec", "decompress", str(packed), str(back))
    assert result.exit_code == 0, result.output
    assert back.read_bytes() == data
    assert source.read_bytes() == data
    assert files_in(tmp_path) == {"in.bin", "out.ewbp", "back.bin"}


@settings(max_examples=40)
@given(data=st.binary(max_size=600))
def test_standard_streams_round_trip(data: bytes) -> None:
    packed = run("codec", "compress", "-", "-", input=data)
    assert packed.exit_code == 0, packed.stderr
    assert packed.stdout_bytes == codec.pack(data)
    assert "<stdin>" in packed.stderr and "<stdout>" in packed.stderr
    back = run("codec", "decompress", "-", "-", input=packed.stdout_bytes)
    assert back.exit_code == 0 and back.stdout_bytes == data


def damaged_blobs() -> dict[str, bytes]:
    blob = codec.pack(b"ACGT" * 100)
    flipped = bytearray(blob)
    flipped[-3] ^= 0x40
    return {
        "truncated payload": blob[:-5],
        "truncated header": blob[:10],
        "not a packed blob": b"hello world, not a blob at all",
        "CRC-32 mismatch": bytes(flipped),
        "header checksum": blob[:6] + b"\xff" + blob[7:],
        "empty": b"",
    }


@pytest.mark.parametrize("kind", sorted(damaged_blobs()))
def test_damaged_input_is_one_line_and_writes_nothing(kind: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ewbp"
    bad.write_bytes(damaged_blobs()[kind])
    out = tmp_path / "out.bin"
    result = run("codec", "decompress", str(bad), str(out))
    refused(result, f"cannot decompress {bad}")
    assert files_in(tmp_path) == {"bad.ewbp"}  # no output, no temporary file
    out.write_bytes(b"kept")  # an existing output stays as it was
    refused(run("codec", "decompress", str(bad), str(out)), "cannot decompress")
    assert out.read_bytes() == b"kept" and files_in(tmp_path) == {"bad.ewbp", "out.bin"}


def test_the_output_never_overwrites_the_input(tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_bytes(b"ACGT" * 50)
    for target in (source, tmp_path / "." / "in.txt"):
        refused(run("codec", "compress", str(source), str(target)), "is the input file")
    os.link(source, tmp_path / "other-name.txt")
    refused(
        run("codec", "compress", str(source), str(tmp_path / "other-name.txt")), "is the input file"
    )
    blob = tmp_path / "in.ewbp"
    blob.write_bytes(codec.pack(b"xyz"))
    refused(run("codec", "decompress", str(blob), str(blob)), "is the input file")
    assert source.read_bytes() == b"ACGT" * 50 and blob.read_bytes() == codec.pack(b"xyz")


def test_bad_paths_are_one_line(tmp_path: Path) -> None:
    refused(run("codec", "compress", str(tmp_path / "missing"), str(tmp_path / "o")), "cannot read")
    refused(run("codec", "compress", str(tmp_path), str(tmp_path / "o")), "is a directory")
    (tmp_path / "in").write_bytes(b"abc")
    refused(
        run("codec", "compress", str(tmp_path / "in"), str(tmp_path / "no" / "o")), "does not exist"
    )
    refused(run("codec", "compress", str(tmp_path / "in"), str(tmp_path)), "is a directory")
    assert files_in(tmp_path) == {"in"}


def test_max_size_refuses_large_inputs_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_bytes(b"AC" * 600)
    out = tmp_path / "out.ewbp"
    refused(
        run("codec", "compress", str(source), str(out), "--max-size", "1K"),
        f"{source}: more than 1,024 bytes, the size limit (raise it with --max-size)",
    )
    refused(
        run("codec", "compress", "-", str(out), "--max-size", "1K", input=b"AC" * 600),
        "<stdin>: more than 1,024 bytes",
    )
    assert files_in(tmp_path) == {"in.txt"}
    assert run("codec", "compress", str(source), str(out), "--max-size", "1200").exit_code == 0
    assert run("codec", "compress", str(source), str(out), "--max-size", "0").exit_code == 0
    refused(run("codec", "decompress", str(out), "-", "--max-size", "100"), "size limit")


def test_paths_that_look_like_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("-in.txt").write_bytes(b"GATTACA" * 20)
    refused(
        run("codec", "compress", "-in.txt", "out"),
        "no such option: -in.txt (for a file whose name starts with '-', put '--'",
    )
    assert run("codec", "compress", "--", "-in.txt", "-out.ewbp").exit_code == 0
    assert run("codec", "decompress", "./-out.ewbp", "./-back.txt").exit_code == 0
    assert Path("-back.txt").read_bytes() == b"GATTACA" * 20


def command() -> list[str]:
    script = Path(sys.executable).parent / "entityworks"
    return [str(script)] if script.exists() else [sys.executable, "-m", "entityworks"]


def test_the_real_command_round_trips_and_refuses(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    data = b"".join(bytes([b % 7 + 48]) for b in range(5000))
    source = tmp_path / "level.txt"
    source.write_bytes(data)

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command(), "codec", *args], capture_output=True, text=True, env=env, timeout=120
        )

    done = call("compress", str(source), str(tmp_path / "level.ewbp"))
    assert done.returncode == 0, done.stderr
    assert "5,000 -> " in done.stdout and "3 bits per byte, 7 symbols" in done.stdout
    done = call("decompress", str(tmp_path / "level.ewbp"), str(tmp_path / "back.txt"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "back.txt").read_bytes() == data
    (tmp_path / "cut.ewbp").write_bytes((tmp_path / "level.ewbp").read_bytes()[:-100])
    done = call("decompress", str(tmp_path / "cut.ewbp"), str(tmp_path / "never.txt"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "truncated payload" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "never.txt").exists()
    assert sorted(files_in(tmp_path)) == ["back.txt", "cut.ewbp", "level.ewbp", "level.txt"]
