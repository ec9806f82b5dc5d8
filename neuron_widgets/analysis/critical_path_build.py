"""A profile's critical-path graph, built once per profile and kept on its analysis frame.

`critical_path`, `what_if` and `findings` all read the graph through `graph_of`, so it is built
once per profile whichever of them runs first; it lives in the profile's frame (`frame_of`), so it
goes when the profile goes.
"""

from __future__ import annotations

from ..model.profile import Profile
from .critical_path_graph import Graph
from .critical_path_neuron import neuron_graph
from .devices import kind_of
from .frame import Frame, frame_of


def is_job(x: object) -> bool:
    return not isinstance(x, Profile) and type(x).__name__ == "Job"


def frame_for_path(x: object) -> Frame:
    """The analyses' frame of a Profile; a Job is refused with what to do instead."""
    if is_job(x):
        raise TypeError("the critical path of a Job is not computed part by part yet: load the job's parts as one "
                        "Profile (nw.load_profile([...])) and pass that")
    return frame_of(x)  # type: ignore[arg-type]


def graph_of(fr: Frame) -> tuple[Graph | None, list[str]]:
    """The profile's graph (built once per profile), or None with the reason."""
    def build() -> tuple[Graph | None, list[str]]:
        if len(fr) == 0:
            return None, ["the profile has no events"]
        if kind_of(fr) != "neuron" and not {"neuron_rt", "neuron_hw"} & set(fr.sources):
            # Loaded by the warm-up thread (analysis/__init__), not by the import of the analyses.
            from .critical_path_chrome import chrome_graph

            g = chrome_graph(fr)
            return g, g.notes
        g = neuron_graph(fr)
        return g, g.notes

    return fr._cached("critical-graph", build)
