"""Records that experiments keep between reproductions: one JSON object per finished run.

A record is reused when it describes the run asked for (the caller compares its key); one that
is missing, damaged (a file cut short by a crash or a full disk, garbage) or not a JSON object
reads as None, so the run is made again and its record rewritten (a damaged one is reported on
stderr, naming the file). Records are written atomically, so a reproduction killed while
writing one leaves the previous one or none.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["read_record", "write_record"]


def read_record(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; None if the file is missing or damaged (said on stderr)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        print(f"repairing: {path} is damaged ({reason}); its run is made again", file=sys.stderr)
        return None
    if not isinstance(record, dict):
        print(f"repairing: {path} is not a JSON object; its run is made again", file=sys.stderr)
        return None
    return record


def write_record(path: Path, record: dict[str, Any], indent: int = 2) -> None:
    """Write ``record`` to ``path`` as JSON (floats for numpy scalars), atomically."""
    from tfrclab.outdir import write_text_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, json.dumps(record, indent=indent, default=float) + "\n")
