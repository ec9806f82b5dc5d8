"""The analyses as chart columns: device labels, worst-first orders, the headline and its sentence."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..model.profile import Profile
from ..model.timefmt import duration
from ..model.worker_labels import core_label

NEURON_PARTS = ("compute", "collective", "barrier", "idle")
KINETO_PARTS = ("compute", "non_compute", "idle")
CHROME_PARTS = ("busy", "idle")


def parts_of(kind: str) -> tuple[str, ...]:
    return {"neuron": NEURON_PARTS, "kineto": KINETO_PARTS}.get(kind, CHROME_PARTS)


# What a trace of each kind cannot be asked, said in the headline (charts for it are not drawn).
NOT_APPLICABLE = {
    "chrome": "A plain trace (no NeuronCore executions, no GPU kernels): device breakdowns, idle causes, NEFFs and "
              "stragglers do not apply; shown are busy time per thread, time per event name and the longest events.",
    "kineto-one-rank": "Stragglers need the traces of several ranks (load_profile([rank0, rank1, ...])): not shown.",
}


Parts = dict[str, tuple[str, ...]]


def device_labels(df: pd.DataFrame, unique: bool = True, parts: Parts | None = None) -> list[str]:
    """One label per device row: `rank 3`, a NeuronCore's track label (`i-0a88.../PID:2624383/neuron_rt/NC:1`), or
    a thread's name and id; threads that label alike are numbered when `unique`. `parts`: the tracks' segments
    (`track_parts`), so a name holding "/" stays whole."""
    if df.empty:
        return []
    if "rank" in df.columns:
        return [f"rank {r}" for r in df["rank"]]
    if "track" in df.columns:
        return track_labels([str(x) for x in df["track"]], unique, parts)
    if "thread_id" in df.columns and "nc_idx" not in df.columns:  # no track known: the Timeline's unnamed form
        return track_labels([f"PID:{r.get('process_id')}/TID:{r.get('thread_id')}" for r in df.to_dict("records")],
                            unique)
    # A NeuronCore as the Timeline labels its runtime track (and findings name it): the track filter finds it.
    return [core_label(r.instance_id, r.process_id, r.nc_idx) for r in df.itertuples()]


RANK_WORDS = re.compile(r"\brank (\d+)(?: stream (\d+))?\b")


def named_ranks(text: str, names: dict[Any, str]) -> str:
    """`rank 0` as the Timeline labels that rank's GPU (`rank0/GPU 0`), `rank 0 stream 7` as its stream's track
    (`rank0/GPU 0/stream 7`): what findings name, what the track filter finds. Ranks without a name stay."""
    def one(m: re.Match[str]) -> str:
        gpu = names.get(int(m.group(1)))
        if gpu is None:
            return m.group(0)
        return f"{gpu}/stream {m.group(2)}" if m.group(2) is not None else gpu

    return RANK_WORDS.sub(one, text) if names else text


def track_parts(profile: Profile) -> Parts:
    """Each Default-grouping track label of `profile` cut into the segments it was joined from (instance, process,
    thread), so a name that holds "/" stays one segment: Chrome's process "chrome://tracing", its thread
    "CompositorRasterWorker1/21775". Read from the Instance and Process groupings' labels of the same events."""
    _, default_track, default = profile.grouping_keys("default")  # combos are one set: every grouping indexes it
    _, process_track, process = profile.grouping_keys("process")
    _, instance_track, instance = profile.grouping_keys("instance")
    out: Parts = {}
    for c in range(len(default_track)):
        label, proc, inst = default[default_track[c]], process[process_track[c]], instance[instance_track[c]]
        if label in out:
            continue
        if label.startswith(proc + "/") and proc.startswith(inst + "/"):
            out[label] = (inst, proc[len(inst) + 1:], label[len(proc) + 1:])
    return out


