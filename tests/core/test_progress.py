"""The command progress bar: redrawn on a terminal, periodic lines otherwise."""

from __future__ import annotations

from io import StringIO

from core.progress import ProgressBar


def test_a_terminal_gets_one_redrawn_line():
    out = StringIO()
    bar = ProgressBar(out, 4, unit="groups", width=4, tty=True)
    for i in range(1, 5):
        bar.update(i, f"g{i}")
    bar.finish()
    text = out.getvalue()
    assert text.count("\r") == 4 and text.endswith("\n") and text.count("\n") == 1
    assert "[####] 4/4 groups g4" in text


def test_a_log_gets_the_first_and_last_lines_within_the_interval():
    out = StringIO()
    bar = ProgressBar(out, None, unit="files", interval=3600)
    for i in range(1, 1001):
        bar.update(i)
    bar.finish()
    assert out.getvalue().splitlines() == ["1 files", "1,000 files"]


def test_a_known_total_prints_its_end_at_once():
    out = StringIO()
    bar = ProgressBar(out, 3, width=3, interval=3600)
    for i in range(1, 4):
        bar.update(i)
    bar.finish()
    assert out.getvalue().splitlines() == ["[#..] 1/3", "[###] 3/3"]
