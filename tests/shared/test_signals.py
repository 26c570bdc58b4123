"""toolkit.signals: the stop record a server command waits on, and the seam through which
a program running one in a thread of its own stops it."""

from __future__ import annotations

import signal
import threading

from toolkit import signals


def test_a_command_in_a_thread_stops_when_its_record_is_asked_to() -> None:
    record = signals.StopSignals()
    before = signals.current()
    waited = threading.Event()

    def command() -> None:
        with signals.stop_signals() as stop:  # what `toolkit watch` and `sandbox` wait on
            assert stop is record
            stop.wait()
            waited.set()

    with signals.recorded_by(record):
        assert signals.current() is record
        thread = threading.Thread(target=command)
        thread.start()
        record.request(signal.SIGTERM)
        thread.join(10)
        assert not thread.is_alive()
    assert waited.is_set() and record.received == [signal.SIGTERM]
    assert signals.current() is before  # the process's record put back
