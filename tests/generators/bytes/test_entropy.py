"""Entropy reports: identical to the ``ent`` program, streamed, plus block profiles and plots."""

from __future__ import annotations

import io
import math
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy import stats

from generators.bytes import entropy
from tests.conftest import IN_CI, require_data

# ent's self-test file runs these option sets in this order (its Makefile "check" target).
MAS_OPTIONS = ["", "c", "fc", "b", "bc", "t", "ct", "ft", "bt", "bct"]


def ent_text(source: object, options: str, chunk_size: int = entropy.DEFAULT_CHUNK) -> bytes:
    """Our rendering for an ent option string such as ``"bct"``, as ent's bytes."""
    rep = entropy.report(source, chunk_size, bits="b" in options, fold="f" in options)
    return rep.to_ent(counts="c" in options, terse="t" in options).encode("latin-1")


def require_ent() -> str:
    path = shutil.which("ent")
    if path is None:
        message = "the ent program is not installed (apt-get install ent)"
        if IN_CI:
            pytest.fail(message + " (required under CI=true)")
        pytest.skip(message)
    return path


# --- against ent's own expected output -------------------------------------------------------


@pytest.mark.parametrize("chunk_size", [entropy.DEFAULT_CHUNK, 1001])
def test_entest_mas_reproduced_for_every_option_set(chunk_size: int) -> None:
    data = require_data("ent_entitle.png")
    expected = require_data("ent_entest.mas").read_bytes()
    ours = b"".join(ent_text(data, options, chunk_size) for options in MAS_OPTIONS)
    assert ours == expected


@pytest.mark.parametrize("chunk_size", [1, 5, 6])
def test_entest_default_and_bit_mode_with_tiny_chunks(chunk_size: int) -> None:
    """Chunks smaller than a Monte Carlo group exercise every carry-over between chunks."""
    data = require_data("ent_entitle.png")
    expected = require_data("ent_entest.mas").read_bytes().decode("latin-1")
    default = ent_text(data, "", chunk_size).decode("latin-1")
    bits = ent_text(data, "b", chunk_size).decode("latin-1")
    assert expected.startswith(default)
    assert bits in expected and "bits per bit" in bits


def test_report_fields_on_the_ent_sample() -> None:
    rep = entropy.report(require_data("ent_entitle.png"))
    assert rep.size == rep.samples == 9267 and not rep.bits
    assert sum(rep.distribution) == 9267 and len(rep.distribution) == 256
    assert rep.distribution[0] == 46 and rep.distribution[255] > 0
    assert math.isclose(sum(rep.probabilities), 1.0)
    assert f"{rep.entropy:.6f}" == "7.944368"
    assert f"{rep.chi_square:.2f}" == "777.83"
    assert f"{rep.mean:.4f}" == "126.7298"
    assert f"{rep.monte_carlo_pi:.9f}" == "3.170984456"
    assert f"{rep.serial_correlation:.6f}" == "0.059129"
    bits = entropy.report(require_data("ent_entitle.png"), bits=True)
    assert bits.samples == 8 * 9267 and bits.distribution == (37459, 36677)


# --- against the installed ent program on generated files ------------------------------------


def generated_files() -> dict[str, bytes]:
    rng = np.random.default_rng(2013)
    words = [b"entropy", b"sudoku", b"cave", b"\xe9t\xe9", b"ZEBRA", b"\xc0 la", b"42", b"\n"]
    text = b" ".join(words[i] for i in rng.integers(0, len(words), 6000))
    return {
        "random": rng.integers(0, 256, 100_003, dtype=np.uint8).tobytes(),
        "text": text,
        "skewed": np.minimum(rng.geometric(0.05, 40_000), 255).astype(np.uint8).tobytes(),
        "constant": b"\x07" * 4099,
        "empty": b"",
        "one_byte": b"A",
        "five_bytes": b"hello",
        "all_values": bytes(range(256)) * 8,
    }


ENT_OPTIONS = ["", "c", "b", "bc", "t", "ct", "bt", "bct", "f", "fc", "ft"]


@pytest.mark.parametrize("name", sorted(generated_files()))
def test_identical_to_ent_program(name: str, tmp_path: Path) -> None:
    ent = require_ent()
    data = generated_files()[name]
    path = tmp_path / f"{name}.bin"
    path.write_bytes(data)
    for options in ENT_OPTIONS:
        args = [ent, f"-{options}", str(path)] if options else [ent, str(path)]
        expected = subprocess.run(args, capture_output=True, check=True).stdout
        assert ent_text(path, options) == expected, options
        assert ent_text(data, options, chunk_size=4093) == expected, options


# --- the figures, checked independently of ent -----------------------------------------------


