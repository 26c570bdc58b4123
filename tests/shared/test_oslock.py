"""The one OS file lock: bounded waits, shared and exclusive holds, never a lock reported
that was not taken."""

from __future__ import annotations

import os

import pytest

from toolkit import oslock


@pytest.fixture
def two_opens(tmp_path):
    """Two open file descriptions of one lock file: they lock against each other, as two
    processes would."""
    path = tmp_path / "some.lock"
    first, second = oslock.open_lock_file(path), oslock.open_lock_file(path)
    yield first, second
    os.close(first)
    os.close(second)


def test_a_busy_lock_is_waited_for_a_bounded_time_then_refused(two_opens):
    first, second = two_opens
    assert oslock.try_lock(first)
    now = [0.0]
    busy: list[str] = []

    def sleep(seconds: float) -> None:
        now[0] += seconds

    taken = oslock.lock_within(
        second, 1.0, poll=0.3, sleep=sleep, clock=lambda: now[0], on_busy=lambda: busy.append("")
    )
    assert not taken
    assert busy == [""]  # told once
    assert now[0] == pytest.approx(1.0)  # waited the whole bound, in steps of `poll`
    oslock.unlock(first)
    assert oslock.lock_within(second, 1.0, poll=0.3, sleep=sleep, clock=lambda: now[0])
    assert not oslock.try_lock(first)


@pytest.mark.skipif(not oslock.RENAME_WHILE_LOCKED, reason="Windows has exclusive locks only")
def test_shared_holds_exclude_an_exclusive_one_only(two_opens):
    first, second = two_opens
    with oslock.held(first, shared=True):
        assert oslock.try_lock(second, shared=True)
        oslock.unlock(second)
        assert not oslock.try_lock(second)
    assert oslock.try_lock(second)
