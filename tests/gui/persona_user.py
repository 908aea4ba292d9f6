"""A user at the monitor's window, counted: every method is one action as a person makes it
(a mouse click on what is on screen, one field typed, a key press or shortcut), delivered
through QTest to the widget that is really under the pointer or holds the keyboard focus.
Nothing here calls into the window to make things happen; the tests read the window and the
store only to check what happened (issue 26: the persona tasks' action counts)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPoint, QRect, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QDialog,
    QMenu,
    QWidget,
)

LEFT, RIGHT = Qt.MouseButton.LeftButton, Qt.MouseButton.RightButton
NO_KEYS = Qt.KeyboardModifier.NoModifier


class User:
    """``actions`` lists what the user did, one entry per action, in order."""

    def __init__(self, window: QWidget) -> None:
        self.window = window
        self.actions: list[str] = []
        self.failures: list[str] = []  # what a dialog answer could not find (checked by done())
        self.waiting: list[str] = []  # dialog and menu answers not given yet (checked by done())

    @property
    def count(self) -> int:
        return len(self.actions)

    def _do(self, what: str, act: Callable[[], None]) -> None:
        self.actions.append(what)  # before: a dialog it opens is answered inside ``act``
        act()
        QApplication.processEvents()

    # --- the mouse -----------------------------------------------------------------------

    def click(
        self,
        widget: QWidget,
        what: str,
        pos: QPoint | None = None,
        *,
        button: Qt.MouseButton = LEFT,
        double: bool = False,
        keys: Qt.KeyboardModifier = NO_KEYS,
    ) -> None:
        """Click ``widget`` at ``pos`` (its middle by default): the click goes to whatever is on
        screen at that point, which must be ``widget`` (or a child of it) and visible."""
        point = widget.rect().center() if pos is None else pos
        target, local = _under(widget, point)
        click = QTest.mouseDClick if double else QTest.mouseClick

        def act() -> None:
            click(target, button, keys, local)
            if button == RIGHT:  # what the window system sends with a right click (QTest does not)
                menu = QContextMenuEvent(
                    QContextMenuEvent.Reason.Mouse, local, target.mapToGlobal(local), keys
                )
                QApplication.sendEvent(target, menu)

        self._do(what, act)

    def click_cell(
        self,
        view: QAbstractItemView,
        index: QModelIndex,
        what: str,
        *,
        button: Qt.MouseButton = LEFT,
        double: bool = False,
        keys: Qt.KeyboardModifier = NO_KEYS,
    ) -> None:
        """Click a cell of a table at its place on screen (it must be in view, not scrolled away)."""
        rect = view.visualRect(index)
        assert rect.isValid() and view.viewport().rect().contains(rect.center()), f"{what}: not in view"
        self.click(view.viewport(), what, rect.center(), button=button, double=double, keys=keys)

    def click_row(self, view: QAbstractItemView, row: int, column: int, what: str, **kw: Any) -> None:
        model: QAbstractItemModel = view.model()
        self.click_cell(view, model.index(row, column), what, **kw)

    # --- the keyboard --------------------------------------------------------------------

    def type(self, text: str, what: str) -> None:
        """Type ``text`` into the field that has the keyboard focus (one action per field)."""
        target = QApplication.focusWidget()
        assert target is not None and target.isVisible(), f"{what}: no field has the focus"
        self._do(what, lambda: QTest.keyClicks(target, text))

    def press(self, key: Qt.Key, what: str, keys: Qt.KeyboardModifier = NO_KEYS) -> None:
        """A key or a shortcut, to the widget with the keyboard focus (else the window)."""
        target = QApplication.focusWidget() or self.window
        self._do(what, lambda: QTest.keyClick(target, key, keys))

    # --- what a click or key opens -------------------------------------------------------

    def answer(self, button: str, what: str) -> None:
        """The next modal dialog: click its button ``button`` when it shows (as the user does
        once it opens; the action that opens it blocks in the dialog's own event loop)."""
        self._when(lambda: _modal(), lambda dialog: self._click_button(dialog, button, what), what)

    def choose(self, entry: str, what: str) -> None:
        """The next popup menu: click its entry ``entry`` (found by its text) where it shows."""
        self._when(lambda: _popup(), lambda menu: self._click_entry(menu, entry, what), what)

    def _when(self, find: Callable[[], Any], then: Callable[[Any], None], what: str) -> None:
        deadline = time.monotonic() + 20
        self.waiting.append(what)

        def poll() -> None:
            found = find()
            if found is not None:
                self.waiting.remove(what)
                then(found)
            elif time.monotonic() < deadline:
                QTimer.singleShot(20, self.window, poll)
            else:
                self.waiting.remove(what)
                self.failures.append(f"{what}: it never showed")

        QTimer.singleShot(0, self.window, poll)  # dropped with the window

    def _click_button(self, dialog: QDialog, text: str, what: str) -> None:
        buttons = [b for b in dialog.findChildren(QAbstractButton) if b.isVisible() and b.text() == text]
        if len(buttons) != 1:
            shown = [b.text() for b in dialog.findChildren(QAbstractButton) if b.isVisible()]
            self.failures.append(f"{what}: no one button {text!r} in {shown}")
            dialog.reject()
            return
        self.actions.append(what)
        QTest.mouseClick(buttons[0], LEFT, NO_KEYS, buttons[0].rect().center())

    def _click_entry(self, menu: QMenu, text: str, what: str) -> None:
        entries = [a for a in menu.actions() if a.text().replace("&", "") == text]
        if len(entries) != 1 or not entries[0].isEnabled():
            self.failures.append(f"{what}: no enabled entry {text!r} in {[a.text() for a in menu.actions()]}")
            menu.close()
            return
        self.actions.append(what)
        QTest.mouseClick(menu, LEFT, NO_KEYS, menu.actionGeometry(entries[0]).center())

    def done(self) -> list[str]:
        """The actions, once every dialog and menu answer found what it was told to click."""
        assert not self.failures and not self.waiting, (self.failures, self.waiting)
        return self.actions


def _modal() -> QDialog | None:
    widget = QApplication.activeModalWidget()
    return widget if isinstance(widget, QDialog) and widget.isVisible() else None


def _popup() -> QMenu | None:
    widget = QApplication.activePopupWidget()
    return widget if isinstance(widget, QMenu) and widget.isVisible() else None


def in_view(widget: QWidget) -> QRect:
    """The part of ``widget`` on screen: its rectangle clipped by every parent's (a scroll
    area's viewport among them), in its own coordinates; empty when it is not shown."""
    if not (shiboken6.isValid(widget) and widget.isVisible()):
        return QRect()
    shown, parent, window = widget.rect(), widget, widget.window()
    while parent is not window:
        parent = parent.parentWidget()
        shown = shown.intersected(parent.rect().translated(widget.mapFrom(parent, QPoint(0, 0))))
    return shown


def _under(widget: QWidget, point: QPoint) -> tuple[QWidget, QPoint]:
    """The widget on screen at ``point`` of ``widget``: ``widget`` or one of its children, never
    a widget covering it or one scrolled or clipped out of view."""
    name = widget.objectName() or type(widget).__name__
    assert in_view(widget).contains(point), f"{name}: {point} is not on screen"
    window = widget.window()
    top = window.childAt(widget.mapTo(window, point)) or window
    assert top is widget or widget.isAncestorOf(top), f"{name} is covered by {top} at {point}"
    return top, top.mapFrom(window, widget.mapTo(window, point))