def sample_data() -> bytes:
    rng = np.random.default_rng(7)
    return (
        (rng.integers(0, 64, 30_001) + rng.integers(0, 192, 30_001) // 3).astype(np.uint8).tobytes()
    )


def test_figures_follow_their_definitions() -> None:
    data = sample_data()
    values = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
    rep = entropy.report(data, chunk_size=1000)
    counts = np.bincount(values, minlength=256)
    assert rep.distribution == tuple(counts)
    assert rep.unique_symbols == np.count_nonzero(counts)
    p = counts[counts > 0] / len(values)
    assert math.isclose(rep.entropy, float(-(p * np.log2(p)).sum()), rel_tol=1e-12)
    assert math.isclose(rep.optimum_compression, 100 * (8 - rep.entropy) / 8)
    assert math.isclose(rep.mean, values.mean(), rel_tol=1e-12)
    assert math.isclose(rep.chi_square, stats.chisquare(counts).statistic, rel_tol=1e-9)
    assert math.isclose(rep.chi_square_probability, stats.chi2.sf(rep.chi_square, 255),
                        abs_tol=1e-7)  # fmt: skip
    # Serial correlation over the circular sequence (last value paired with the first).
    x, y = values, np.roll(values, -1)
    n = len(values)
    expected = (n * int(x @ y) - int(x.sum()) ** 2) / (n * int(x @ x) - int(x.sum()) ** 2)
    assert math.isclose(rep.serial_correlation, expected, rel_tol=1e-9)
    # Monte Carlo: consecutive 6-byte groups as two 24-bit big-endian coordinates.
    inside = groups = 0
    for k in range(0, len(data) - 5, 6):
        px = int.from_bytes(data[k : k + 3], "big")
        py = int.from_bytes(data[k + 3 : k + 6], "big")
        groups += 1
        inside += px * px + py * py <= (2**24 - 1) ** 2
    assert rep.monte_carlo_pi == 4 * inside / groups
    assert math.isclose(rep.monte_carlo_error, 100 * abs(math.pi - rep.monte_carlo_pi) / math.pi)


def test_bit_mode_follows_its_definitions() -> None:
    data = sample_data()[:5000]
    bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8)).astype(np.int64)
    rep = entropy.report(data, chunk_size=333, bits=True)
    ones = int(bits.sum())
    assert rep.samples == bits.size and rep.distribution == (bits.size - ones, ones)
    assert math.isclose(rep.mean, ones / bits.size)
    n, pairs = bits.size, int(bits @ np.roll(bits, -1))
    expected = (n * pairs - ones**2) / (n * ones - ones**2)
    assert math.isclose(rep.serial_correlation, expected, rel_tol=1e-9)
    assert math.isclose(rep.chi_square_probability, stats.chi2.sf(rep.chi_square, 1),
                        abs_tol=1e-7)  # fmt: skip
    byte_mode = entropy.report(data)
    assert rep.monte_carlo_pi == byte_mode.monte_carlo_pi  # ent uses bytes for it either way


def test_fold_maps_upper_to_lower_case() -> None:
    rep = entropy.report("Aa\xc0\xe0\xd7Z".encode("latin-1"), fold=True)
    assert rep.distribution[ord("a")] == 2 and rep.distribution[ord("A")] == 0
    assert rep.distribution[0xE0] == 2 and rep.distribution[0xC0] == 0
    assert rep.distribution[0xD7] == 1 and rep.distribution[ord("z")] == 1


def test_undefined_figures_are_none() -> None:
    empty = entropy.report(b"")
    assert empty.size == 0 and empty.entropy == 0.0 and empty.unique_symbols == 0
    assert empty.chi_square is None and empty.mean is None and empty.monte_carlo_pi is None
    constant = entropy.report(b"zzzzzzzzzzzz")
    assert constant.serial_correlation is None and constant.entropy == 0.0
    assert constant.monte_carlo_pi == 4.0 and constant.unique_symbols == 1


def test_chi_square_tail_matches_scipy() -> None:
    for df in (1, 2, 3, 10, 255):
        for x in (0.5, 1.0, df * 0.8, float(df), df * 1.3 + 5.0, 300.0):
            assert math.isclose(
                entropy.chi_square_upper_tail(x, df), stats.chi2.sf(x, df), abs_tol=1e-7
            ), (x, df)
    assert entropy.chi_square_upper_tail(0.0, 255) == 1.0
    assert math.isclose(entropy.normal_cdf(1.96), stats.norm.cdf(1.96), abs_tol=1e-9)


# --- sources and streaming -------------------------------------------------------------------


