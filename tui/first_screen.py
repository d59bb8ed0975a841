"""The timeline a pane opens with, made on the pane's loading thread (no Textual here).

A pane's first frame needs its timeline model and the tracks of the rows on its
first screen: on a job of eight 1 GB ranks (every rank's lanes folded) tracks over
25 M rows, a fifth of a second on 16 cores.  Made by the first ``render_lines``,
they held the UI thread that long; made here, on the thread that hands the loaded
session to the pane, the UI stays free (its loading screen drawn, its keys read)
and the first frame finds them built.

Not earlier, on the thread that starts loading before the app exists
(``tui.preload``): there the track threads ran beside the app's own start, both
wanting the GIL between numpy calls, and the job's first frame came later, not
sooner (H200, a job of 8 x 1 GB reopened: 1.11-1.21 s against 0.81-0.98 s).
"""

from __future__ import annotations

import shutil

from tui.job_session import fold_for_job
from tui.session import Session
from tui.timeline_model import TimelineModel


def new_model(session: Session) -> TimelineModel:
    """The model a pane opens ``session`` with: a job's ranks compact (``fold_for_job``)."""
    model = TimelineModel(session.trace, session.links)
    fold_for_job(model)
    return model


def first_model(session: Session) -> TimelineModel:
    """``new_model`` with the tracks of its first screen built."""
    model = new_model(session)
    model.prefetch(0, screen_rows())
    return model


CHROME_LINES = 8
"""Terminal lines the app takes around its timeline (tabs, header, status, ruler,
footer): a 45-line terminal shows 37 timeline rows (a test holds them equal)."""


def screen_rows() -> int:
    """How many rows the first screen shows: the terminal's height less the app's
    chrome (at least 1); 42 without a terminal (its default of 50 lines).  Not
    more: on a job each row more can be another rank's lane of millions of rows."""
    return max(shutil.get_terminal_size((80, 50)).lines - CHROME_LINES, 1)


def prepare(session: Session) -> None:
    """Make ``session.timeline`` (``first_model``) unless it is there.  A failure is
    left for the pane, which makes the model again and reports it as its error line."""
    try:
        if session.timeline is None:
            session.timeline = first_model(session)
    except Exception:  # noqa: BLE001 - the pane retries and says what went wrong
        pass


def take(session: Session) -> TimelineModel:
    """The prepared model, handed over once (a model holds one pane's state: folds,
    cursor, window), else a new one made now (its first frame builds its tracks)."""
    model, session.timeline = session.timeline, None
    return model if model is not None else new_model(session)
