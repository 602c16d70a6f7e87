"""Progress of long work: one tqdm bar on stderr.

Runners and long API calls report ``progress(fraction, message)`` (fraction in [0, 1]);
:func:`bar` turns that protocol into a tqdm progress bar (tqdm: a well-kept library that
handles terminal widths, rates and ETA, rather than a bar of our own). The bar is drawn
only on a terminal (a log or a pipe gets the result lines only) and not at all with
``hystmech run --quiet``. The API's long calls take ``progress=`` as a bool (True: this
bar) or a callable (:func:`resolve`).
"""
from __future__ import annotations

import sys
from typing import Callable

STEPS = 1000        # resolution of the bar (fractions are shown to 0.1 %)
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
                                    dynamic_ncols=True, mininterval=0.5,
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
