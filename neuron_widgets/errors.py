"""Errors and load-time warnings that speak to the user in words."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
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
class LoadWarnings(Sequence[str]):
    """Problems found while loading that did not stop the load.

    Each kind of problem is counted, with a few examples, so nothing is dropped or
    altered without the user being able to see it. A sequence of the kinds in the order they were
    found (`w[0]`, `w[:6]` is a LoadWarnings of the first six, with their counts and examples),
    and by kind its count (`w[kind]`).
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

    def __iter__(self) -> Iterator[str]:
        return iter(self.counts)

    def __contains__(self, kind: object) -> bool:
        return kind in self.counts

    def __getitem__(self, key: str | int | slice) -> int | str | LoadWarnings:  # type: ignore[override]
        if isinstance(key, str):
            return self.counts[key]
        kinds = list(self.counts)
        if isinstance(key, slice):
            part = LoadWarnings(max_examples=self.max_examples)
            for kind in kinds[key]:
                part.counts[kind] = self.counts[kind]
                if kind in self.examples:
                    part.examples[kind] = list(self.examples[kind])
            return part
        if isinstance(key, int):
            return kinds[key]
        raise TypeError(f"LoadWarnings are read by kind (a str), position (an int) or slice, not {type(key).__name__}")

    def lines(self) -> list[str]:
        """One line per kind, in the order of the sequence (`lines()[i]` is about `self[i]`)."""
        out = []
        for kind, count in self.counts.items():
            ex = self.examples.get(kind)
            tail = f" (e.g. {'; '.join(ex)})" if ex else ""
            out.append(f"{kind}: {count}{tail}")
        return out

    def __repr__(self) -> str:
        if not self.counts:
            return "LoadWarnings(none)"
        return "LoadWarnings(\n  " + "\n  ".join(self.lines()) + "\n)"