def track_labels(tracks: list[str], unique: bool = True, parts: Parts | None = None) -> list[str]:
    """Timeline track labels ("instance/process/thread") as short as they can be and still tell the rows
    apart: the thread's own segment, as the Timeline shows it ("CoreFlipWaitThread 5260"), with its process
    before it ("Renderer 1287/CrRendererMain 1287") where several processes have a thread of that name.
    `parts` (`track_parts`) cut a label into its segments; a label not in it is cut at every "/"."""
    distinct = list(dict.fromkeys(tracks))
    segs = [list((parts or {}).get(t) or t.split("/")) for t in distinct]
    depth = [1] * len(distinct)
    while True:
        labels = ["/".join(s[-d:]) for s, d in zip(segs, depth, strict=True)]
        count: dict[str, int] = {}
        for lab in labels:
            count[lab] = count.get(lab, 0) + 1
        grow = [i for i, lab in enumerate(labels) if count[lab] > 1 and depth[i] < len(segs[i])]
        if not grow:
            break
        for i in grow:
            depth[i] += 1
    short = dict(zip(distinct, labels, strict=True))
    labels = [short[t] for t in tracks]
    if not unique:
        return labels
    seen: dict[str, int] = {}
    out = []
    for lab in labels:  # the same full label twice (two streams of one thread): numbered
        seen[lab] = seen.get(lab, 0) + 1
        out.append(lab if seen[lab] == 1 else f"{lab} #{seen[lab]}")
    return out


def labels_among(tracks: list[str], context: list[str], parts: Parts | None = None) -> list[str]:
    """`track_labels` of some tracks, as short as they can be among all of `context` (the trace's threads): a
    table of a few rows names them as the thread chart does."""
    every = list(dict.fromkeys([*context, *tracks]))
    short = dict(zip(every, track_labels(every, unique=False, parts=parts), strict=True))
    return [short[t] for t in tracks]


def device_key(row: pd.Series | dict[str, Any]) -> tuple[str, Any] | tuple[str, int, int]:
    """What identifies a device across analyses (rank, or instance/process/NeuronCore)."""
    if "rank" in row and row["rank"] is not None and not (isinstance(row["rank"], float) and np.isnan(row["rank"])):
        return ("rank", row["rank"])
    return (str(row["instance_id"]), int(row["process_id"]), int(row["nc_idx"]))


@dataclass
class Headline:
    span_ns: int
    events: int
    devices: int
    device_word: str
    busy_pctg: float
    errors: int
    hangs: int
    sentence: str
    range_note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    kind: str = "neuron"

    def means(self, card: str) -> str:
        """What a card measures, on its hover ("" for the counts, which say it themselves)."""
        return {"Span": SPAN_MEANS, "Busy": BUSY_MEANS.get(self.kind, BUSY_MEANS["kineto"])}.get(card, "")

    def cards(self) -> list[tuple[str, str]]:
        # A brushed range's counts beside the whole profile's ("0 of 2"), so a range is never read as the whole.
        whole = self.extra.get("whole") or {}

        def count(n: int, key: str) -> str:
            return f"{n:,} of {whole[key]:,}" if key in whole and whole[key] != n else f"{n:,}"

        return [("Span", duration(self.span_ns)), ("Events", f"{self.events:,}"),
                (self.device_word, f"{self.devices:,}"), ("Busy", f"{self.busy_pctg:.1f}%"),
                ("Errors", count(self.errors, "errors")), ("Hangs", count(self.hangs, "hangs"))]


# What the Span and Busy cards measure, on their hover (the README says the same).
SPAN_MEANS = ("Span: the time summarised: the whole profile (first event to last), or a brushed range's brush "
              "(events crossing its edges do not widen it).")
BUSY_MEANS = {
    "chrome": "Busy: the threads' mean share of the span summarised, busy meaning covered by any of the thread's "
              "events: the mean of the bars of 'Busy time per thread'.",
    "neuron": "Busy: the NeuronCores' busy time (compute, collective and barrier) over their spans added up, each "
              "core's span as in 'Where the time goes'.",
    "kineto": "Busy: the ranks' time not idle over their spans added up, each rank's span as in 'Where the time "
              "goes'.",
}


def summarised_span(profile: Profile, results: dict[str, Any]) -> int:
    """The span a Summary summarises: a brushed range's is the brush (`results["window"]`, absolute ns), not the
    events that cross its edges; otherwise the profile's, first event to last."""
    window = results.get("window")
    if window is not None:
        return max(int(window[1]) - int(window[0]), 0)
    return profile.duration_ns


