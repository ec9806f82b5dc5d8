"""How much communication hides under computation (HTA's comm/comp overlap)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model.profile import Profile
from .devices import COLLECTIVE, COMMUNICATION, COMPUTATION, EXECUTION, kind_of, kineto_kernels
from .frame import frame_of, notes_of
from .intervals import covered_twice, union


def comm_comp_overlap(profile: Profile, kind: str = "auto", include_last_step: bool = False,
                      round_us: bool = True) -> pd.DataFrame:
    """Per rank / NeuronCore, the share of communication time that runs under computation.

    Kineto (HTA's `get_comm_comp_overlap`): the union of communication kernels intersected with
    the union of computation kernels, over the communication union, as `comp_comm_overlap_pctg`.
    Neuron: a NeuronCore runs one NEFF at a time, and the system profile shows a collective only
    as `cc_running` inside its own execution; compute inside that same NEFF is in its device
    profile. What the system profile can show is collective time under *another* execution on the
    same core (two executions at once): that is counted; otherwise it is 0, and the notes say why.
    Columns: the device keys, `comm_time_ns`, `overlap_time_ns`, `comp_comm_overlap_pctg`.
    """
    fr = frame_of(profile)
    notes: list[str] = []
    if kind_of(fr, kind) == "neuron":
        _, cores = fr.core_codes()
        n = len(cores)
        ex, ex_core = fr.on_cores(EXECUTION)
        cc, cc_core = fr.on_cores(COLLECTIVE)
        comm = union(cc_core, fr.start[cc], fr.end[cc])
        shared = covered_twice(ex_core, fr.start[ex], fr.end[ex])
        comm_t, over_t = comm.length(n), (comm & shared).length(n)
        df = cores.assign(comm_time_ns=comm_t, overlap_time_ns=over_t)
        df = df[np.bincount(ex_core, minlength=n) > 0] if n else df
        if cc.size == 0:
            notes.append("no cc_running events: no collective time to overlap")
        elif not over_t.any():
            notes.append("no two executions ran at once on a NeuronCore, so no collective ran under another NEFF's "
                         "compute; overlap within one NEFF shows in its device profile (DeviceTraceViewer)")
    else:
        k = kineto_kernels(fr, include_last_step, round_us)
        notes += k.notes
        types = k.types(fr)
        m_comm, m_comp = types == COMMUNICATION, types == COMPUTATION
        comm = union(k.rank[m_comm], k.start[m_comm], k.end[m_comm])
        comp = union(k.rank[m_comp], k.start[m_comp], k.end[m_comp])
        n = len(k.ranks)
        comm_t, over_t = comm.length(n), (comm & comp).length(n)
        df = pd.DataFrame({"rank": k.ranks, "comm_time_ns": comm_t, "overlap_time_ns": over_t})
        df = df[np.bincount(k.rank, minlength=n) > 0]
        if not m_comm.any():
            notes.append("no communication kernels (NCCL) in this trace")
    with np.errstate(divide="ignore", invalid="ignore"):
        df["comp_comm_overlap_pctg"] = np.where(df["comm_time_ns"] > 0,
                                                100.0 * df["overlap_time_ns"] / df["comm_time_ns"].clip(lower=1), np.nan)
    return notes_of(df.reset_index(drop=True), notes)
