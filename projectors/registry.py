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
