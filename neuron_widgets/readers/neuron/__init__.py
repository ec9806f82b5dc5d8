"""The Neuron formats: Neuron Explorer Parquet, legacy JSON, the runtime's JSON, device profiles and raw capture
directories."""

from ...faces import lazy_face

# Name -> the module that defines it (callers inside the package import the modules themselves).
_LAZY = {
    "load_device_trace": ".device_trace",
    "profile_dirs": ".parquet",
    "is_device_json": ".legacy_json",
    "Inventory": ".capture",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_face(__name__, _LAZY)
