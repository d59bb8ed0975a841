"""A job's two frames in a real terminal: its first rank drawn, then the whole job.

``attn-tui open DIR`` on a job's first open shows its largest rank first, alone,
and the whole job when every rank is loaded (``tui.job_progressive``).  From
starting the app in a private tmux server (``bench/tui_first_frame.py``'s
harness), the screen (``capture-pane``) is read until:

- first frame: the first rank is drawn: its first process group's label head
  (``rank K · ``) on screen and the status line's partial header (``of N shown``);
  or, with no partial stage (a reopen, a small job), the whole job's frame;
- whole frame: the whole job is drawn: the job's own first process groups' label
  heads and its header ``job: N ranks`` (which the partial's never says).
"""

from __future__ import annotations

import time
from pathlib import Path

from tui_first_frame import POLL_EARLY_S, POLL_S, app_in_tmux

from tui.names import visible


def time_job_frames(folder: Path, labels: list[str], shown_rank: int, ranks: int,
                    size: tuple[int, int], load_s: float,
                    whole_s: float) -> tuple[float, float]:
    """Seconds from starting ``attn-tui open FOLDER`` to its first frame and to the
    whole job's frame (equal when the job opened in one stage).  ``labels``: the
    whole job's first process groups; ``shown_rank``: the rank shown first;
    ``load_s`` and ``whole_s``: about when each is expected (the screen is read
    often only from 80 % of that time on: on few cores polling slows the load)."""
    whole = [visible(label)[:12] for label in labels] + [f"job: {ranks} ranks"]
    part = [f"rank {shown_rank} · ", f"of {ranks} shown"]
    first: float | None = None
    start = time.monotonic()
    with app_in_tmux(folder, size) as screen_now:
        while time.monotonic() - start < 600:
            screen = screen_now()
            now = time.monotonic() - start
            done = all(n in screen for n in whole)
            if first is None and (done or all(n in screen for n in part)):
                first = now
            if done:
                return first, now
            if "Traceback" in screen or "failed to load" in screen:
                raise RuntimeError(screen)
            early = now < 0.8 * (load_s if first is None else whole_s)
            time.sleep(POLL_EARLY_S if early else POLL_S)
        raise RuntimeError("no whole job's frame within 600 s")
