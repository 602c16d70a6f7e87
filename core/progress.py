"""Progress of long work: one tqdm bar on stderr.

Runners and long API calls report ``progress(fraction, message)`` (fraction in [0, 1]);
:func:`bar` turns that protocol into a tqdm progress bar (tqdm: a well-kept library that
handles terminal widths, rates and ETA, rather than a bar of our own). The bar is drawn
only on a terminal (a log or a pipe gets the result lines only) and not at all with
``hystmech run --quiet``. The API's long calls take ``progress=`` as a bool (True: this
bar) or a callable (:func:`resolve`).
"""
from __future__ import annotations

import os
import sys
from typing import Callable

STEPS = 1000        # resolution of the bar (fractions are shown to 0.1 %)
FALLBACK_COLUMNS = 100   # width drawn on a terminal that reports none (and no $COLUMNS)
FALLBACK_LINES = 24      # its height: tqdm hides a bar below a terminal's last line
_OPEN: list = []    # bars not closed yet (closed before an error line is written)


def bar(stream=None, *, quiet: bool = False, desc: str = "") -> Callable[[float, str], None]:
    """A ``progress(fraction, message)`` callable drawing a tqdm bar on ``stream``
    (default stderr); silent when ``quiet`` or when the stream is not a terminal. The
    bar closes itself at fraction 1."""
    stream = stream or sys.stderr
    live = not quiet and bool(getattr(stream, "isatty", lambda: False)())
    state = {"bar": None}

    def progress(fraction: float, message: str = "") -> None:
        if not live:
            return
        b = state["bar"]
        if b is None:
            from tqdm import tqdm

            b = state["bar"] = tqdm(total=STEPS, file=stream, desc=desc, leave=True,
                                    **_width(stream), mininterval=0.5,
                                    bar_format="{l_bar}{bar}| {percentage:5.1f}% "
                                               "[{elapsed}<{remaining}]{postfix}")
            _OPEN.append(b)
        try:
            f = min(max(float(fraction), 0.0), 1.0)
        except (TypeError, ValueError):
            f = 0.0
        n = int(round(f * STEPS))
        if message:
            b.set_postfix_str(str(message)[:60], refresh=False)
        if n != b.n:
            b.update(n - b.n)
        if f >= 1.0:
            close(b)
            state["bar"] = None

    return progress


def _width(stream) -> dict:
    """tqdm's width arguments for ``stream``: follow the terminal's width as it changes,
    except on a terminal that reports 0 columns (a pseudo-terminal nobody sized: ``script``,
    ``docker exec -t``, some CI runners), where tqdm would draw an empty line at every
    update, and (on sys.stderr) no line at all, taking the 0 rows as a full screen: there a
    fixed size ($COLUMNS x $LINES, else FALLBACK_COLUMNS x FALLBACK_LINES)."""
    try:
        cols = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):   # no file descriptor: tqdm decides
        return {"dynamic_ncols": True}
    if cols > 0:
        return {"dynamic_ncols": True}
    size = {}
    for key, var, fallback in (("ncols", "COLUMNS", FALLBACK_COLUMNS),
                               ("nrows", "LINES", FALLBACK_LINES)):
        try:
            env = int(os.environ.get(var, ""))
        except ValueError:
            env = 0
        size[key] = env if env > 0 else fallback
    return size


def close(b=None) -> None:
    """Close bar ``b`` (default: every open bar), ending its line."""
    for x in ([b] if b is not None else list(_OPEN)):
        try:
            x.close()
        except Exception:  # noqa: BLE001 - a closed stream must not hide the real error
            pass
        if x in _OPEN:
            _OPEN.remove(x)


def resolve(progress, desc: str = "") -> Callable[[float, str], None] | None:
    """The ``progress=`` argument of a long API call as a callable or None: True is a
    tqdm bar on stderr (:func:`bar`), False/None nothing, a callable
    ``progress(fraction, message)`` itself."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return bar(desc=desc)
    if callable(progress):
        return progress
    raise ValueError(f"progress must be True, False, None or a callable progress(fraction, "
                     f"message) (got {type(progress).__name__})")
