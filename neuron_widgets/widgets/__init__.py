"""The widgets: Timeline, GroupingSelector, EventDetails, Summary, link() between timelines, and the device-trace widgets."""

from .details import EventDetails
from .device_picker import DeviceProfilePicker
from .device_viewer import DeviceTraceViewer
from .grouping_selector import GroupingSelector
from .linking import TimelineLink, link
from .summary import Summary
from .timeline import Timeline

__all__ = ["DeviceProfilePicker", "DeviceTraceViewer", "EventDetails", "GroupingSelector", "Summary", "Timeline",
           "TimelineLink", "link"]
