"""neuron-widgets: Jupyter widgets for AWS Neuron profiles."""

from .errors import LoadWarnings, ProfileError
from .model import GROUPINGS, HARDWARE_EVENTS, Profile
from .model.device_trace import DeviceTrace
from .readers import load_profile
from .readers.device import load_device_trace
from .sample import sample_profile, write_sample


def export_perfetto(obj, path, **kwargs):
    """Write a Profile, Timeline or DeviceTraceViewer as a Perfetto trace (see export.perfetto)."""
    from .export.perfetto import export_perfetto as write

    return write(obj, path, **kwargs)


__version__ = "0.1.0"

__all__ = ["GROUPINGS", "HARDWARE_EVENTS", "DeviceTrace", "LoadWarnings", "Profile", "ProfileError", "__version__",
           "export_perfetto", "load_device_trace", "load_profile", "sample_profile", "write_sample"]
