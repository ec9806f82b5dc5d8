"""The `neuron-widgets` command."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from . import load_profile, sample_profile, write_sample
from .errors import ProfileError
from .model.info import format_summary
from .readers import cache as parse_cache
from .sample.job import write_job


def _info(args: argparse.Namespace) -> int:
    if args.sample == (args.path is not None):
        print("neuron-widgets info: give a PATH or --sample", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    filters = {k: v for k, v in (("neuron_cores", args.neuron_cores), ("event_types", args.event_types),
                                 ("instances", args.instances)) if v is not None}
    if args.time_range:
        a, _, b = args.time_range.partition(":")
        filters["time_range"] = (a, b)
    profile = sample_profile(**filters) if args.sample else load_profile(args.path, **filters)
    elapsed = time.perf_counter() - t0
    summary = profile.summary()
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        print(format_summary(summary))
        print(f"loaded in {elapsed:.2f} s")
    return 0


def _sample(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    if args.nodes is not None:
        if args.nodes < 2:
            print(f"neuron-widgets sample: --nodes must be 2 or more, not {args.nodes}", file=sys.stderr)
            return 2
        path = write_job(args.directory, nodes=args.nodes, events=args.events, seed=args.seed,
                         processes=args.processes, cores=args.cores)
        print(f"wrote a {args.nodes}-node job to {path} (one profile per node) in {time.perf_counter() - t0:.1f} s; "
              f"open it with nw.load_job({str(path)!r})")
        return 0
    path = write_sample(args.directory, events=args.events, seed=args.seed, instances=args.instances,
                        processes=args.processes, cores=args.cores)
    print(f"wrote a sample profile to {path} in {time.perf_counter() - t0:.1f} s")
    return 0


def _export(args: argparse.Namespace) -> int:
    from .export import export_profile  # the export stack (~0.1 s): only for the commands that write

    if args.sample == (args.path is not None):
        print("neuron-widgets export: give a PATH or --sample", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    profile = sample_profile() if args.sample else load_profile(args.path)
    loaded = time.perf_counter() - t0
    got = export_profile(args.output, profile, grouping=args.grouping, time_range=args.range or "all",
                         title=args.title, max_mb=args.max_mb)
    for s in got["timelines"]:
        detail = (f"{s['exact']:,} in full detail, {s['merged']:,} merged into {s['blocks']:,} blocks"
                  if s["merged"] else "all in full detail")
        print(f"wrote {got['path']}: {got['bytes'] / 1e6:.1f} MB, {s['events']:,} events ({detail}); "
              f"loaded in {loaded:.1f} s, exported in {got['seconds']:.1f} s")
    return 0


def _convert(args: argparse.Namespace) -> int:
    # The export stack, and Perfetto's compiled protos (~0.5 s): only for the commands that write.
    from .export.parquet import export_parquet
    from .export.perfetto import export_perfetto

    to = args.to or ("parquet" if not args.output.endswith((".pftrace", ".perfetto-trace", ".pb")) else "perfetto")
    t0 = time.perf_counter()
    profile = load_profile(args.path, prepare=False)
    loaded = time.perf_counter() - t0
    if to == "perfetto":
        got = export_perfetto(profile, args.output, grouping=args.grouping)
        print(f"wrote {got['path']}: {got['events']:,} events, {got['bytes'] / 1e6:.1f} MB, grouped by "
              f"{got['grouping']}; loaded in {loaded:.1f} s, written in {got['seconds']:.1f} s")
    else:
        got = export_parquet(profile, args.output)
        print(f"wrote {got['path']}: {got['events']:,} events in {', '.join(got['files'])}; "
              f"loaded in {loaded:.1f} s, written in {got['seconds']:.1f} s")
        if got["skipped_counters"]:
            print(f"note: the Parquet layout has no table for these counters, not written: {', '.join(got['skipped_counters'])} "
                  "(a .pftrace keeps them)")
    return 0


def _cache(args: argparse.Namespace) -> int:
    if args.clear:
        freed = parse_cache.clear()
        print(f"emptied {parse_cache.root()}: {freed / 1e6:.1f} MB freed")
        return 0
    listed = parse_cache.entries()
    total = sum(e["bytes"] for e in listed)
    print(f"{parse_cache.root()}: {len(listed)} parsed traces, {total / 1e6:.1f} MB (cap {parse_cache.cap_bytes() / 1e6:.0f} MB, "
          "NEURON_WIDGETS_CACHE_MB)")
    for e in listed:
        used = time.strftime("%Y-%m-%d %H:%M", time.localtime(e["last_used"]))
        print(f"  {e['key'][:12]}  {e['format']:<20} {e['rows']:>12,} events {e['bytes'] / 1e6:>9.1f} MB  last used {used}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="neuron-widgets", description="Explore AWS Neuron profiles.")
    sub = p.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="summarise a profile")
    info.add_argument("path", nargs="?", help="a Neuron Explorer Parquet directory or a Chrome/PyTorch trace")
    info.add_argument("--sample", action="store_true", help="use the bundled sample profile")
    info.add_argument("--neuron-cores", help="only these NeuronCores, e.g. 0,2-3 (events tied to no core are kept)")
    info.add_argument("--event-types", help="only these event types, comma separated: hardware, software, names, "
                                            "* wildcards; ^ excludes, e.g. hardware,^cc_exec_barrier")
    info.add_argument("--instances", help="only these instances: comma-separated ids, or patterns with *")
    info.add_argument("--time-range", help="only events overlapping START:END, e.g. 10ms:20ms from the profile start, "
                                           "or absolute ns")
    info.add_argument("--json", action="store_true", help="print the summary as JSON")
    info.set_defaults(run=_info)
    sample = sub.add_parser("sample", help="write a sample profile in the Neuron Explorer Parquet layout")
    sample.add_argument("directory", help="where to write it (created if missing; files there are overwritten)")
    sample.add_argument("--events", type=int, default=20_000,
                        help="about how many system events to write (default %(default)s; at least 3 training steps)")
    sample.add_argument("--seed", type=int, default=0,
                        help="random seed: the same seed and options write the same profile (default %(default)s)")
    sample.add_argument("--instances", type=int, default=2,
                        help="EC2 instances in the profile (default %(default)s; with --nodes, one per node instead)")
    sample.add_argument("--processes", type=int, default=2, help="training processes per instance (default %(default)s)")
    sample.add_argument("--cores", type=int, default=2, help="NeuronCores per process (default %(default)s)")
    sample.add_argument("--nodes", type=int, default=None,
                        help="write a multi-node job instead: one profile per node in DIRECTORY/node-NN, with a "
                             "straggler on the last node and a hang on the first (--events counts the whole job)")
    sample.set_defaults(run=_sample)
    export = sub.add_parser("export", help="write a profile's timeline to one offline, interactive HTML file")
    export.add_argument("path", nargs="?", help="a Neuron Explorer Parquet directory or a Chrome/PyTorch trace")
    export.add_argument("--sample", action="store_true", help="use the bundled sample profile")
    export.add_argument("-o", "--output", required=True, help="the HTML file to write")
    export.add_argument("--grouping", help="the grouping shown first: default, cpu_device, neuron_core, thread, "
                                           "process or instance")
    export.add_argument("--range", help="START:END to export, e.g. 12.5ms:40ms from the profile start, or absolute ns "
                                        "(default: the whole profile)")
    export.add_argument("--max-mb", type=float, default=25.0, help="size budget of the file in MB (default 25)")
    export.add_argument("--title", help="the page's title (default: the file's name and its number of events)")
    export.set_defaults(run=_export)
    convert = sub.add_parser("convert", help="write a profile as a Perfetto trace or in the Neuron Explorer Parquet layout")
    convert.add_argument("path", help="any profile neuron-widgets reads")
    convert.add_argument("-o", "--output", required=True, help="a .pftrace file, or a directory for --to parquet")
    convert.add_argument("--to", choices=["perfetto", "parquet"],
                         help="the output format (default: perfetto for a .pftrace name, else parquet)")
    convert.add_argument("--grouping", help="the grouping whose labels name the Perfetto tracks (default: the profile's)")
    convert.set_defaults(run=_convert)
    cache = sub.add_parser("cache", help="show or empty the cache of parsed traces")
    cache.add_argument("--clear", action="store_true", help="delete every entry")
    cache.set_defaults(run=_cache)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except ProfileError as exc:
        print(f"neuron-widgets: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"neuron-widgets: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an output path that cannot be written
        print(f"neuron-widgets: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