def headline(profile: Profile, results: dict[str, Any], range_note: str = "") -> Headline:
    t = results.get("temporal", pd.DataFrame())
    kind = results.get("kind", "neuron")
    span = summarised_span(profile, results)
    results = {**results, "span_ns": span}
    if kind == "chrome" and len(t):
        t = threads_of(t, span)  # the threads as the busy chart shows them (no profiler-wide span)
    if t.empty:
        busy = 0.0
    elif kind == "chrome":
        busy = float(t["busy_time_pctg"].mean())  # the chart's bars, on one denominator: the span summarised
    elif kind == "neuron":
        busy = 100.0 * t["busy_time_ns"].sum() / max(int(t["span_ns"].sum()), 1)
    else:
        busy = 100.0 - 100.0 * t["idle_time_ns"].sum() / max(int(t["span_ns"].sum()), 1)
    problems = results.get("problems", pd.DataFrame(columns=["kind"]))
    errors = int((problems["kind"] == "error").sum()) if len(problems) else 0
    hangs = int((problems["kind"] == "hang").sum()) if len(problems) else 0
    return Headline(span_ns=span, events=len(profile), devices=len(t),
                    device_word={"neuron": "NeuronCores", "kineto": "Ranks"}.get(kind, "Threads"), busy_pctg=busy,
                    errors=errors, hangs=hangs, sentence=sentence(results), range_note=range_note,
                    extra={"whole": results["whole"]} if results.get("whole") else {}, kind=kind)


def sentence(results: dict[str, Any]) -> str:
    """The headline's sentence: the top bottleneck, then what does not apply to this kind of trace."""
    kind = results.get("kind", "neuron")
    if kind == "chrome":
        return NOT_APPLICABLE["chrome"] + " " + _busiest(results)
    if kind == "kineto" and results.get("ranks", 2) < 2:
        return bottleneck(results, stragglers=False) + " " + NOT_APPLICABLE["kineto-one-rank"]
    return bottleneck(results)


def _busiest(results: dict[str, Any]) -> str:
    t = results.get("temporal", pd.DataFrame())
    span = results.get("span_ns")
    shown = threads_of(t, span) if len(t) else t
    if shown.empty:
        return "No timed events in this range."
    top = shown.iloc[0]
    share = f"{top['busy_time_pctg']:.0f}% of the {duration(span)} span" if span else \
        f"{top['busy_time_pctg']:.0f}% of its span"
    label = device_labels(shown, parts=results.get("track_parts"))[0]
    return f"The busiest thread is {label} (busy {duration(top['busy_time_ns'])}, {share})."


def bottleneck(results: dict[str, Any], stragglers: bool = True) -> str:
    """The top bottleneck in one sentence, from the strongest signal the analyses found (stragglers only
    where they apply)."""
    s = results.get("stragglers", pd.DataFrame()) if stragglers else pd.DataFrame()
    steps = results.get("straggler_steps", pd.DataFrame())
    if len(s) and len(steps) and int(s["times_last"].iloc[0]) > 0:
        top = s.iloc[0]
        label = device_labels(s)[0]  # labelled among all devices: with the pid when an instance has several
        n_last, n_steps = int(top["times_last"]), len(steps)
        if n_last >= max(2, 0.3 * n_steps):
            wait = top["wait_caused_ns"] / max(n_last, 1)
            return (f"{label} arrives last at {n_last} of {n_steps} collectives; the others wait "
                    f"{duration(wait)} per step for it.")
    idle = results.get("idle", pd.DataFrame())
    t = results.get("temporal", pd.DataFrame())
    if len(idle) and len(t) and t["span_ns"].sum() > 0:
        share = 100.0 * t["idle_time_ns"].sum() / t["span_ns"].sum()
        by_cat = idle.groupby("idle_category")["idle_time_ns"].sum()
        total = by_cat.sum()
        if share >= 25 and total > 0:
            cat = by_cat.idxmax()
            work = "kernel" if results.get("kind") == "kineto" else "execution"
            why = {"host_wait": f"waiting for the host to launch the next {work}",
                   "kernel_wait": f"in launch overhead between back-to-back {work}s",
                   "other": "for other reasons (no late launch, gaps longer than launch overhead)"}[cat]
            return f"Devices are idle {share:.0f}% of their span, {100 * by_cat[cat] / total:.0f}% of it {why}."
    problems = results.get("problems", pd.DataFrame())
    if len(problems):
        first = problems.iloc[0]
        return f"First problem: {first['kind']} {first['name']} ({first['meaning']})."
    if len(t):
        return "No straggler, dominant idle cause or error stands out." if stragglers else \
            "No dominant idle cause or error stands out."
    return "No device work in this range."


