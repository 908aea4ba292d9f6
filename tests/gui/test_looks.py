"""Looks that issue 16 found wrong: a one-row cancel confirmation hid its row behind a scroll
bar, dialog buttons showed no keyboard focus, dark toolbar icons looked disabled."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QImage
from PySide6.QtWidgets import QApplication

from postproject import Production
from postproject_gui.dialogs.cancel_dialog import CancelDialog, CancelPlan
from postproject_gui.look.theme import ThemeManager, ThemeMode
from postproject_gui.services.types import JobRow
from tests.gui.conftest import WindowFactory
from tests.gui.helpers import ProductionBuilder


def _rows(production: Production, count: int) -> list[JobRow]:
    return [JobRow(j, "A001_C002") for j in production.jobs(limit=count).items]


def test_a_one_row_cancel_confirmation_shows_its_row_without_a_scroll_bar(
    qtbot: Any, builder: ProductionBuilder
) -> None:
    builder.request(30)
    now = builder.production.clock.now()
    ThemeManager(ThemeMode.LIGHT).apply()
    for count in (1, 3):
        dialog = CancelDialog(CancelPlan.of(_rows(builder.production, count), now), now)
        qtbot.addWidget(dialog)
        dialog.show()
        QApplication.processEvents()
        table = dialog.table
        assert not table.verticalScrollBar().isVisible()
        last = table.visualRect(dialog.model.index(count - 1, 0))
        assert last.top() >= 0 and last.bottom() < table.viewport().height()
        dialog.close()
    many = CancelDialog(CancelPlan.of(_rows(builder.production, 30), now), now)
    qtbot.addWidget(many)
    many.show()
    QApplication.processEvents()
    assert many.table.verticalScrollBar().isVisible()  # a long list scrolls
    many.close()


def _grab(widget: Any) -> QImage:
    QApplication.processEvents()
    return widget.grab().toImage()


def test_dialog_buttons_show_keyboard_focus_in_both_themes(qtbot: Any, builder: ProductionBuilder) -> None:
    builder.request(1)
    now = builder.production.clock.now()
    for mode in (ThemeMode.LIGHT, ThemeMode.DARK):
        ThemeManager(mode).apply()
        dialog = CancelDialog(CancelPlan.of(_rows(builder.production, 1), now), now)
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitExposed(dialog)
        dialog.activateWindow()
        for button in (dialog.keep, dialog.confirm):
            dialog.setFocus()
            unfocused = _grab(button)
            button.setFocus(Qt.FocusReason.TabFocusReason)
            qtbot.waitUntil(button.hasFocus)
            assert _grab(button) != unfocused, (mode, button.text())
        dialog.close()
    ThemeManager(ThemeMode.LIGHT).apply()


def _brightness(icon: QIcon, mode: QIcon.Mode) -> float:
    image = icon.pixmap(20, 20, mode).toImage()
    inked = [
        QColor(image.pixel(x, y))
        for x in range(image.width())
        for y in range(image.height())
        if QColor.fromRgba(image.pixel(x, y)).alpha() > 200
    ]
    assert inked
    return sum(c.lightnessF() for c in inked) / len(inked)


def test_dark_toolbar_icons_are_light_and_follow_a_theme_switch(
    make_window: WindowFactory, builder: ProductionBuilder
) -> None:
    window = make_window(builder.production.path, builder.production.clock)
    window.theme.set_mode(ThemeMode.DARK)
    for action in (window.actions_.open, window.actions_.refresh, window.actions_.stuck, window.jobs.request):
        normal = _brightness(action.icon(), QIcon.Mode.Normal)
        assert normal > 0.75, action.text()  # light ink on the dark toolbar
        disabled = action.icon().pixmap(20, 20, QIcon.Mode.Disabled).toImage()
        assert disabled != action.icon().pixmap(20, 20, QIcon.Mode.Normal).toImage()  # and told apart
    window.theme.set_mode(ThemeMode.LIGHT)
    assert _brightness(window.actions_.open.icon(), QIcon.Mode.Normal) < 0.4  # dark ink on light
