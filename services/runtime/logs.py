"""serve's log: one line per command, and what the services say, on stderr, as text or as
JSON lines (``--log-format json``) for a log shipper."""

from __future__ import annotations

import logging
import sys
from datetime import datetime, timezone

import msgspec

FORMATS = ("text", "json")
LEVELS = ("debug", "info", "warning", "error")
# The attributes every LogRecord has: whatever else a record carries was given as ``extra``.
_STANDARD = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line |= {key: value for key, value in vars(record).items() if key not in _STANDARD}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return msgspec.json.encode(line).decode()


def configure(level: str = "info", form: str = "text") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines() if form == "json" else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # Their routine chatter (a connection, an MCP session opened) is not the ledger's.
    for noisy in ("nats", "asyncio", "uvicorn.access", "mcp"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
