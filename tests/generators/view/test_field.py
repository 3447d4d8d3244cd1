"""The reusable view, cross-checked against libtcod (tcod is a test-only oracle) and against
the one-shot views, over long sequences of calls on one object."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tcod.constants
import tcod.map
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import generators.view
from generators.maps import caves, cellular
from generators.view import fov
from generators.view.field import FieldOfView


def _origins(grid: np.ndarray, count: int, seed: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    floors = np.argwhere(grid == 0)
    picks = floors[rng.choice(len(floors), size=min(count, len(floors)), replace=False)]
    return [(int(x), int(y)) for y, x in picks]


def _disc(shape: tuple[int, ...], origin: tuple[int, int], radius: int) -> np.ndarray:
    ys, xs = np.indices(shape)
    return (xs - origin[0]) ** 2 + (ys - origin[1]) ** 2 <= radius * radius


def _caves() -> list[np.ndarray]:
    """Seeded caves of both generators, small to the benchmark's 200x200."""
    maps = [caves.generate(width=90, height=60, seed=s, mode="fast").grid for s in range(3)]
    maps += [cellular.generate(width=w, height=h, seed=s).grid
             for s, (w, h) in enumerate([(60, 40), (120, 80), (200, 200)])]  # fmt: skip
    maps.append(cellular.generate(200, 200, 45, blank_rows=3, mode="synchronous", seed=5).grid)
    return maps


CAVES = _caves()


def _tcod(grid: np.ndarray, origin: tuple[int, int], radius: int | None, light_walls: bool,
          symmetric: bool) -> np.ndarray:  # fmt: skip
    """libtcod's view in our radius convention: FOV_SHADOW cuts at ``<= radius`` as we do;
    FOV_SYMMETRIC_SHADOWCAST cuts at ``< radius``, so its unlimited view is cut to our disc
    (its scan does not depend on the radius: it cuts afterwards)."""
    pov = (origin[1], origin[0])
    if not symmetric:
        return tcod.map.compute_fov(grid == 0, pov, radius=radius or 0, light_walls=light_walls,
                                    algorithm=tcod.constants.FOV_SHADOW)  # fmt: skip
    seen = tcod.map.compute_fov(grid == 0, pov, radius=0, light_walls=light_walls,
                                algorithm=tcod.constants.FOV_SYMMETRIC_SHADOWCAST)  # fmt: skip
    return seen if radius is None else seen & _disc(grid.shape, origin, radius)


@pytest.mark.parametrize("symmetric", [False, True])
def test_one_object_equals_libtcod_cell_for_cell_call_after_call(symmetric: bool) -> None:
    """Many origins on one object, radii small and large mixed so that a small view follows
    a large one: every result equals libtcod's (plain: FOV_SHADOW; symmetric, in libtcod's
    arithmetic: FOV_SYMMETRIC_SHADOWCAST, its single-precision slopes included)."""
    calls = 0
    for index, grid in enumerate(CAVES):
        view = FieldOfView(grid)
        rng = np.random.default_rng(50 + index)
        for origin in _origins(grid, 25, index):
            for _ in range(3):
                radius = [None, 1, 4, 10, 23, 60][int(rng.integers(6))]
                light_walls = bool(rng.integers(2))
                seen = view.compute(origin, radius, light_walls, symmetric,
                                    libtcod_ties=symmetric)  # fmt: skip
                expected = _tcod(grid, origin, radius, light_walls, symmetric)
                assert np.array_equal(seen, expected), (index, origin, radius, light_walls)
                calls += 1
    assert calls == 3 * 25 * len(CAVES)


def test_far_views_keep_libtcod_s_single_precision_slopes() -> None:
    """Hundreds of cells out, libtcod's float slopes part from exact fractions: the
    symmetric view in its arithmetic still equals it, where the exact view differs."""
    grid = np.zeros((501, 501), dtype=np.uint8)
    grid[20, ::2] = 1
    grid[480, 1::2] = 1
    grid[::3, 30] = 1
    view = FieldOfView(grid)
    exact_differs = 0
    for origin in [(250, 250), (240, 260), (100, 400)]:
        for light_walls in (True, False):
            expected = _tcod(grid, origin, None, light_walls, True)
            assert np.array_equal(view.compute(origin, None, light_walls, True,
                                               libtcod_ties=True), expected)  # fmt: skip
            exact_differs += int((view.compute(origin, None, light_walls, True) != expected).sum())
            assert np.array_equal(view.compute(origin, None, light_walls), _tcod(
                grid, origin, None, light_walls, False))  # fmt: skip
    assert exact_differs > 0  # the case does exercise the single-precision arithmetic


