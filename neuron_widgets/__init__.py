"""neuron-widgets: Jupyter widgets for AWS Neuron profiles.

`from neuron_widgets import Timeline, EventDetails, GroupingSelector, DeviceTraceViewer,
DeviceProfilePicker, Summary, link, align, export_html, export_perfetto, load_job` works; the widgets,
exporters and jobs are imported on first use, so `import neuron_widgets` for loading and
analyses does not pull in the widget stack (nor Dask). So are the subpackages: `nw.analysis.across(...)`
works after a bare `import neuron_widgets as nw`, importing the analyses when first asked for.
"""

from importlib import import_module

from .errors import LoadWarnings, ProfileError
from .faces import lazy_face
from .model import GROUPINGS, HARDWARE_EVENTS, Profile
from .model.device.trace import DeviceTrace
from .readers import load_profile
from .readers.neuron.device_trace import load_device_trace
from .sample import sample_profile, write_sample

__version__ = "0.1.0"

# Name -> module that defines it, imported when the name is first asked for.
_LAZY = {
    "Timeline": ".widgets", "JobTimeline": ".widgets", "EventDetails": ".widgets", "GroupingSelector": ".widgets",
    "DeviceTraceViewer": ".widgets", "DeviceProfilePicker": ".widgets", "Summary": ".widgets", "link": ".widgets",
    "align": ".widgets",
    "export_html": ".export", "export_profile": ".export", "export_perfetto": ".export.perfetto",
    "export_parquet": ".export.parquet", "load_job": ".job", "Job": ".job",
}

__all__ = ["GROUPINGS", "HARDWARE_EVENTS", "DeviceTrace", "LoadWarnings", "Profile", "ProfileError", "__version__",
           "load_device_trace", "load_profile", "sample_profile", "write_sample", *_LAZY]


# Subpackages reached as attributes (`nw.analysis.stragglers(p)`, as the README writes them), imported when first
# asked for: `import neuron_widgets` stays as light as its eager imports above.
_SUBPACKAGES = ("analysis", "export", "job", "model", "readers", "sample", "summary", "widgets")

_name_of, __dir__ = lazy_face(__name__, _LAZY, [*__all__, *_SUBPACKAGES])


def __getattr__(name: str) -> object:
    if name in _SUBPACKAGES:
        return import_module(f".{name}", __name__)  # the import sets it as an attribute: asked once
    return _name_of(name)

