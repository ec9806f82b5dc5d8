"""A job's critical path and what-if: each part's task result gathered, as `across` runs the tasks.

One helper for every job computation of the path's family (the path's stretches, the Kineto
parts' arrivals and stretches, the what-if replays): the part tasks run on Dask (`run_parts`),
a part that cannot be read is left out and named in the notes, each part's own notes are kept
with its name, and a task that refuses the job (a TypeError whose text starts with `REFUSED`)
is raised, not taken for one bad part.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from ..model.profile import Profile
from .across import run_parts

REFUSED = "the critical path of a job"  # how a part task's refusal of the whole job starts (a TypeError's text)
PART_KEY = "job_part"  # a part's name in its profile's metadata, where a task needs to know which part it is


@dataclass(frozen=True)
class NamedPart:
    """A part whose loaded profile carries its name (`metadata["job_part"]`), for a task whose work depends on
    which part it is (a change filtered on `part`). Picklable: a task carries it to its worker."""

    spec: Any

    @property
    def name(self) -> str:
        return str(self.spec.name)

    @property
    def path(self) -> str:
        return str(self.spec.path)

    def load(self) -> Profile:
        profile: Profile = self.spec.load()
        profile.metadata[PART_KEY] = self.name
        return profile

    # The job's result store keys a part's results by its bytes; a named part's depend on its name too.
    def stamp(self) -> str | None:
        stamp = self.spec.stamp()
        return None if stamp is None else _named_key(stamp, self.name)

    def content_key(self) -> str:
        return _named_key(self.spec.content_key(), self.name)


def _named_key(key: str, name: str) -> str:
    return hashlib.blake2b(f"{key}\0{name}".encode(), digest_size=16).hexdigest()


def pack(**args: Any) -> bytes:
    """A task's arguments as one blob (its `packed` argument): the result store's tag is a hash of the
    arguments' repr, which NumPy shortens for long arrays; a blob's repr is whole."""
    return pickle.dumps(args, protocol=pickle.HIGHEST_PROTOCOL)


def unpacked(blob: bytes | None) -> dict[str, Any]:
    return dict(pickle.loads(blob)) if blob else {}


def part_name(profile: Profile) -> str | None:
    """The name a NamedPart gave its profile (None: not loaded as a job's part)."""
    name = profile.metadata.get(PART_KEY)
    return str(name) if name is not None else None


def gathered(job: Any, task: str, client: Any = None, *, named: bool = False, parts: list[str] | None = None,
             **kw: Any) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """Each readable part's result of `task` as (part, result) in part order, less the empty ones, and the notes.

    `named`: the parts load as NamedPart (the task reads its part's name; its results are kept by the part's
    bytes and name). `parts`: only those parts. `kw`: as for `run_parts` (`scheduler`, `num_workers`,
    `cache`), and the task's own arguments (`packed`).
    """
    specs = [s for s in job.specs if parts is None or s.name in parts]
    if named or parts is not None:
        job = SimpleNamespace(specs=[NamedPart(s) if named else s for s in specs], store=job.store)
    got = run_parts(job, [task], client, **kw)
    refused = [g for g in got if g["error"] is not None and g["error"].startswith(f"TypeError: {REFUSED}")]
    if refused:
        raise TypeError(f"{refused[0]['part']}: {refused[0]['error'][len('TypeError: '):]}")
    notes = [f"{g['part']} ({g['path']}) was left out: {g['error']}" for g in got if g["error"] is not None]
    pieces = []
    for g in got:
        if g["error"] is None:
            p = g["tables"][task]
            notes += [f"{g['part']}: {n}" for n in p["notes"]]
            if not p["empty"]:
                pieces.append((str(g["part"]), p))
    return pieces, notes