def threads_of(t: pd.DataFrame, span_ns: int | None = None) -> pd.DataFrame:
    """A plain trace's threads as its Summary shows them: real threads only (not Kineto's profiler-wide
    span), busiest first by busy time, and their busy and idle shares of the summarised span when given (one
    measure for every thread, the headline's and the chart's)."""
    if "thread" in t.columns:
        t = t[t["thread"].astype(bool)]
    t = t.sort_values(["busy_time_ns", "events"], ascending=False, kind="stable")
    if span_ns and len(t):
        t = t.assign(busy_time_pctg=100.0 * t["busy_time_ns"] / span_ns,
                     idle_time_pctg=100.0 - 100.0 * t["busy_time_ns"] / span_ns,
                     idle_time_ns=span_ns - t["busy_time_ns"], own_span_ns=t["span_ns"], span_ns=span_ns)
    return t


def temporal_columns(t: pd.DataFrame, kind: str, span_ns: int | None = None,
                     segments: Parts | None = None) -> dict[str, list[Any]]:
    """Per device, worst first (least compute share; a plain trace's threads busiest first, as shares of the
    summarised span `span_ns`), the shares and times of each part; `segments`: the tracks' (`track_parts`)."""
    parts = parts_of(kind)
    if not t.empty and kind == "chrome":
        t = threads_of(t, span_ns)
    if t.empty:
        return {"device": [], "row": [], **{f"{p}_pctg": [] for p in parts}, **{f"{p}_ns": [] for p in parts},
                "span": [], "track": []}
    if kind != "chrome":
        t = t.iloc[np.argsort(t["compute_time_pctg"].to_numpy(), kind="stable")]
    labels = device_labels(t, parts=segments)
    out: dict[str, list[Any]] = {"device": labels, "row": [int(i) for i in t.index],
                                 "track": [str(x) for x in t["track"]] if "track" in t.columns else labels}
    for p in parts:
        out[f"{p}_pctg"] = t[f"{p}_time_pctg"].round(2).tolist()
        out[f"{p}_ns"] = [duration(v) for v in t[f"{p}_time_ns"]]
    out["span"] = [duration(v) for v in t["span_ns"]]
    return out


def idle_columns(idle: pd.DataFrame, order: list[str]) -> dict[str, list[Any]]:
    keys = [c for c in ("rank", "stream", "instance_id", "process_id", "nc_idx") if c in idle.columns]
    if idle.empty:
        return {"device": [], "host_wait": [], "kernel_wait": [], "other": [], "total": []}
    wide = idle.pivot_table(index=keys, columns="idle_category", values="idle_time_ns", aggfunc="sum", fill_value=0,
                            observed=True).reset_index()
    for c in ("host_wait", "kernel_wait", "other"):
        if c not in wide:
            wide[c] = 0
    labels = device_labels(wide)
    if "stream" in wide.columns:
        labels = [f"{lab} stream {s}" for lab, s in zip(labels, wide["stream"], strict=True)]
    wide["device"] = labels
    rank = {d: i for i, d in enumerate(order)}
    wide = wide.sort_values("device", key=lambda s: s.map(lambda d: rank.get(d, len(rank))))
    return {"device": wide["device"].tolist(),
            **{c: (wide[c] / 1e6).round(4).tolist() for c in ("host_wait", "kernel_wait", "other")},
            "total": [duration(v) for v in wide[["host_wait", "kernel_wait", "other"]].sum(axis=1)]}


def short_label(name: str, width: int = 40) -> str:
    """A name short enough for an axis. A C++ signature (a kernel: `void ns::kernel<...>(...)`) becomes its
    qualified name; any other text keeps its words and, when too long, loses its middle ("<built-in method
    to of Tensor … at 0x7f0d9c8ac550>"), cut at word boundaries; the full name is on hover."""
    s = " ".join(str(name).split())
    s = ADDRESS.sub("", s)  # a Python object's address says nothing on an axis
    s = PATH.sub(r"\1", s)  # a source file by its name, not its directories
    if _is_signature(s):
        bare = _without_groups(s)
        s = bare.replace("void ", "").strip().split(" ")[-1] or s
    return s if len(s) <= width else middle_cut(s, width)


