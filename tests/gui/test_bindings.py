"""The Qt bindings keep Python's reference counts straight (PySide6 6.12.0 did not on 3.11)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    fired = Signal(int)


def test_signal_emit_and_empty_data_do_not_leak_singleton_references(qapp: object) -> None:
    emitter = _Emitter()
    emitter.fired.connect(lambda value: None)
    before = sys.getrefcount(True), sys.getrefcount(False), sys.getrefcount(None)
    for value in range(100):  # few enough not to crash a broken binding, enough to show
        emitter.fired.emit(value)
    after = sys.getrefcount(True), sys.getrefcount(False), sys.getrefcount(None)
    assert all(a >= b - 5 for a, b in zip(after, before, strict=True)), (before, after)
