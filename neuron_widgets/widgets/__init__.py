"""The widgets: Timeline, GroupingSelector, EventDetails, and link() between timelines."""

from .details import EventDetails
from .grouping_selector import GroupingSelector
from .linking import TimelineLink, link
from .timeline import Timeline

__all__ = ["EventDetails", "GroupingSelector", "Timeline", "TimelineLink", "link"]
