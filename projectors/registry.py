"""Every view's projector, in the order the projector service and the auditor apply them."""

from __future__ import annotations

from athenaeum.projectors import (
    a2a_tasks,
    fleet_activity,
    page_status,
    pending_page,
    pending_quorum,
    pending_ratification,
    pending_thread,
    quorum_scratchpad,
    quorum_status,
    ratification_status,
    task_status,
    thread_status,
)

# The shape of the documents these projectors write: one more whenever a change to them would
# make the views a ledger gives differ from those an earlier version wrote (a field added, say).
# Views written in another shape are dropped and written again from the ledger when the
# projector service starts. 1: the views from before the shape was recorded; 2: a ratification's
# ``changed_at``.
SHAPE = 2

# Order matters: later projectors read the status views as already updated for the event.
PROJECTORS = (
    fleet_activity.project,
    a2a_tasks.project,
    ratification_status.project,
    quorum_status.project,
    quorum_scratchpad.project,
    thread_status.project,
    page_status.project,
    task_status.project,
    pending_ratification.project,
    pending_quorum.project,
    pending_thread.project,
    pending_page.project,
)
