"""Chinese text in matplotlib plots: a CJK font as the fallback after DejaVu Sans.

DejaVu Sans, matplotlib's default, has no Chinese characters (they show as boxes). Since matplotlib 3.6
``font.family`` may list several fonts, each character drawn with the first that has it
(https://matplotlib.org/stable/users/prev_whats_new/whats_new_3.6.0.html#font-fallback), so
``use_chinese_font()`` puts DejaVu Sans first (Latin text looks as in the English notebooks) and the first
installed font of ``CHINESE_FONTS`` second. With none installed it warns once and says what to install.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Sequence

from course_utils.core.i18n import translator

_ = translator("course")

LATIN_FONT = "DejaVu Sans"  # ships with matplotlib: always there
# Sans-serif fonts with Simplified Chinese, most wanted first; the names matplotlib reads from the font files.
CHINESE_FONTS = (
    "Noto Sans CJK SC",  # Debian/Ubuntu fonts-noto-cjk (some builds name the collection by its first face: JP)
    "Source Han Sans SC",  # Adobe's name for the same design
    "WenQuanYi Micro Hei",  # Debian/Ubuntu fonts-wqy-microhei (small: 5 MB installed)
    "WenQuanYi Zen Hei",  # Debian/Ubuntu fonts-wqy-zenhei
    "Microsoft YaHei",  # Windows
    "SimHei",  # Windows
    "PingFang SC",  # macOS
    "Heiti SC",  # older macOS
    "Hiragino Sans GB",  # macOS
    "Noto Sans CJK JP",  # fonts-noto-cjk's collection as matplotlib names it: it has the Chinese characters too
    "Noto Sans SC",  # Google Fonts' Simplified Chinese Noto
    "Arial Unicode MS",
)


def _rescan() -> None:
    """Add system fonts installed after matplotlib built its font cache (it reads the cache, not the disk)."""
    from matplotlib import font_manager

    known = {font.fname for font in font_manager.fontManager.ttflist}
    for path in (path for path in font_manager.findSystemFonts() if path not in known):
        with contextlib.suppress(OSError, RuntimeError, ValueError):  # a damaged or unreadable font file: skip it
            font_manager.fontManager.addfont(path)


def find_chinese_font(candidates: Sequence[str] = CHINESE_FONTS) -> str | None:
    """The first of ``candidates`` that is installed, or None."""
    from matplotlib import font_manager

    for attempt in range(2):
        names = {font.name for font in font_manager.fontManager.ttflist}
        found = next((name for name in candidates if name in names), None)
        if found is not None or attempt:
            return found
        _rescan()
    return None


def use_chinese_font(candidates: Sequence[str] = CHINESE_FONTS) -> str | None:
    """Draw Chinese characters in plots with the first installed font of ``candidates``; its name.
    ``font.family``: DejaVu Sans, then that font; ``axes.unicode_minus`` False (the ASCII minus, in every font).
    None installed: one warning that says what to install, and None.
    """
    import matplotlib

    found = find_chinese_font(candidates)
    if found is None:
        warnings.warn(
            _("No Chinese font found for plots: Chinese text in figures will show as empty boxes. "
              "Install one, then run the setup cell again. Debian or Ubuntu (also Colab and Kaggle): "
              "sudo apt-get install fonts-noto-cjk (or the smaller fonts-wqy-microhei). "
              "Windows and macOS have one built in (Microsoft YaHei, PingFang SC). Fonts looked for: {fonts}.")
            .format(fonts=", ".join(candidates)),
            UserWarning,
            stacklevel=2,
        )
        return None
    matplotlib.rcParams["font.family"] = [LATIN_FONT, found]
    matplotlib.rcParams["axes.unicode_minus"] = False
    return found
