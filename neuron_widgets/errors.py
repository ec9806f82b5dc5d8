"""Errors and load-time warnings that speak to the user in words."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


class ProfileError(ValueError):
    """A profile could not be read.

    The message always names the file, says what is wrong and what to do, so that a
    notebook user can act on it without reading a traceback.
    """

    def __init__(self, path: str | Path | None, problem: str, advice: str) -> None:
        self.path = str(path) if path is not None else None
        self.problem = problem
        self.advice = advice
        where = f"{self.path}: " if self.path else ""
        super().__init__(f"{where}{problem}. {advice}")


@dataclass
class LoadWarnings:
    """Problems found while loading that did not stop the load.

    Each kind of problem is counted, with a few examples, so nothing is dropped or
    altered without the user being able to see it.
    """

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    max_examples: int = 5

    def add(self, kind: str, count: int = 1, example: str | None = None) -> None:
        if count <= 0:
            return
        self.counts[kind] += count
        if example is not None:
            bucket = self.examples.setdefault(kind, [])
            if len(bucket) < self.max_examples:
                bucket.append(example)

    def merge(self, other: LoadWarnings) -> None:
        for kind, count in other.counts.items():
            self.counts[kind] += count
            for ex in other.examples.get(kind, []):
                bucket = self.examples.setdefault(kind, [])
                if len(bucket) < self.max_examples:
                    bucket.append(ex)

    def __bool__(self) -> bool:
        return bool(self.counts)

    def __len__(self) -> int:
        return len(self.counts)

    def __iter__(self):
        return iter(self.counts)

    def __contains__(self, kind: object) -> bool:
        return kind in self.counts

    def __getitem__(self, kind: str) -> int:
        return self.counts[kind]

    def lines(self) -> list[str]:
        out = []
        for kind, count in sorted(self.counts.items()):
            ex = self.examples.get(kind)
            tail = f" (e.g. {'; '.join(ex)})" if ex else ""
            out.append(f"{kind}: {count}{tail}")
        return out

    def __repr__(self) -> str:
        if not self.counts:
            return "LoadWarnings(none)"
        return "LoadWarnings(\n  " + "\n  ".join(self.lines()) + "\n)"
