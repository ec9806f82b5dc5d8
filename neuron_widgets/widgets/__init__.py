"""The widgets: Timeline, JobTimeline, GroupingSelector, EventDetails, Summary, link() and align() of timelines, device views."""

from .details import EventDetails
from .device_picker import DeviceProfilePicker
from .device_viewer import DeviceTraceViewer
from .grouping_selector import GroupingSelector
from .job.timeline import JobTimeline
from .linking import TimelineLink, link
from .summary import Summary
from .timeline import Timeline
from .timeline_align import TimelineAlignment, align

__all__ = ["DeviceProfilePicker", "DeviceTraceViewer", "EventDetails", "GroupingSelector", "JobTimeline", "Summary", "Timeline",
           "TimelineAlignment", "TimelineLink", "align", "link"]
