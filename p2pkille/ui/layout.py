"""Drawing text in a window: lines of styled fragments, paragraphs wrapped to a width.

The screens render into :data:`Line` lists (``(style, text)`` fragments, the style a
prompt-toolkit class); nothing here reads a terminal.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MIN_HEIGHT", "MIN_WIDTH", "Fragment", "Line", "para", "wrap"]

MIN_WIDTH: Final = 72
MIN_HEIGHT: Final = 24

Fragment = tuple[str, str]
Line = list[Fragment]


def para(style: str, paragraph: str, width: int, hang: int = 0) -> list[Line]:
    """One styled paragraph wrapped to the window (continuation lines indented)."""
    return [[(style, line)] for line in wrap(paragraph, width - 1, hang)] or [[(style, "")]]


def wrap(paragraph: str, width: int, hang: int = 0, *, keep_indent: bool = False) -> list[str]:
    """``paragraph`` in lines of at most ``width`` characters, words kept whole (a word
    longer than a line is broken); lines after the first are indented by ``hang``. With
    ``keep_indent`` the first line keeps the paragraph's leading spaces."""
    width = max(width, hang + 1, 1)
    line = paragraph[:len(paragraph) - len(paragraph.lstrip(" "))] if keep_indent else ""
    lines: list[str] = []
    for whole in paragraph.split():
        sep = " " if line.strip() else ""
        if len(line) + len(sep) + len(whole) <= width:
            line += sep + whole
            continue
        if line.strip():
            lines.append(line)
            line = " " * hang
        word = whole
        while len(line) + len(word) > width:
            cut = width - len(line)
            lines.append(line + word[:cut])
            word, line = word[cut:], " " * hang
        line += word
    if line.strip():
        lines.append(line)
    return lines
