"""Read an offline W&B run back from its transaction log (``run-<id>.wandb``), for tests.

wandb >= 0.2x writes it from its Go core and ships no Python reader; the format is LevelDB's log format: a
7-byte file header (``:W&B``, magic 0xBEE1, version 0), then 32 KiB blocks of records, each with a 7-byte header
(crc32, length, type: 1 full, 2 first, 3 middle, 4 last) holding one protobuf ``Record``.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

BLOCK = 32768
HEADER = struct.Struct("<IHB")


def records(path: Path) -> list[Any]:
    """Every protobuf Record of a run file, in order."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B", f"not a W&B run file: {path}"
    out, pending, offset = [], b"", 7
    while offset + HEADER.size <= len(data):
        room = BLOCK - offset % BLOCK
        if room < HEADER.size:  # the block's tail is padding
            offset += room
            continue
        _, length, kind = HEADER.unpack_from(data, offset)
        chunk = data[offset + HEADER.size:offset + HEADER.size + length]
        offset += HEADER.size + length
        if kind == 0 and length == 0:
            offset += BLOCK - offset % BLOCK if offset % BLOCK else 0
            continue
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            out.append(record)
            pending = b""
    return out


def read_run(run_dir: Path) -> dict[str, Any]:
    """An offline run: its id, name, group, job type, project, config and history (a list of dicts)."""
    (path,) = run_dir.glob("run-*.wandb")
    run: dict[str, Any] = {"config": {}, "history": []}
    for record in records(path):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            r = record.run
            run.update(id=r.run_id, name=r.display_name, group=r.run_group, job_type=r.job_type, project=r.project)
            run["config"].update({i.key: json.loads(i.value_json) for i in r.config.update})
        elif kind == "config":
            run["config"].update({i.key: json.loads(i.value_json) for i in record.config.update})
        elif kind == "history":
            run["history"].append({i.key or "/".join(i.nested_key): json.loads(i.value_json)
                                   for i in record.history.item})
    return run
