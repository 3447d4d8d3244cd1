"""The collector pauses and freezes the bulk paths use (``entityworks._gcpause``): each is
undone when its block ends, however it ends, and a heap the caller froze is left alone."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from entityworks._gcpause import frozen_heap, paused_gc


def test_paused_gc_restores_the_collector_even_on_error():
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), paused_gc():
        assert not gc.isenabled()
        with paused_gc():  # re-entrant: the inner block leaves it paused
            pass
        assert not gc.isenabled()
        1 / 0  # noqa: B018
    assert gc.isenabled()


def _frozen(objs: list[object]) -> bool:
    """Every one of ``objs`` is in the permanent generation: none in the collector's
    generations (counting frozen objects would not do: another thread may free one)."""
    tracked = {id(o) for o in gc.get_objects()}
    return not any(id(o) in tracked for o in objs)


def test_frozen_heap_freezes_then_unfreezes_at_the_outermost_block():
    before = gc.get_freeze_count()
    assert before == 0, "the test process froze its heap"
    with frozen_heap() as freeze_more:
        assert gc.get_freeze_count() > 0
        made = [[i] for i in range(1000)]  # tracked lists made after the freeze
        assert not _frozen(made)
        with frozen_heap():
            assert _frozen(made)
        assert _frozen(made)  # the inner block keeps it
        more = [[i] for i in range(1000)]
        assert not _frozen(more)
        freeze_more()
        assert _frozen(more)
    assert gc.get_freeze_count() == 0
    assert not _frozen(made) and not _frozen(more)


def test_frozen_heap_unfreezes_on_error():
    with pytest.raises(RuntimeError), frozen_heap():
        raise RuntimeError
    assert gc.get_freeze_count() == 0


def test_a_heap_the_process_froze_itself_is_left_alone():
    code = (
        "import gc\n"
        "from entityworks._gcpause import frozen_heap\n"
        "gc.freeze(); mine = gc.get_freeze_count()\n"
        "with frozen_heap() as more:\n"
        "    more()\n"
        "    inside = gc.get_freeze_count()\n"
        "print(mine == inside == gc.get_freeze_count())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