def test_the_benchmark_s_1000x1000_cave_equals_libtcod_far_out() -> None:
    """Unlimited views on the benchmark's big cave, where libtcod's single precision moves
    cells that exact fractions would not: equal in both variants, origin after origin."""
    grid = cellular.generate(1000, 1000, 45, blank_rows=3, mode="synchronous", seed=5).grid
    view = FieldOfView(grid)
    exact_differs = 0
    for origin in _origins(grid, 40, 6):
        for symmetric in (False, True):
            expected = _tcod(grid, origin, None, True, symmetric)
            seen = view.compute(origin, None, True, symmetric, libtcod_ties=symmetric)
            assert np.array_equal(seen, expected), (origin, symmetric)
        exact_differs += int((view.compute(origin, None, True, True) != expected).sum())
    assert exact_differs > 0


calls = st.tuples(
    st.floats(0, 0.999),
    st.floats(0, 0.999),
    st.one_of(st.none(), st.integers(0, 30)),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=120, deadline=None)
@given(
    grid=arrays(
        np.uint8,
        st.tuples(st.integers(1, 45), st.integers(1, 45)),
        elements=st.sampled_from([0, 0, 0, 1]),
    ),  # fmt: skip
    sequence=st.lists(calls, min_size=1, max_size=8),
)
def test_every_call_equals_the_one_shot_view(grid, sequence) -> None:
    """Whatever came before, a call gives :func:`fov.visible`'s view, and :attr:`bounds`
    holds every lit cell."""
    view = FieldOfView(grid)
    height, width = grid.shape
    for fx, fy, radius, light_walls, symmetric, ties in sequence:
        origin = (int(fx * width), int(fy * height))
        seen = view.compute(origin, radius, light_walls, symmetric, libtcod_ties=ties)
        expected = fov.visible(grid, origin, radius, light_walls, symmetric, libtcod_ties=ties)
        assert np.array_equal(seen, expected)
        assert seen is view.visible
        x0, y0, x1, y1 = view.bounds
        assert 0 <= x0 <= origin[0] < x1 <= width and 0 <= y0 <= origin[1] < y1 <= height
        outside = seen.copy()
        outside[y0:y1, x0:x1] = False
        assert not outside.any()


def test_a_huge_radius_is_unlimited_and_zero_is_the_origin_alone() -> None:
    grid = CAVES[3]
    view = FieldOfView(grid)
    origin = _origins(grid, 1, 9)[0]
    unlimited = view.compute(origin, None).copy()
    for radius in (grid.shape[0] + grid.shape[1] + 1, 1 << 31, 10**40, np.int64(1 << 40)):
        assert np.array_equal(view.compute(origin, radius), unlimited)
    only = view.compute(origin, 0)
    assert only.sum() == 1 and only[origin[1], origin[0]]


def test_the_result_is_a_read_only_buffer_reused_by_the_next_call() -> None:
    grid = CAVES[0]
    view = FieldOfView(grid)
    assert view.shape == grid.shape and not view.visible.any() and view.bounds == (0, 0, 0, 0)
    a, b = _origins(grid, 2, 4)
    first = view.compute(a, 8)
    kept = first.copy()
    second = view.compute(b, 8)
    assert second is first is view.visible
    assert np.array_equal(second, fov.visible(grid, b, 8))
    assert not np.array_equal(kept, second)
    with pytest.raises(ValueError, match="read-only"):
        second[0, 0] = True
    with pytest.raises(ValueError, match="read-only"):
        view.grid[0, 0] = 1


