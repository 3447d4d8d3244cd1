"""The bit-packing compressor of the 2013 posts on the command line: ``codec compress`` and
``codec decompress`` (the library's :func:`generators.bytes.codec.pack` and ``unpack``).

Each command reads its input once, whole, up to ``--max-size`` (a file, or ``-`` for
standard input), and writes
its output whole or not at all: a file through a temporary file renamed over the target, or
``-`` for standard output, sent only once complete. The output may never be the input (the
same path or another name of the same file): refused before anything is read. A damaged or
truncated compressed file is one ``error:`` line and exit status 2, with nothing written.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ..errors import EntityworksError
from .errors import Group
from .options import ByteSize


class _PathsCommand(click.Command):
    """A command whose arguments are paths: an unknown option is probably a file name that
    starts with '-', so the error says how to pass one."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given_args = list(args)  # the parser consumes ``args``
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            name = exc.option_name
            given = next((a for a in given_args if a.startswith(name)), name)  # "-d" of "-dna.txt"
            raise click.NoSuchOption(
                name,
                message=f"no such option: {given} (for a file whose name starts with '-', put "
                f"'--' before the paths or write ./{given})",
                possibilities=exc.possibilities,
                ctx=ctx,
            ) from None


@click.group(cls=Group)
def codec() -> None:
    """Fixed-width bit packing of files (the 2013 posts' compressor).

    Each byte is stored in as few bits as its file's distinct byte values need (a file of
    4 distinct values: 2 bits a byte). The compressed file starts with a header holding the
    original length, the bits per symbol and the symbol table (what the posts kept as
    decodeLength_Bits, entropy_Ceiling and the decompression dictionary), so it
    decompresses on its own; CRC-32 checks catch damage. Data that would not shrink is
    stored as it is, behind the same header.
    """


def _read_input(path: str, max_size: int | None) -> bytes:
    """All of ``path`` ('-': standard input), read once; more than ``max_size`` bytes (None:
    no limit) is refused without keeping them."""
    from ..errors import InputTooLarge

    label = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read(-1 if max_size is None else max_size + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(-1 if max_size is None else max_size + 1)
    except OSError as exc:
        raise EntityworksError(f"cannot read {label!r}: {exc.strerror or exc}") from None
    if max_size is not None and len(data) > max_size:
        raise InputTooLarge(
            f"{label}: more than {max_size:,} bytes, the size limit (raise it with --max-size)"
        )
    return data


def _check_paths(source: str, target: str) -> None:
    """Refuse an output that would overwrite the input, before anything is read."""
    from .._files import check_output_path, is_stdio

    if is_stdio(target):
        return
    check_output_path(target)
    if is_stdio(source):
        return
    try:
        same = os.path.samefile(source, target)
    except OSError:  # the output does not exist yet (or the input is missing: said later)
        same = False
    if same:
        raise click.BadParameter(
            f"{target!r} is the input file; the output must not overwrite it", param_hint="OUTPUT"
        )


def _write(target: str, data: bytes) -> None:
    from .._files import open_output

    with open_output(target) as f:
        f.write(data)


def _ratio(before: int, after: int) -> str:
    return f"{after / before:.1%}" if before else "n/a"


def _with_paths(function: Any) -> Any:
    """INPUT and OUTPUT arguments, each a path or '-', and --max-size."""
    function = click.option(
        "--max-size",
        type=ByteSize(),
        default="1G",
        show_default=True,
        help="Refuse an input larger than this (K, M, G, T; 0: no "
        "limit): it is held in memory whole.",
    )(function)
    function = click.argument(
        "output_path", metavar="OUTPUT", type=click.Path(dir_okay=False, allow_dash=True)
    )(function)
    return click.argument(
        "input_path", metavar="INPUT", type=click.Path(dir_okay=False, allow_dash=True)
    )(function)


@codec.command(cls=_PathsCommand)
@_with_paths
def compress(input_path: str, output_path: str, max_size: int | None) -> None:
    """Compress INPUT into OUTPUT ('-': standard input / output).

    \b
    Example:
      entityworks codec compress level.txt level.ewbp
    """
    from generators.bytes import codec as bp

    _check_paths(input_path, output_path)
    data = _read_input(input_path, max_size)
    blob = bp.pack(data)
    _write(output_path, blob)
    packed = len(blob) > bp.HEADER_SIZE and blob[4] == bp.PACKED
    how = (
        f"{blob[bp.HEADER_SIZE]} bits per byte, {blob[bp.HEADER_SIZE + 1] + 1} symbols"
        if packed
        else "stored as is: packing would not shrink it"
    )
    click.echo(
        f"{_name(input_path, '<stdin>')}: {len(data):,} -> {len(blob):,} bytes "
        f"({_ratio(len(data), len(blob))}; {how}) -> {_name(output_path, '<stdout>')}",
        err=output_path == "-",
    )


@codec.command(cls=_PathsCommand)
@_with_paths
def decompress(input_path: str, output_path: str, max_size: int | None) -> None:
    """Restore a file made by 'codec compress' ('-': standard input / output).

    A damaged, truncated or foreign file is refused with nothing written.

    \b
    Example:
      entityworks codec decompress level.ewbp level.txt
    """
    from generators.bytes import codec as bp

    _check_paths(input_path, output_path)
    blob = _read_input(input_path, max_size)
    try:
        data = bp.unpack(blob)
    except bp.CorruptBlob as exc:
        raise EntityworksError(f"cannot decompress {_name(input_path, '<stdin>')}: {exc}") from None
    _write(output_path, data)
    click.echo(
        f"{_name(input_path, '<stdin>')}: {len(blob):,} -> {len(data):,} bytes -> "
        f"{_name(output_path, '<stdout>')}",
        err=output_path == "-",
    )


def _name(path: str, stdio: str) -> str:
    return stdio if path == "-" else path
