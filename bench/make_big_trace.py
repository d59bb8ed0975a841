"""Make a large, realistic trace by repeating a real one with shifted times and ids.

    python bench/make_big_trace.py SEED.json[.gz] OUT.json --size-mb 1000

Each copy of the seed's events is shifted past the previous copy's end, and its
correlation / External id / flow ids are offset, so links stay unique and the
result reads like one long profiling session.  Events are written as streamed
JSON text (never one giant Python list) so a 1 GB file needs little memory.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any


def load_seed(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data)
    if isinstance(doc, list):
        return {}, doc
    events = doc.pop("traceEvents")
    return doc, events


def _shift(event: dict[str, Any], dt: float, id_offset: int) -> dict[str, Any]:
    e = dict(event)
    if isinstance(e.get("ts"), (int, float)):
        e["ts"] = round(e["ts"] + dt, 3)
    if e.get("ph") in ("s", "f", "t") and isinstance(e.get("id"), int):
        e["id"] = e["id"] + id_offset
    args = e.get("args")
    if isinstance(args, dict):
        args = dict(args)
        for key in ("correlation", "External id", "external id"):
            if isinstance(args.get(key), int) and args[key] > 0:
                args[key] = args[key] + id_offset
        e["args"] = args
    return e


def write_big_trace(seed: Path, out: Path, size_mb: float) -> tuple[int, int]:
    """Write ``out``; returns (bytes written, events written)."""
    top, events = load_seed(seed)
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    timed = [e for e in body if isinstance(e.get("ts"), (int, float))]
    start = min(e["ts"] for e in timed)
    end = max(e["ts"] + float(e.get("dur", 0) or 0) for e in timed)
    period = (end - start) + 10.0
    max_id = 1
    for e in body:
        for key in ("correlation", "External id", "external id"):
            v = (e.get("args") or {}).get(key)
            if isinstance(v, int):
                max_id = max(max_id, v)
        if isinstance(e.get("id"), int):
            max_id = max(max_id, e["id"])
    target = int(size_mb * 1e6)
    written = 0
    count = 0
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        head = json.dumps(top)[:-1] if top else "{"
        f.write(head + (", " if top else "") + '"traceEvents": [\n')
        first = True
        for e in meta:
            f.write(("" if first else ",\n") + json.dumps(e))
            first = False
            count += 1
        copy = 0
        while written < target:
            dt = copy * period
            offset = copy * (max_id + 1)
            chunk = ",\n".join(json.dumps(_shift(e, dt, offset)) for e in body)
            f.write(("" if first else ",\n") + chunk)
            first = False
            written += len(chunk)
            count += len(body)
            copy += 1
        f.write("\n]}\n")
    tmp.replace(out)
    return out.stat().st_size, count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seed", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--size-mb", type=float, default=100.0)
    args = parser.parse_args()
    size, count = write_big_trace(args.seed, args.out, args.size_mb)
    print(f"{args.out}: {size / 1e6:.1f} MB, {count} events", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
