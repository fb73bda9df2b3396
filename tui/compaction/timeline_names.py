"""The names the compaction timeline uses for regions, width sources and strategies.

Kept in a module of their own so that the timeline widget can draw with them before the timeline
model (and the planners it imports) is loaded, which happens only once there is a session to show.
"""

REGION_HEAD = "head"
REGION_SUMMARISED = "summarised"
REGION_SUMMARY = "summary"
REGION_KEPT = "kept"
REGION_AFTER = "after"

SOURCE_USAGE = "usage"
SOURCE_ESTIMATE = "estimate"

STRATEGY_KEEP_RECENT = "keep-recent"
STRATEGY_HEAD_TAIL = "head-tail"
# The settings default (tests/test_timeline_model.py checks they agree); not read from the settings model
# here, because importing pydantic-settings would slow the first frame.
DEFAULT_STRATEGY = STRATEGY_KEEP_RECENT