class ReadOnlyStream:
    """A stream without ``readinto`` that records how much each read asks for."""

    def __init__(self, data: bytes) -> None:
        self.inner = io.BytesIO(data)
        self.requests: list[int] = []

    def read(self, size: int = -1) -> bytes:
        self.requests.append(size)
        return self.inner.read(size)


def test_all_source_kinds_agree(tmp_path: Path) -> None:
    data = sample_data()
    path = tmp_path / "data.bin"
    path.write_bytes(data)
    reference = entropy.report(data)
    assert entropy.report(str(path)) == reference
    assert entropy.report(path, chunk_size=999) == reference
    assert entropy.report(bytearray(data)) == reference
    assert entropy.report(memoryview(data), chunk_size=7) == reference
    assert entropy.report(io.BytesIO(data), chunk_size=4096) == reference
    with open(path, "rb") as handle:
        assert entropy.report(handle, chunk_size=100) == reference


def test_streams_are_read_in_bounded_chunks() -> None:
    data = sample_data()
    stream = ReadOnlyStream(data)
    rep = entropy.report(stream, chunk_size=4096)
    assert rep == entropy.report(data)
    assert stream.requests and max(stream.requests) == 4096  # never the whole input at once
    assert len(stream.requests) == len(data) // 4096 + 2


def test_bad_sources_and_parameters() -> None:
    with pytest.raises(ValueError, match="chunk_size"):
        entropy.report(b"abc", chunk_size=0)
    with pytest.raises(ValueError, match="chunk_size"):
        entropy.report(b"abc", chunk_size=2**40)
    with pytest.raises(TypeError, match="binary mode"):
        entropy.report(io.StringIO("text"))
    with pytest.raises(TypeError, match="int"):
        entropy.report(12345)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        entropy.report("/nonexistent/file.bin")


# --- profile and plot ------------------------------------------------------------------------


def test_profile_finds_a_random_region() -> None:
    rng = np.random.default_rng(11)
    data = b"a" * 8192 + rng.integers(0, 256, 8192, dtype=np.uint8).tobytes() + b"ab" * 1000
    prof = entropy.profile(data, block_size=1024)
    assert prof.size == len(data) and prof.block_size == 1024
    assert len(prof.entropy) == math.ceil(len(data) / 1024)
    assert list(prof.offsets[:3]) == [0, 1024, 2048]
    assert np.all(prof.entropy[:8] == 0.0)
    assert np.all(prof.entropy[8:16] > 7.7)
    assert np.allclose(prof.entropy[16:], 1.0)  # "ab" repeated: one bit per byte
    for k in (3, 9, len(prof.entropy) - 1):  # each block equals a standalone report
        block = data[k * 1024 : (k + 1) * 1024]
        assert math.isclose(prof.entropy[k], entropy.report(block).entropy, abs_tol=1e-12)


def test_profile_streams_and_validates(tmp_path: Path) -> None:
    data = sample_data()
    path = tmp_path / "d.bin"
    path.write_bytes(data)
    a = entropy.profile(path, block_size=777)
    b = entropy.profile(io.BytesIO(data), block_size=777)
    assert np.array_equal(a.entropy, b.entropy) and a.size == b.size == len(data)
    assert len(entropy.profile(b"", 64).entropy) == 0
    with pytest.raises(ValueError, match="block_size"):
        entropy.profile(data, block_size=0)


def test_plot_png_and_svg(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    data = bytes(5000) + rng.integers(0, 256, 20000, dtype=np.uint8).tobytes()
    prof = entropy.profile(data, block_size=256)
    png = entropy.plot_profile(prof, tmp_path / "p.png", width=300, height=120)
    with Image.open(png) as image:
        assert image.size == (300, 120) and image.format == "PNG"
        pixels = np.asarray(image.convert("RGB"))
    bars = (pixels[:, :, 2] > 100) & (pixels[:, :, 0] < 60)  # navy
    high = np.flatnonzero(bars[:20].any(axis=0))  # near 8 bits per byte
    # 98 blocks over 292 columns: the first 19 (all zero bytes) take ~57 columns at the floor.
    assert high.min() > 55 and high.max() > 290
    floor = 120 - 4  # height minus the margin: where 0 bits per byte is drawn
    assert bars[floor, 5:50].all() and not bars[:100, 5:50].any()
    svg = entropy.plot_profile(prof, tmp_path / "p.svg", width=300, height=120)
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    rects = root.findall(f".//{ns}g[@fill='navy']/{ns}rect")
    assert len(rects) == len(prof.entropy)  # 98 blocks fit in 292 columns: one band each
    with pytest.raises(ValueError, match="path"):
        entropy.plot_profile(prof, tmp_path / "p.jpg")
    with pytest.raises(ValueError, match="width"):
        entropy.plot_profile(prof, tmp_path / "p.png", width=0)
