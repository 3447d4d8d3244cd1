"""Field of view, cross-checked against libtcod (tcod is a test-only oracle)."""

from __future__ import annotations

import numpy as np
import pytest
import tcod.constants
import tcod.map
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from generators.maps import caves, cellular
from generators.view import fov
from tests.generators.view import fov_reference


def _maps() -> list[np.ndarray]:
    rng = np.random.default_rng(2024)
    maps = [caves.generate(width=70, height=50, seed=s, mode="fast").grid for s in range(4)]
    maps += [cellular.generate(width=60, height=40, seed=s).grid for s in range(3)]
    maps += [(rng.random((45, 55)) < 0.3).astype(np.uint8) for _ in range(3)]
    return maps


MAPS = _maps()


def _origins(grid: np.ndarray, count: int, seed: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    floors = np.argwhere(grid == 0)
    picks = floors[rng.choice(len(floors), size=min(count, len(floors)), replace=False)]
    return [(int(x), int(y)) for y, x in picks]


def _disc(shape: tuple[int, int], origin: tuple[int, int], radius: int) -> np.ndarray:
    ys, xs = np.indices(shape)
    return (xs - origin[0]) ** 2 + (ys - origin[1]) ** 2 <= radius * radius


def test_plain_variant_equals_tcod_fov_shadow() -> None:
    calls = 0
    for index, grid in enumerate(MAPS):
        for origin in _origins(grid, 12, index):
            for radius in (1, 4, 9, 17):
                for light_walls in (True, False):
                    ours = fov.visible(grid, origin, radius, light_walls=light_walls)
                    theirs = tcod.map.compute_fov(
                        grid == 0,
                        (origin[1], origin[0]),
                        radius=radius,
                        light_walls=light_walls,
                        algorithm=tcod.constants.FOV_SHADOW,
                    )
                    assert np.array_equal(ours, theirs), (index, origin, radius, light_walls)
                    calls += 1
    assert calls > 800


def test_unlimited_radius_and_map_corners_equal_tcod() -> None:
    grid = MAPS[-1].copy()
    height, width = grid.shape
    for origin in [(0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1), (7, 3)]:
        grid[origin[1], origin[0]] = 0
        theirs = tcod.map.compute_fov(
            grid == 0, (origin[1], origin[0]), radius=0, algorithm=tcod.constants.FOV_SHADOW
        )
        assert np.array_equal(fov.visible(grid, origin, None), theirs)


def _tcod_symmetric(grid: np.ndarray, origin: tuple[int, int], radius: int, light_walls: bool):
    # libtcod cuts its symmetric result at distance < radius, FOV_SHADOW (and we) at
    # <= radius: compare with libtcod's unlimited view clipped to our disc.
    seen = tcod.map.compute_fov(
        grid == 0,
        (origin[1], origin[0]),
        radius=0,
        light_walls=light_walls,
        algorithm=tcod.constants.FOV_SYMMETRIC_SHADOWCAST,
    )
    return seen & _disc(grid.shape, origin, radius)


def test_symmetric_variant_matches_tcod_up_to_its_rounding() -> None:
    """Exact with libtcod's tie rounding; without it the few differences are ties only."""
    differing = seen = 0
    for index, grid in enumerate(MAPS):
        for origin in _origins(grid, 10, 100 + index):
            for radius in (3, 8, 15):
                for light_walls in (True, False):
                    theirs = _tcod_symmetric(grid, origin, radius, light_walls)
                    tied = fov.visible(grid, origin, radius, light_walls, True, libtcod_ties=True)
                    assert np.array_equal(tied, theirs), (index, origin, radius)
                    ours = fov.visible(grid, origin, radius, light_walls, True)
                    differing += int((ours != theirs).sum())
                    seen += int(theirs.sum())
    # libtcod rounds a bound like -2.5 away from zero (low) or towards it (high); the
    # exact rounding changes a few per cent of the cells at most.
    assert differing < 0.05 * seen


def test_the_tie_rounding_is_the_whole_difference() -> None:
    """Some views do differ from libtcod, and every one of them is fixed by its rounding."""
    changed = 0
    for index, grid in enumerate(MAPS):
        for origin in _origins(grid, 10, 200 + index):
            exact = fov.visible(grid, origin, None, symmetric=True)
            tied = fov.visible(grid, origin, None, symmetric=True, libtcod_ties=True)
            if not np.array_equal(exact, tied):
                changed += 1
                radius = max(grid.shape) * 2
                assert np.array_equal(tied, _tcod_symmetric(grid, origin, radius, True))
    assert changed > 0


small_maps = arrays(
    np.uint8, st.tuples(st.integers(2, 11), st.integers(2, 11)), elements=st.integers(0, 1)
)


@settings(max_examples=60, deadline=None)
@given(grid=small_maps, radius=st.one_of(st.none(), st.integers(1, 8)))
def test_symmetric_variant_is_symmetric_between_floor_cells(grid, radius) -> None:
    floors = [(int(x), int(y)) for y, x in np.argwhere(grid == 0)]
    views = {p: fov.visible(grid, p, radius, symmetric=True) for p in floors}
    for a in floors:
        for b in floors:
            assert views[a][b[1], b[0]] == views[b][a[1], a[0]], (a, b)


def test_open_ground_shows_exactly_the_disc() -> None:
    grid = np.zeros((31, 31), dtype=np.uint8)
    for symmetric in (False, True):
        for radius in (0, 1, 5, 12):
            seen = fov.visible(grid, (15, 15), radius, symmetric=symmetric)
            assert np.array_equal(seen, _disc(grid.shape, (15, 15), radius))


def test_walls_cast_shadows_and_are_lit_when_reached() -> None:
    grid = np.zeros((9, 15), dtype=np.uint8)
    grid[:, 9] = 1  # a wall across the room
    for symmetric in (False, True):
        seen = fov.visible(grid, (3, 4), None, symmetric=symmetric)
        assert seen[:, :9].all()  # the whole near side
        assert seen[4, 9]  # the wall straight ahead is lit
        assert not seen[:, 10:].any()  # nothing behind it
        dark = fov.visible(grid, (3, 4), None, light_walls=False, symmetric=symmetric)
        assert not dark[grid == 1].any()
        assert np.array_equal(dark, seen & (grid == 0))


def test_radius_bounds_the_view_and_origin_is_always_seen() -> None:
    grid = MAPS[0]
    for origin in _origins(grid, 20, 7):
        for symmetric in (False, True):
            seen = fov.visible(grid, origin, 6, symmetric=symmetric)
            assert seen[origin[1], origin[0]]
            assert not (seen & ~_disc(grid.shape, origin, 6)).any()


def test_large_map_window_gives_the_same_answer_as_a_small_map() -> None:
    """Embedding a map in solid rock changes nothing inside it (off-map reads as unseen
    space, rock as walls: neither lets light through)."""
    small = MAPS[1]
    big = np.ones((400, 500), dtype=np.uint8)
    big[100 : 100 + small.shape[0], 200 : 200 + small.shape[1]] = small
    for x, y in _origins(small, 10, 3):
        near = fov.visible(small, (x, y), 9)
        far = fov.visible(big, (x + 200, y + 100), 9)
        assert np.array_equal(far[100 : 100 + small.shape[0], 200 : 200 + small.shape[1]], near)
        outside = far.copy()
        outside[100 : 100 + small.shape[0], 200 : 200 + small.shape[1]] = False
        assert big[outside].all()  # only rock around the embedded map can be lit


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (((3, 99), 5), "origin"),
        (((-1, 0), 5), "origin"),
        (((1.0, 2), 5), "origin"),
        (((1, 1), -2), "radius"),
        (((1, 1), 2.5), "radius"),
    ],
)
def test_bad_arguments_name_themselves(args, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        fov.visible(np.zeros((5, 5), dtype=np.uint8), *args)


# --- the compiled views: window results, dtypes, value checks, deep stacks --------------------


def test_window_view_is_the_full_view_cut_to_the_window() -> None:
    for index, grid in enumerate(MAPS[:6]):
        for origin in _origins(grid, 6, 300 + index):
            for radius in (0, 3, 11, None):
                for symmetric in (False, True):
                    full = fov.visible(grid, origin, radius, symmetric=symmetric)
                    mask, (x0, y0) = fov.visible_window(grid, origin, radius, symmetric=symmetric)
                    reach = max(grid.shape) if radius is None else radius
                    assert (x0, y0) == (max(0, origin[0] - reach), max(0, origin[1] - reach))
                    h, w = mask.shape
                    assert np.array_equal(full[y0 : y0 + h, x0 : x0 + w], mask)
                    outside = full.copy()
                    outside[y0 : y0 + h, x0 : x0 + w] = False
                    assert not outside.any()


@pytest.mark.parametrize("symmetric", [False, True])
def test_any_integer_dtype_bool_and_strided_grids_give_the_same_view(symmetric: bool) -> None:
    grid = MAPS[2]
    wide = np.zeros((grid.shape[0], 2 * grid.shape[1]), dtype=np.uint8)
    wide[:, ::2] = grid  # a strided view of the same map
    for origin in _origins(grid, 8, 17):
        for radius in (6, None):
            expected = fov.visible(grid, origin, radius, symmetric=symmetric)
            for variant in (
                grid.astype(np.int64),
                grid.astype(np.int8),
                grid.astype(bool),
                wide[:, ::2],
                np.asfortranarray(grid),
                grid.tolist(),
            ):
                assert np.array_equal(fov.visible(variant, origin, radius, symmetric=symmetric),
                                      expected)  # fmt: skip


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("dtype", [np.uint8, np.int32])
def test_values_other_than_0_and_1_in_the_window_are_refused(symmetric: bool, dtype) -> None:
    grid = np.zeros((300, 300), dtype=dtype)
    grid[150, 160] = 2  # inside both small and large windows around (150, 150)
    for radius in (12, 100, None):  # compiled check, NumPy check, whole map
        with pytest.raises(ValueError, match=r"only 0 \(floor\) and 1 \(wall\)"):
            fov.visible(grid, (150, 150), radius, symmetric=symmetric)
        with pytest.raises(ValueError, match=r"only 0 \(floor\) and 1 \(wall\)"):
            fov.visible_window(grid, (150, 150), radius, symmetric=symmetric)
    grid[150, 160] = 0
    grid[10, 10] = 7  # outside the window of radius 12: never read, so never refused
    assert fov.visible(grid, (150, 150), 12, symmetric=symmetric).sum() > 400
    with pytest.raises(ValueError, match="integers"):
        fov.visible(grid.astype(float), (150, 150), 3)


def test_a_row_of_alternating_pillars_fans_the_view_into_many_wedges() -> None:
    """Hundreds of pending wedges: more than the compiled stack's first allocation."""
    grid = np.zeros((501, 501), dtype=np.uint8)
    grid[20, ::2] = 1
    grid[480, 1::2] = 1
    grid[::3, 30] = 1
    for origin in [(250, 250), (240, 260), (100, 400)]:
        for light_walls in (True, False):
            plain = tcod.map.compute_fov(grid == 0, (origin[1], origin[0]), radius=0,
                                         light_walls=light_walls,
                                         algorithm=tcod.constants.FOV_SHADOW)  # fmt: skip
            assert np.array_equal(fov.visible(grid, origin, None, light_walls), plain)
            # this far out libtcod's single-precision slopes part from exact fractions: the
            # view in its arithmetic equals it, and both views equal the interpreter's
            symmetric = tcod.map.compute_fov(
                grid == 0,
                (origin[1], origin[0]),
                radius=0,
                light_walls=light_walls,
                algorithm=tcod.constants.FOV_SYMMETRIC_SHADOWCAST,
            )
            assert np.array_equal(
                fov.visible(grid, origin, None, light_walls, True, libtcod_ties=True), symmetric
            )
            for ties in (False, True):
                assert np.array_equal(
                    fov.visible(grid, origin, None, light_walls, True, libtcod_ties=ties),
                    fov_reference.visible(grid, origin, None, light_walls, True, ties),
                )


@settings(max_examples=150, deadline=None)
@given(
    grid=arrays(
        np.uint8,
        st.tuples(st.integers(1, 40), st.integers(1, 40)),
        elements=st.sampled_from([0, 0, 0, 1]),
    ),  # fmt: skip
    spot=st.tuples(st.floats(0, 0.999), st.floats(0, 0.999)),
    radius=st.one_of(st.none(), st.integers(0, 30)),
    light_walls=st.booleans(),
    symmetric=st.booleans(),
    ties=st.booleans(),
)
def test_compiled_views_equal_the_interpreter_reference(
    grid, spot, radius, light_walls, symmetric, ties
) -> None:
    origin = (int(spot[0] * grid.shape[1]), int(spot[1] * grid.shape[0]))
    ours = fov.visible(grid, origin, radius, light_walls, symmetric, libtcod_ties=ties)
    assert np.array_equal(
        ours, fov_reference.visible(grid, origin, radius, light_walls, symmetric, ties)
    )
