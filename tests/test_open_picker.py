"""``attn-tui open`` with no PATH: the folder's traces listed (a pure function, tested
directly), the picker app (Pilot), and the command's exits without a terminal or
without traces."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tui.commands.open_picker import pick
from tui.screens.picker import PickerApp
from tui.trace_list import describe, file_metadata, list_traces, listing_lines

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_traces"


def _trace(path: Path, meta: dict, *, events_first: bool = False, gz: bool = False) -> Path:
    events = {"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": 2, "pid": 0, "tid": 0}]}
    doc = {**events, **meta} if events_first else {**meta, **events}
    data = json.dumps(doc).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def _folder(tmp_path: Path) -> Path:
    """Three traces written at known times, an oracle and a manifest beside them."""
    capture = {"attn_tui": {"tool": "attn-tui capture", "variant": "naive",
                            "config": {"device": "cpu"}}}
    gpu = {"deviceProperties": [{"id": 0, "name": "NVIDIA H200"}, {"id": 1, "name": "NVIDIA H200"}]}
    old = _trace(tmp_path / "old.json", capture, events_first=True)
    mid = _trace(tmp_path / "mid.json.gz", {**gpu, **capture}, gz=True)
    new = _trace(tmp_path / "new.json", {})
    (tmp_path / "naive.key_averages.json").write_text(
        json.dumps([{"key": "aten::mm", "device_type": "CPU", "count": 1}]))
    (tmp_path / "manifest.json").write_text(
        json.dumps({"tool": "attn-tui capture", "manifest_version": 1, "variants": {}}))
    for age, p in ((300, old), (200, mid), (100, new)):
        t = 1_800_000_000 - age
        os.utime(p, (t, t))
    return tmp_path


def test_listing_newest_first_with_variant_and_device(tmp_path):
    entries = list_traces(str(_folder(tmp_path)))
    assert [e.name for e in entries] == ["new.json", "mid.json.gz", "old.json"]
    assert [(e.variant, e.device) for e in entries] == [
        ("-", "-"), ("naive", "2 × NVIDIA H200"), ("naive", "cpu")]
    lines = listing_lines(entries)
    assert lines[0].split() == ["trace", "variant", "device", "size", "modified"]
    assert len(lines) == 4 and "key_averages" not in "".join(lines)
    assert "manifest" not in "".join(lines)
    assert "2 × NVIDIA H200" in lines[2] and lines[3].split()[:3] == ["old.json", "naive", "cpu"]


def test_metadata_before_or_after_the_events_and_names_are_data(tmp_path):
    p = _trace(tmp_path / "x.json", {"attn_tui": {"variant": "[bold]v\x1b"}}, events_first=True)
    assert describe(file_metadata(str(p)))[0] == "[bold]v\x1b"
    line = listing_lines(list_traces(str(tmp_path)))[1]
    assert "[bold]v\\x1b" in line  # control characters written out
    assert file_metadata(str(tmp_path / "missing.json")) == {}


def test_the_manifest_fills_in_what_a_trace_does_not_say(tmp_path, monkeypatch):
    import tui.trace_list as trace_list

    _trace(tmp_path / "big.json.gz", {}, gz=True)  # its metadata is after the events
    _trace(tmp_path / "own.json", {"attn_tui": {"variant": "mine"}})
    (tmp_path / "manifest.json").write_text(json.dumps({
        "tool": "attn-tui capture", "manifest_version": 1, "gpu": "NVIDIA H200",
        "variants": {"flex": {"trace": "big.json.gz"}, "naive": {"trace": "own.json"}}}))
    monkeypatch.setattr(trace_list, "GZIP_TAIL_MAX", 0)  # as if too big to read the tail
    got = {e.name: (e.variant, e.device) for e in list_traces(str(tmp_path))}
    assert got == {"big.json.gz": ("flex", "NVIDIA H200"), "own.json": ("mine", "NVIDIA H200")}


@pytest.mark.skipif(not (SAMPLES / "naive.json.gz").exists(), reason="sample traces absent")
def test_json_that_is_not_a_trace_is_left_out(tmp_path):
    _folder(tmp_path)
    (tmp_path / "numbers.json").write_text("[1, 2, 3]")
    (tmp_path / "empty.json").write_text("[]")
    (tmp_path / "config.json").write_text(json.dumps({"lr": 0.1, "layers": [1, 2]}))
    (tmp_path / "numbers.json.gz").write_bytes(gzip.compress(b" [4, 5]"))
    (tmp_path / "cut.json.gz").write_bytes(gzip.compress(b"[1, 2")[:12])
    bare = json.dumps([{"ph": "X", "name": "k", "ts": 1, "dur": 2, "pid": 0, "tid": 0}])
    (tmp_path / "bare.json.gz").write_bytes(gzip.compress(b"\n [\n " + bare[1:].encode()))
    names = [e.name for e in list_traces(str(tmp_path))]
    assert sorted(names) == ["bare.json.gz", "mid.json.gz", "new.json", "old.json"]


def test_samples_describe_themselves():
    entries = {e.name: e for e in list_traces(str(SAMPLES))}
    assert len(entries) == 8
    assert entries["naive.json.gz"].variant == "naive"
    assert entries["naive.json.gz"].device == "NVIDIA H200"


def test_no_trace_in_the_folder_is_one_line_exit_2(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "tui.cli", "open"], cwd=tmp_path,
                         capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "no trace in this folder" in out.stderr
    assert "Traceback" not in out.stderr


def test_no_terminal_lists_the_traces_and_exits_2(tmp_path, capsys):
    from profiling.errors import AttnTuiError

    _folder(tmp_path)
    with pytest.raises(AttnTuiError, match="no terminal"):
        pick(str(tmp_path), interactive=False)
    err = capsys.readouterr().err
    assert err.splitlines()[1].startswith("new.json") and "old.json" in err


async def test_picker_marks_several_and_opens_them(tmp_path):
    entries = list_traces(str(_folder(tmp_path)))
    app = PickerApp(entries, str(tmp_path), theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.choices.option_count == 3
        await pilot.press("space", "down", "down", "space")
        await pilot.pause()
        marked = str(app.query_one("#picker-marked").render())
        assert marked.startswith("marked 2: new.json, old.json")  # in words, not colour only
        await pilot.press("enter")
        await pilot.pause()
    assert app.return_value == [entries[0].path, entries[2].path]


async def test_picker_enter_opens_the_highlighted_and_q_opens_nothing(tmp_path):
    entries = list_traces(str(_folder(tmp_path)))
    app = PickerApp(entries, str(tmp_path), theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down", "enter")
        await pilot.pause()
    assert app.return_value == [entries[1].path]
    app = PickerApp(entries, str(tmp_path), theme="attn-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("a", "q")
        await pilot.pause()
    assert app.return_value is None


def test_open_with_paths_still_works_without_a_picker(tmp_path):
    # paths given: the picker is never asked (a missing file is the loader's one line)
    out = subprocess.run([sys.executable, "-m", "tui.cli", "open", "missing.json"],
                         cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and "no such file" in out.stderr
    assert shutil.which(sys.executable)
