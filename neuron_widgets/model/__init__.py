"""The trace model: Profile, grouping, lanes, filters."""

from .filters import Filters, parse_time
from .grouping import GROUPINGS
from .profile import Profile, TrackIndex
from .schema import EVENT_COLUMNS, HARDWARE_EVENTS

__all__ = ["EVENT_COLUMNS", "GROUPINGS", "HARDWARE_EVENTS", "Filters", "Profile", "TrackIndex", "parse_time"]
