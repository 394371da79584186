"""What commands declare of their fields: the patterns of names and ids, and a limit on every
text and every list. Declared as msgspec ``Meta``, a constraint is enforced by the decoder
wherever a command is read (the NATS service, HTTP, the audit's reading of stored commands) and
shown by the JSON Schema and the OpenAPI document, both generated from the same Structs.

``SCHEMA_ONLY`` constraints are shown in the schemas and enforced by the family's rules, which
keep their own messages and the order PROTOCOLS.md gives them. What spans fields, the ledger's
state or the clock (a deadline in the future, a threshold within the electorate) is the rules'
alone; the schemas say so in a description.

The limits are far above what a real fleet sends; over one, a command is ``invalid``, naming
the field and the limit, and nothing is written.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

AGENT_SLUG = r"^[a-z0-9][a-z0-9-]{0,62}$"
PROPOSAL_ID = r"^[0-9A-F]{8}$"
DURATION = r"^[0-9]+[smhd]$"  # 72h, 14d, 30m, 45s (above zero, at most a century: the rules' to check)
PUBLIC_KEY = r"^U[A-Z2-7]{55}$"  # a user's public nkey; its checksum is the edge's to check
SHA256_HEX = r"^[0-9a-f]{64}$"
NON_BLANK = r"\S"  # a character other than whitespace, as str.strip() counts it
# A page's path inside wiki/, or from the repository's root with wiki/ before it: plain segments,
# at most 255 characters inside wiki/, and never where the wiki keeps its threads or its log.
PAGE_PATH_LIMIT = 255
PAGE_SEGMENTS = r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*"
PAGE_PATH = rf"^(?!(wiki/)?(agents/dialogue|log\.md)(/|$))(?=(wiki/)?.{{1,{PAGE_PATH_LIMIT}}}$){PAGE_SEGMENTS}$"
PAGE_PATH_RULE = (f"a page's path inside wiki/ (or from the repository's root, wiki/ first): segments of letters, "
                  f"digits, '.', '_' and '-', each beginning with a letter or a digit, joined by '/', at most "
                  f"{PAGE_PATH_LIMIT} characters, and not agents/dialogue/ or log.md, where the wiki keeps its "
                  f"threads and its log")

TEXT_LIMIT = 64 * 1024  # bytes of UTF-8; an artifact or a page may be larger (its own limit)
ARTIFACT_LIMIT = 512 * 1024
COMMAND_ID_LIMIT = 256  # bytes: an idempotency key, copied into every event the command appends

AGENTS_LIMIT = 1000  # a roster, an electorate, a thread's participants
DISSENT_LIMIT = 100  # dissent items in one vote, new atoms in one split
DECISION_LIMIT = 1000  # notes, caveats or atoms in one human decision
QUESTIONS_LIMIT = 100  # open questions, or topics, a thread opens with
CLOSURE_PAGES_LIMIT = 50  # canon pages one closure proposes: all are written in one append
ROLES_LIMIT = 100  # reviewer roles a task names
FINDINGS_LIMIT = 1000  # findings in one review


def schema_only(**keywords: Any) -> msgspec.Meta:
    """JSON Schema keywords the decoder does not enforce: a rule does, with its own message."""
    return msgspec.Meta(extra_json_schema=keywords)


def texts(limit: int = TEXT_LIMIT, unit: str = "bytes of UTF-8") -> msgspec.Meta:
    return msgspec.Meta(max_length=limit, description=f"at most {limit:,} {unit}")


def listing(limit: int, what: str, least: int | None = None) -> msgspec.Meta:
    return msgspec.Meta(min_length=least, max_length=limit, description=f"at most {limit:,} {what}")


Text = Annotated[str, texts()]
Said = Annotated[str, texts(), schema_only(pattern=NON_BLANK)]  # required: not empty, not only spaces
LongSaid = Annotated[str, texts(ARTIFACT_LIMIT), schema_only(pattern=NON_BLANK)]  # an artifact, a page
Agent = Annotated[str, msgspec.Meta(pattern=AGENT_SLUG, description="an agent's kebab slug")]
Slug = Annotated[str, msgspec.Meta(pattern=AGENT_SLUG, description="a kebab slug")]
Agents = Annotated[list[Agent], listing(AGENTS_LIMIT, "distinct agents", least=1), schema_only(uniqueItems=True)]
ProposalId = Annotated[str, msgspec.Meta(pattern=PROPOSAL_ID, description="8 uppercase hex characters")]
Duration = Annotated[str, msgspec.Meta(pattern=DURATION, description="above zero and at most a century")]
PagePath = Annotated[str, msgspec.Meta(pattern=PAGE_PATH, description=PAGE_PATH_RULE)]
