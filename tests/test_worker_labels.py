"""A finding names a worker as the Timeline labels its track: the track filter finds what a finding names (the
sample, a job's part in its own Timeline and in the job's Timeline)."""

from __future__ import annotations

from test_findings import NODES, _clean_job, _write_job

import neuron_widgets as nw
from neuron_widgets import analysis as A
from neuron_widgets.job.view import under
from neuron_widgets.model.worker_labels import core_label, part_instance

WORKER_KEYS = ("core", "worst_core")


def _named(f) -> list[str]:
    """Every worker label a finding names in its evidence."""
    return [str(ev[k]) for ev in f["evidence"] for k in WORKER_KEYS if isinstance(ev, dict) and ev.get(k) is not None]


def test_core_labels_are_the_default_groupings_runtime_tracks() -> None:
    p = nw.sample_profile()
    tracks = set(p.tracks("default")["label"])
    t = A.temporal_breakdown(p)
    labels = [core_label(r.instance_id, r.process_id, r.nc_idx, p.track_names) for r in t.itertuples()]
    assert labels and set(labels) <= tracks and len(set(labels)) == len(t)
    assert labels[0] == f"{t.iloc[0]['instance_id']}/PID:{t.iloc[0]['process_id']}/neuron_rt/NC:{t.iloc[0]['nc_idx']}"
    # Ids handed over as floats (pandas) read as the Timeline's integers.
    assert core_label("i-1", 7.0, 2.0) == "i-1/PID:7/neuron_rt/NC:2"
    assert part_instance("node-01", "i-1") == "node-01/i-1" and part_instance(None, "i-1") == "i-1"


def test_the_samples_findings_name_timeline_tracks() -> None:
    p = nw.sample_profile()
    f = A.findings(p)
    named = _named(f)
    assert {"straggler", "hang", "error"} <= set(f["rule"]) and len(named) >= 3
    tracks = list(p.tracks("default")["label"])
    for label in named:
        assert label in tracks  # the track filter shows exactly that track
        assert [t for t in tracks if label.lower() in t.lower()] == [label]
    # The titles say it as the evidence does.
    st = f[f["rule"] == "straggler"].iloc[0]
    assert st["title"].startswith(st["evidence"]["core"])


def test_a_jobs_findings_name_tracks_of_the_part_and_of_the_jobs_timeline(tmp_path) -> None:
    job = _clean_job(on=NODES)
    job.compute[:, 7, :] = 140_000  # the third node's NC1: last at every step
    j = _write_job(job, tmp_path)
    f = A.findings(j, scheduler="sync")
    last = f[f["rule"] == "job_straggler"].iloc[0]
    part, label = last["part"], last["evidence"]["core"]
    profile = j.load(part)
    assert label in set(profile.tracks("default")["label"])  # the part's own Timeline
    # The job's Timeline shows an opened part's instances as "<part>/<instance>": the label is in its track's.
    opened = list(under(profile, part).tracks("default")["label"])
    assert [t for t in opened if label in t] == [f"{part}/{label}"]
    assert part_instance(part, profile.events["instance_id"].iloc[0]) == f"{part}/{label.split('/')[0]}"


def test_kineto_findings_name_the_ranks_gpu_track() -> None:
    """A Kineto rank is named as the Timeline labels its GPU: the track filter finds that rank's streams only."""
    from neuron_widgets.analysis.compare_findings import Roles, keyed
    from neuron_widgets.model.worker_labels import gpu_label

    p = nw.sample_profile("kineto")
    f = A.findings(p)
    tracks = list(p.tracks("default")["label"])
    ranked = f[[isinstance(ev, dict) and ev.get("rank") is not None for ev in f["evidence"]]]
    assert {"straggler", "gpu_idle"} <= set(ranked["rule"])
    for title, ev in zip(ranked["title"], ranked["evidence"], strict=True):
        label = ev["gpu"]
        assert label == f"rank{int(ev['rank'])}/GPU {int(ev['rank'])}" and label in title and "rank 0" not in title
        shown = [t for t in tracks if label.lower() in t.lower()]
        assert shown and all(t.startswith(f"{label}/stream ") for t in shown)  # its GPU's streams, nothing else
    assert gpu_label("h", 3.0) == "h/PID:3" and gpu_label("h", 3, part="node-1") == "node-1/h/PID:3"
    # compare matches a rank on its number (a rerun's host differs), and names it by its GPU's label.
    k = keyed(ranked.assign(part=None), Roles())
    st = k[k["rule"] == "straggler"].iloc[0]
    assert st["who"] == st["evidence"]["gpu"] and st["key"] == f"rank {int(st['evidence']['rank'])}"
    assert st["matched_by"] == "rank"
