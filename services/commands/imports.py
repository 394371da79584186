"""Import commands sent together, on one request (``athenaeum import`` sends its records so):
each item a command with its own signature, checked, decided and answered as on its own
endpoint; the reply a JSON array of the items' replies, in order. What the command service
gains is one write to the ledger for many records, instead of one each."""

from __future__ import annotations

import msgspec

from athenaeum.services.commands.reading import decode_typed
from athenaeum.services.commands.routes import ROUTES, SUBJECT_PREFIX

IMPORT_SUBJECT = f"{SUBJECT_PREFIX}.import"
IMPORT_ROUTES = {route.name: route for route in ROUTES if route.verb == "import" and route.exposed}
MAX_ITEMS = 1000  # items in one request; each appends at least one record, and one append holds at most 1000


class ImportItem(msgspec.Struct, forbid_unknown_fields=True):
    route: str  # the command's route (``thread.import``), which its signature names
    command: msgspec.Raw  # its JSON, as its own endpoint takes it
    signature: str | None = None  # as the Athenaeum-Signature header of its own endpoint
    signed_at: str | None = None  # as the Athenaeum-Signed-At header


_items = msgspec.json.Decoder(list[ImportItem])


def decode_items(body: bytes) -> list[ImportItem]:
    return decode_typed(body, _items)
