"""Writes tour.ipynb (kept as a script so the notebook's cells are reviewed as code). Run: python notebooks/make_tour.py"""

from pathlib import Path

import nbformat as nbf

md, code = nbf.v4.new_markdown_cell, nbf.v4.new_code_cell
cells = [
    md("# neuron-widgets tour\n\nThe System Trace Viewer in a notebook: the bundled sample profile (2 instances, "
       "2 processes each, 2 NeuronCores each), then a PyTorch Kineto trace.\n\n"
       "**Keys** (click the timeline first): W/S or ↑/↓ zoom, A/D or ←/→ pan, 0 shows everything, "
       "F fits the selected range, Esc clears. Wheel zooms at the cursor, Shift+wheel or drag pans, "
       "Shift+drag or a drag on the time axis selects a range."),
    code("import os\nfrom pathlib import Path\n\nimport neuron_widgets as nw\nfrom neuron_widgets.widgets import "
         "EventDetails, GroupingSelector, Timeline, link\n\nprofile = nw.sample_profile()\nprofile"),
    md("## The timeline\nTracks are labelled as in Neuron Explorer. The counter tracks at the top show host memory "
       "and HBM use (hover for the breakdown by category); tick **CPU** for per-core host CPU utilisation. "
       "Each NeuronCore has its host-device transfer tracks (`NC:0/host_to_device_transfers`, "
       "`device_to_host_transfers`) and a bandwidth track per direction among the counters "
       "(*Host-device bandwidth*, collapsed at first). "
       "The strip above the axis is the whole profile's event density: click or drag it to move the view. "
       "The red marks are errors (a `numerical_err`, an `nrt_execute` that returned 1003); the dashed one never completed."),
    code("tl = Timeline(profile, height=520)\ntl"),
    md("## Grouping\nThe six grouping modes of Neuron Explorer. The selector is bound to the timeline above."),
    code("GroupingSelector(tl)"),
    md("## Event details\nClick an event in the timeline: its properties, arguments and dependency chain show "
       "here. Click a row of Upstream or Downstream to move the timeline to that event."),
    code("details = EventDetails(tl)\ndetails"),
    md("## From Python\nThe view state is readable and settable."),
    code("tl.time_range = ('20ms', '45ms')  # relative to the profile start; absolute ns work too\n"
         "tl.brush_range = ('25ms', '30ms')\n"
         "tl.time_range, tl.brush_range"),
    code("tl.selected_events().groupby('name')['duration_ns'].agg(['count', 'sum']).sort_values('sum', ascending=False).head()"),
    code("executions = profile.events.query(\"name == 'nc_exec_running'\")\n"
         "tl.highlight(executions.nlargest(5, 'duration_ns'))  # the five longest executions get an outline\n"
         "tl.select(int(executions.iloc[0]['id']))\n"
         "tl.selection['name'], tl.selection['args']"),
    md("## Two linked views\nTwo timelines are independent until linked; then their ranges and selections follow each "
       "other (also across two profiles, by time from each profile's start)."),
    code("tl_cores = Timeline(profile, grouping='neuron_core', height=360)\nlink(tl, tl_cores)\ntl_cores"),
    md("## A Kineto trace\nA PyTorch profiler (Kineto) GPU trace, labelled as its own tools show it: the process by "
       "its name and id, GPUs by Kineto's labels (`GPU 0`), threads and streams by their names (`stream 7`), the CPU "
       "first. The package carries a small two-rank one, `nw.sample_profile('kineto')`, in which rank 0 reaches the "
       "all-reduce late; where HTA's test traces are on the machine (a clone's `tests/data/traces`, or "
       "`NEURON_WIDGETS_TRACES`), a real 109k-event "
       "trace recorded by someone else is opened instead."),
    code("traces = Path(os.environ.get('NEURON_WIDGETS_TRACES', '../tests/data/traces'))\n"
         "recorded = traces / 'hta' / 'trace_diff_control_rank3of8.json.gz'\n"
         "kineto = nw.load_profile(recorded) if recorded.is_file() else nw.sample_profile('kineto')\n"
         "print('Kineto trace:', recorded if recorded.is_file() else \"the bundled sample, nw.sample_profile('kineto')\")\n"
         "tl_kineto = Timeline(kineto, grouping='thread', height=420)\ntl_kineto"),
    code("EventDetails(tl_kineto)"),
    md("## Analyses\nWhere the time goes, why cores sit idle, who is late, what failed: functions of a profile "
       "that return DataFrames (times in ns). On the sample, one core arrives last at most all-reduce barriers, one "
       "execution hits a numerical error and one never completes."),
    code("from neuron_widgets import analysis as A\n\n"
         "shares = ['compute_time_pctg', 'collective_time_pctg', 'barrier_time_pctg', 'idle_time_pctg']\n"
         "A.temporal_breakdown(profile)[['instance_id', 'nc_idx', *shares]]"),
    code("A.stragglers(profile).head(3)  # worst first: how often last at the barrier, how late"),
    code("problems = A.errors_and_hangs(profile)\nproblems[['kind', 'name', 'instance_id', 'nc_idx', 'exec_id', "
         "'model_name', 'code', 'meaning']]"),
    code("# What the hung core did last (NDET's advice: read the tail)\n"
         "A.last_events(profile, problems.iloc[-1], n=6)[['name', 'start_ts', 'duration_ns', 'incomplete']]"),
    code("neffs, names = A.kernel_breakdown(profile)\nneffs"),
    md("## Summary\nThe analyses as charts, bound to the first timeline: click a bar or a row to select in it, "
       "brush a range in the timeline to summarise that range."),
    code("from neuron_widgets.widgets import Summary\n\nsummary = Summary(tl)\nsummary"),
    md("The same functions on the Kineto trace follow HTA's definitions, so the numbers compare with HTA's."),
    code("A.temporal_breakdown(kineto)"),
    code("A.idle_time_breakdown(kineto).query('idle_time_ns > 0')"),
    md("## Device traces\nClick an `nc_exec_running` event in the first timeline (search for it with the search box): "
       "the instruction-level trace of that execution loads here, aligned to the host clock with the execution's "
       "sync point, with a track per engine and per DMA queue. It is read only then, and cached."),
    code("from neuron_widgets.widgets import DeviceProfilePicker, DeviceTraceViewer\n\n"
         "device = DeviceTraceViewer(tl, height=380)\ndevice"),
    code("EventDetails(device)  # instruction details: opcode, operands, HLO name, layer"),
    md("The device profiles the capture holds, as in Neuron Explorer's Device Profiles List: pick one and Submit."),
    code("DeviceProfilePicker(tl)"),
    md("The same device trace from Python: its tables are DataFrames, on the host clock."),
    code("trace = profile.device_trace(int(executions.iloc[0]['id']))  # read once, then cached\n"
         "print(trace)\ntrace.instructions.groupby('timeline_track')['duration_ns'].describe()"),
    md("## Share a view\nOne HTML file with the timeline and its details, as they are now: it opens in any browser, "
       "offline, without a kernel, and stays interactive (zoom, click, grouping). Past `max_mb` the shortest "
       "events are merged into blocks, and the page says so."),
    code("from neuron_widgets.export import export_html\n\n"
         "got = export_html('tour-view.html', tl, details, time_range='all', title='neuron-widgets tour')\n"
         "print(f\"{got['path']}: {got['bytes'] / 1e6:.2f} MB, {got['timelines'][0]['exact']:,} events in full detail\")"),
]
nb = nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                 "language": "python"}})
nbf.write(nb, Path(__file__).with_name("tour.ipynb"))
