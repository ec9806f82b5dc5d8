"""User-tester defects in the Chrome critical path and the findings rules, each pinned by a test."""

from pathlib import Path

import neuron_widgets as nw
from neuron_widgets import analysis as A

TRACES = Path(__file__).parent / "data" / "traces"


def test_simple_trace_path_runs_through_the_last_thread_not_a_global_instant():
    p = nw.load_profile(TRACES / "catapult" / "simple_trace.json")
    path = A.critical_path(p)
    # A global instant (pid 0, tid 0) at 880 µs used to end the run: one 62 µs gap, no event on the path.
    assert (path.event_id >= 0).any()
    assert set(path.thread_id.dropna()) == {22630}
    assert path.end_ts.max() == 870_000 and path.start_ts.min() == 818_000
    assert path.loc[path.kind == "gap", "duration_ns"].sum() == 13_000
    assert A.critical_path_headline(p)["thread_id"] == 22630


HTA = TRACES / "hta" / "nccl_data.json.gz"


def test_a_rule_whose_what_if_saves_nothing_is_a_note_not_a_finding():
    f = A.findings(nw.load_profile(HTA))
    # low_overlap used to be reported with gain 0 ("would not shorten the run").
    assert "low_overlap" not in set(f.rule)
    assert not (f.gain_ns.fillna(1) <= 0).any()
    assert any(n.startswith("low_overlap:") and "not reported" in n for n in f.attrs["notes"])


def test_no_overlap_at_all_reads_none_of(monkeypatch):
    from neuron_widgets.analysis import findings_kineto
    real = findings_kineto.comm_comp_overlap

    def no_overlap(p):
        ov = real(p).copy()
        ov["comp_comm_overlap_pctg"] = 0.0
        ov["overlap_time_ns"] = 0
        return ov

    monkeypatch.setattr(findings_kineto, "comm_comp_overlap", no_overlap)
    monkeypatch.setattr(findings_kineto, "gain_of", lambda *a, **k: 1e6)
    f = A.findings(nw.load_profile(HTA))
    title = f.loc[f.rule == "low_overlap", "title"].iloc[0]
    assert title.startswith("None of rank0/GPU 0's communication runs under computation"), title


def test_gpu_idle_range_is_the_ranks_gpu_span_not_the_trace():
    p = nw.load_profile(HTA)
    f = A.findings(p)
    r = f[f.rule == "gpu_idle"].iloc[0]
    span = int(A.temporal_breakdown(p).set_index("rank").loc[r.evidence["rank"], "span_ns"])
    # The trace spans 729 ms, rank 0's GPU 436 ms; within the microsecond rounding temporal_breakdown uses.
    assert abs((r.end_ts - r.start_ts) - span) <= 2_000
    assert r.start_ts > p.start_ts and r.end_ts < p.end_ts


def test_plain_trace_events_still_open_at_the_end_are_findings():
    p = nw.load_profile(TRACES / "catapult" / "main_thread_has_unclosed_slices.json")
    probs = A.errors_and_hangs(p)
    f = A.findings(p)
    inc = f[f.rule == "incomplete"]
    assert len(inc) == 1 and inc.iloc[0].severity == "low"
    assert inc.iloc[0].evidence["events"] == int((probs.kind == "incomplete").sum()) == 4
    assert "CrBrowserMain" in inc.iloc[0].title  # the thread as the trace names it
    assert inc.iloc[0].start_ts == probs.start_ts.min()
    flow = A.findings(nw.load_profile(TRACES / "catapult" / "flow.json"))
    assert flow.loc[flow.rule == "incomplete", "evidence"].iloc[0]["events"] == 3


def test_job_finding_text_does_not_say_a_jobs_what_if_is_missing():
    from neuron_widgets.analysis.findings_job import NO_JOB_GAIN
    assert "what-if is not modelled" not in NO_JOB_GAIN and "what_if(job" in NO_JOB_GAIN
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    assert "what-if does not join the parts" not in readme
    assert "NCCL across ranks is not in the model" not in readme


def test_readme_stragglers_example_is_the_samples():
    import re
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    m = re.search(r">>> A\.stragglers\(p\)\.head\(1\).*\n.*\n0 +(\S+) +(\d+) +(\d+) +(\d+) +(\d+) +(\S+) +(\d+) +(\d+) +(\d+)",
                  text)
    assert m, "the README's stragglers example"
    top = A.stragglers(nw.sample_profile()).iloc[0]
    assert m.group(1) == top.instance_id and int(m.group(3)) == top.nc_idx
    assert int(m.group(5)) == top.times_last and int(m.group(9)) == top.wait_caused_ns
    assert int(m.group(7)) == top.max_lag_ns and int(m.group(8)) == top.steps


def test_kineto_straggler_does_not_say_nccl_across_ranks_is_unmodelled():
    import glob
    p = nw.load_profile(sorted(glob.glob(str(TRACES / "param-dlrm-8rank" / "*.gz"))))
    assert any("NCCL collectives matched across ranks" in n for n in A.critical_path(p).attrs["notes"])
    f = A.findings(p)
    title = f.loc[f.rule == "straggler", "title"].iloc[0]
    assert "not in the what-if model" not in title and "not known" in title
