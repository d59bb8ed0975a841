"""The program hides what is left from the collector as it ends (``gc.freeze``: the exit's
full passes cost ~45 ms of a reopened command); a command line run inside a process
that goes on (the tests, a script) leaves the collector as it was."""

from __future__ import annotations

import gc
import subprocess
import sys

from tests.conftest import SAMPLE_TRACES
from tui.cli import main

SAMPLE = str(SAMPLE_TRACES / "naive.json.gz")


def test_a_command_line_leaves_the_collector_alone(capsys):
    before = gc.get_freeze_count()
    assert main(["stats", SAMPLE, "--json", "--no-cache"]) == 0
    assert gc.get_freeze_count() == before
    assert '"events"' in capsys.readouterr().out


def test_the_program_freezes_what_is_left_as_it_ends():
    code = ("import gc, sys\n"
            "sys.argv = ['attn-tui', 'stats', sys.argv[1], '--json', '--no-cache']\n"
            "from tui.cli import main\n"
            "code = main()\n"
            "print(code, gc.get_freeze_count() > 0, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, SAMPLE], capture_output=True, text=True,
                          check=True)
    assert done.stderr.split() == ["0", "True"] and '"events"' in done.stdout
