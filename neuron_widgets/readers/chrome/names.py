"""Process and thread names and sort order of a Chrome trace, as model.track_names records.

Sources: `M` events (`process_name`, `thread_name`, `process_sort_index`, `thread_sort_index`,
Kineto's `process_labels`), Fuchsia's `systemTraceEvents` (`p` and `t` entries), and text ids
(Kineto's `Spans`, `Traces`), which get their text as a label and sort after the others.
"""

from __future__ import annotations

import re
from typing import Any

from ...model.track_names import process_label, thread_label
from .events import Ev, as_dict, h

_NUMBER = re.compile(r"-?[0-9]+")


def _sort(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str) and _NUMBER.fullmatch(v.strip()):
        return float(int(v.strip()))
    return None


def track_names(instance: str, metadata_events: list[Ev], system: Any, pid_codes: dict[int, str],
                tid_codes: dict[int, str]) -> dict[str, list[list[Any]]]:
    """`{"process": [[instance, pid, label, sort, is_text]], "thread": [[instance, pid, tid, label, sort, is_text]],
    "thread_texts": [[instance, tid, text]]}` (a text tid's label in any process).

    `pid_codes` / `tid_codes`: the negative codes the reader gave text ids, and their texts.
    """
    text_pid = {t: c for c, t in pid_codes.items()}
    text_tid = {t: c for c, t in tid_codes.items()}

    def code(v: Any, texts: dict[str, int]) -> tuple[int | None, bool]:
        if isinstance(v, int) and not isinstance(v, bool):
            return v, False
        s = str(h(v)) if v is not None else ""
        if _NUMBER.fullmatch(s.strip()):
            return int(s.strip()), False
        return texts.get(s), True

    procs: dict[int, dict[str, Any]] = {}
    threads: dict[tuple[int, int], dict[str, Any]] = {}
    for e in metadata_events:
        pid, pid_text = code(e.pid if e.pid is not None else 0, text_pid)
        if pid is None:
            continue
        args = as_dict(e.args)
        if e.name in ("process_name", "process_labels", "process_sort_index"):
            rec = procs.setdefault(pid, {"text": pid_text})
            if e.name == "process_name":
                rec["name"] = str(args.get("name", ""))
            elif e.name == "process_labels":
                rec["labels"] = str(args.get("labels", ""))
            else:
                rec["sort"] = _sort(args.get("sort_index"))
        elif e.name in ("thread_name", "thread_sort_index"):
            tid, tid_text = code(e.tid if e.tid is not None else 0, text_tid)
            if tid is None:
                continue
            rec = threads.setdefault((pid, tid), {"text": tid_text})
            if e.name == "thread_name":
                rec["name"] = str(args.get("name", ""))
            else:
                rec["sort"] = _sort(args.get("sort_index"))
    _fuchsia(system, procs, threads, text_pid, text_tid, code)
    for c, text in pid_codes.items():  # text ids with no name entry still get their text
        procs.setdefault(c, {"text": True, "name": text})
    out_p = []
    for pid, rec in procs.items():
        if rec.get("text"):
            label = pid_codes.get(pid) or "(no pid)"
        elif rec.get("name") or rec.get("labels"):
            label = process_label(rec.get("name", ""), pid, rec.get("labels", ""))
        else:
            label = None
        out_p.append([instance, pid, label, rec.get("sort"), bool(rec.get("text"))])
    out_t = []
    for (pid, tid), rec in threads.items():
        if rec.get("text"):
            label = tid_codes.get(tid) or "(no tid)"
        elif rec.get("name"):
            label = thread_label(rec["name"], tid)
        else:
            label = None
        out_t.append([instance, pid, tid, label, rec.get("sort"), bool(rec.get("text"))])
    texts = [[instance, c, t or "(no tid)"] for c, t in tid_codes.items()]
    return {"process": out_p, "thread": out_t, "thread_texts": texts}


def _fuchsia(system: Any, procs: dict[Any, Any], threads: dict[Any, Any], text_pid: dict[Any, Any], text_tid: dict[Any, Any],
             code: Any) -> None:
    """Fuchsia's `systemTraceEvents`: `{"events": [{"ph": "p", "pid", "name"}, {"ph": "t", "pid", "tid", "name"}]}`."""
    if not isinstance(system, dict) or not isinstance(system.get("events"), list):
        return
    for e in system["events"]:
        if not isinstance(e, dict) or e.get("ph") not in ("p", "t") or not isinstance(e.get("name"), str):
            continue
        pid, pid_text = code(e.get("pid", 0), text_pid)
        if pid is None:
            continue
        if e["ph"] == "p":
            procs.setdefault(pid, {"text": pid_text}).setdefault("name", e["name"])
        else:
            tid, tid_text = code(e.get("tid", 0), text_tid)
            if tid is not None:
                threads.setdefault((pid, tid), {"text": tid_text}).setdefault("name", e["name"])