def test_the_map_is_copied_once_and_changed_through_set_wall() -> None:
    grid = np.zeros((9, 15), dtype=np.uint8)
    grid[:, 9] = 1
    view = FieldOfView(grid)
    grid[:, 9] = 0  # the caller's array is not the view's
    assert not view.compute((3, 4), None)[:, 10:].any()
    view.set_wall(9, 4, False)  # a door opens in the wall
    opened = view.compute((3, 4), None)
    door = np.zeros_like(grid)
    door[:, 9] = 1
    door[4, 9] = 0
    assert opened[4, 14] and np.array_equal(opened, fov.visible(door, (3, 4), None))
    view.set_wall(9, 4, True)
    assert not view.compute((3, 4), None)[:, 10:].any()
    for args, name in [((15, 0, True), "x"), ((0, -1, True), "y"), ((0, 0, 1), "wall")]:
        with pytest.raises(ValueError, match=name):
            view.set_wall(*args)


@pytest.mark.parametrize(
    ("args", "kwargs", "name"),
    [
        (((3, 99), 5), {}, "origin"),
        (((-1, 0), 5), {}, "origin"),
        (((1.0, 2), 5), {}, "origin"),
        (((1, 2, 3), 5), {}, "origin"),
        (("ab", 5), {}, "origin"),
        (((True, 2), 5), {}, "origin"),
        (((1, 1), -2), {}, "radius"),
        (((1, 1), 2.5), {}, "radius"),
        (((1, 1), True), {}, "radius"),
        (((1, 1), 3, 1), {}, "light_walls"),
        (((1, 1), 3, True, "yes"), {}, "symmetric"),
        (((1, 1), 3), {"libtcod_ties": None}, "libtcod_ties"),
    ],
)
def test_bad_arguments_name_themselves_and_keep_the_last_view(args, kwargs, name: str) -> None:
    view = FieldOfView(np.zeros((5, 5), dtype=np.uint8))
    before = view.compute((2, 2), 1).copy()
    with pytest.raises(ValueError, match=name):
        view.compute(*args, **kwargs)
    assert np.array_equal(view.visible, before)


def test_other_spellings_of_the_arguments_give_the_same_view() -> None:
    grid = CAVES[1]
    view = FieldOfView(grid)
    x, y = _origins(grid, 1, 2)[0]
    expected = fov.visible(grid, (x, y), 7, True, True).copy()
    for origin in ([x, y], (np.int64(x), np.int32(y))):
        assert np.array_equal(view.compute(origin, np.int16(7), np.bool_(True), np.bool_(True)),
                              expected)  # fmt: skip


def test_maps_of_any_integer_or_bool_dtype_and_layout_are_accepted_and_checked() -> None:
    grid = CAVES[2]
    origin = _origins(grid, 1, 5)[0]
    expected = fov.visible(grid, origin, 12)
    for variant in (grid.astype(np.int64), grid.astype(bool), np.asfortranarray(grid),
                    grid.tolist()):  # fmt: skip
        assert np.array_equal(FieldOfView(variant).compute(origin, 12), expected)
    bad = grid.astype(np.int32)
    bad[0, 0] = 2  # checked once, anywhere on the map
    with pytest.raises(ValueError, match=r"only 0 \(floor\) and 1 \(wall\)"):
        FieldOfView(bad)
    with pytest.raises(ValueError, match="2-D"):
        FieldOfView(np.zeros((3, 0), dtype=np.uint8))
    with pytest.raises(ValueError, match="integers"):
        FieldOfView(grid.astype(float))


def test_the_package_exports_the_class() -> None:
    assert generators.view.FieldOfView is FieldOfView is fov.FieldOfView
    assert "FieldOfView" in fov.__all__ and "FieldOfView" in generators.view.__all__
    assert repr(FieldOfView(np.zeros((3, 4), dtype=np.uint8))) == "FieldOfView(4x3)"