def _without_groups(s: str) -> str:
    for open_, close in (("(", ")"), ("<", ">")):
        out, depth = [], 0
        for ch in s:
            if ch == open_:
                depth += 1
            elif ch == close and depth:
                depth -= 1
            elif depth == 0:
                out.append(ch)
        s = "".join(out) if "".join(out).strip() else s
    return s


ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
PATH = re.compile(r"(?:[\w.~-]*/)+([\w.-]+\.\w+)")
SIGNATURE = re.compile(r"^(?:void\s+)?[A-Za-z_][\w:]*(?:<.*>)?\s*\(.*\)$")


def _is_signature(s: str) -> bool:
    """A C++ function or kernel signature: a (qualified) name, template arguments, its argument list."""
    return bool(SIGNATURE.match(s)) and bool(_without_groups(s).strip())


BREAKS = " ,;/:._("


def middle_cut(s: str, width: int) -> str:
    """`s` in `width` characters: its head and tail, each cut at a word boundary when one is near, joined by
    an ellipsis."""
    head_len = (width - 1) * 3 // 5
    tail_len = width - 1 - head_len
    head, tail = s[:head_len], s[len(s) - tail_len:]
    cut = max(head.rfind(c) for c in BREAKS)
    if cut >= head_len - 10:
        head = head[:cut + 1] if head[cut] != " " else head[:cut]
    starts = [i for i, c in enumerate(tail) if c in BREAKS and i <= 10]
    if starts:
        tail = tail[starts[0] + 1:] if tail[starts[0]] == " " else tail[starts[0]:]
    return f"{head.rstrip()}…{tail.lstrip()}"


def unique_labels(names: list[str], width: int = 40) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        lab = short_label(n, width)
        seen[lab] = seen.get(lab, 0) + 1
        if seen[lab] > 1:  # the same short name twice: number it, still within the width
            tag = f" #{seen[lab]}"
            lab = (lab if len(lab) + len(tag) <= width else lab[: width - len(tag) - 1] + "…") + tag
        out.append(lab)
    return out


def top_columns(df: pd.DataFrame, label: str, total: str, count: str, mean: str, n: int = 10,
                scale: float = 1e6, shorten: bool = True) -> dict[str, list[Any]]:
    """The n largest by total, largest on top; totals in ms (scale: units per ms of the source column)."""
    if df.empty:
        return {"label": [], "full": [], "total_ms": [], "count": [], "mean": [], "share": []}
    top = df.nlargest(n, total)[::-1]
    whole = float(df[total].sum()) or 1.0
    full = [str(x) for x in top[label]]
    return {"label": unique_labels(full) if shorten else full, "full": full, "total_ms": (top[total] / scale).round(4).tolist(),
            "count": [int(x) for x in top[count]], "mean": [duration(v * 1e6 / scale) for v in top[mean]],
            "share": [f"{100 * v / whole:.1f}%" for v in top[total]]}


def launch_columns(launches: pd.DataFrame) -> dict[str, list[Any]]:
    """Per rank and stream: launches, median, 95th percentile and largest launch delay (µs), worst p95 first."""
    keys = [c for c in ("rank", "stream") if c in launches.columns]
    if launches is None or launches.empty or "launch_delay_ns" not in launches or not keys:
        return {"device": [], "median_us": [], "p95_us": [], "max_us": [], "launches": []}
    g = launches.groupby(keys, observed=True, sort=True)["launch_delay_ns"]
    df = pd.DataFrame({"median_us": g.median() / 1e3, "p95_us": g.quantile(0.95) / 1e3, "max_us": g.max() / 1e3,
                       "launches": g.size()}).reset_index().sort_values("p95_us", ascending=False, kind="stable")
    label = [" ".join(f"{'rank' if k == 'rank' else 'stream'} {v}" for k, v in zip(keys, row, strict=True))
             for row in df[keys].itertuples(index=False)]
    return {"device": label, "median_us": df["median_us"].round(3).tolist(), "p95_us": df["p95_us"].round(3).tolist(),
            "max_us": df["max_us"].round(3).tolist(), "launches": df["launches"].astype(int).tolist()}
