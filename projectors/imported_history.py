"""An imported record in a status view: its history folded as its own events would have been,
and what the view says of where it came from."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from athenaeum.projectors.views import Document


def folded(event: Any, current: Document, apply: Callable[[Any, Document], Document | None]) -> tuple[Document, Document]:
    """``event`` (an ``...Imported`` whose ``history()`` gives the events it stands for) folded
    onto ``current`` by ``apply``, and the view's ``imported`` entry."""
    document = current
    for step in event.history():
        document = apply(step, document) or document
    return document, {"source": event.source, "content_sha256": event.content_sha256, "findings": len(event.findings)}