FRESH = """
import json, sys
import numpy as np
from generators.maps import caves, cellular, islands
from generators.view import fov
from generators.view.field import FieldOfView
grid = np.load(sys.argv[1])
view = FieldOfView(grid)
views = [np.flatnonzero(view.compute(origin, radius, True, sym, libtcod_ties=sym)).tolist()
         for origin in ((30, 12), (5, 5), (60, 30)) for radius in (6, None)
         for sym in (False, True)]
once = [np.flatnonzero(fov.visible(grid, (30, 12), 9, symmetric=sym)).tolist()
        for sym in (False, True)]
maps = [cellular.generate(30, 20, seed=4, rule=rule).grid.tolist()
        for rule in ("4-5", "roguebasin")]
maps.append(islands.generate(30, 20, visits=900, seed=4, mode="faithful").grid.tolist())
maps.append(caves.generate(40, 30, visits=2000, seed=4, mode="faithful").grid.tolist())
print(json.dumps({"views": views, "once": once, "bounds": view.bounds, "maps": maps,
                  "jit": sorted(m for m in sys.modules
                                if m.split(".")[0] in ("numba", "llvmlite")
                                or m.startswith("generators._compiled"))}))
"""


def test_a_fresh_process_views_and_generates_maps_without_any_jit(tmp_path: Path) -> None:
    """The view and the map generators' loops are C compiled when the package is built: a
    fresh process imports neither numba, llvmlite nor ``generators._compiled``, and computes
    exactly what this process computes (views, lit window, maps)."""
    from generators.maps import islands

    grid = cellular.generate(width=70, height=40, seed=3).grid.copy()
    for x, y in ((30, 12), (5, 5), (60, 30)):
        grid[y, x] = 0
    np.save(tmp_path / "cave.npy", grid)
    done = subprocess.run([sys.executable, "-c", FRESH, str(tmp_path / "cave.npy")],
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer["jit"] == []
    view = FieldOfView(grid)
    views = [np.flatnonzero(view.compute(origin, radius, True, sym, libtcod_ties=sym)).tolist()
             for origin in ((30, 12), (5, 5), (60, 30)) for radius in (6, None)
             for sym in (False, True)]  # fmt: skip
    assert answer["views"] == views and all(views)
    assert tuple(answer["bounds"]) == view.bounds
    assert answer["once"] == [np.flatnonzero(fov.visible(grid, (30, 12), 9, symmetric=sym)).tolist()
                              for sym in (False, True)]  # fmt: skip
    maps = [cellular.generate(30, 20, seed=4, rule=rule).grid.tolist()
            for rule in ("4-5", "roguebasin")]  # fmt: skip
    maps.append(islands.generate(30, 20, visits=900, seed=4, mode="faithful").grid.tolist())
    maps.append(caves.generate(40, 30, visits=2000, seed=4, mode="faithful").grid.tolist())
    assert answer["maps"] == maps


def test_copies_and_pickles_are_independent_objects_with_the_same_view() -> None:
    import copy
    import pickle

    grid = CAVES[0]
    view = FieldOfView(grid)
    a, b = _origins(grid, 2, 8)
    seen = view.compute(a, 9).copy()
    for twin in (copy.copy(view), copy.deepcopy(view), pickle.loads(pickle.dumps(view))):
        assert np.array_equal(twin.visible, seen) and twin.bounds == view.bounds
        assert np.array_equal(twin.compute(b, 9), fov.visible(grid, b, 9))
        assert np.array_equal(view.visible, seen)  # the original is untouched
        twin.set_wall(*b, True)
        assert not view.grid[b[1], b[0]]
    del view  # a copy never reaches into the buffers of the object it came from
    assert np.array_equal(twin.compute(a, 9), fov.visible(twin.grid, a, 9))


def test_views_in_threads_equal_the_views_one_after_the_other() -> None:
    """The compiled views run with the GIL released: threads that each hold their own
    FieldOfView of one map, and one-shot views of the same (shared) map, compute exactly
    what they compute one after the other."""
    from concurrent.futures import ThreadPoolExecutor

    grid = CAVES[0]
    origins = _origins(grid, 40, 13)
    calls = [(origin, radius, sym) for origin in origins for radius in (None, 12)
             for sym in (False, True)]  # fmt: skip

    def walk(_: int) -> list[list[int]]:
        view = FieldOfView(grid)
        seen = []
        for origin, radius, sym in calls:
            seen.append(np.flatnonzero(view.compute(origin, radius, True, sym)).tolist())
            seen.append(np.flatnonzero(fov.visible(grid, origin, radius, True, sym)).tolist())
        return seen

    expected = walk(0)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(walk, range(8)))
    assert all(result == expected for result in results)
