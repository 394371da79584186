"""The web page's views, rendered on the server from the same queries the CLI and HTTP reads
ask: readable without JavaScript; the script only signs the forms and follows the live
updates (see ``static/ui.js``)."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

from litestar import get
from litestar.handlers import HTTPRouteHandler
from litestar.response import Redirect, Template

from athenaeum.aggregates.rules import SLUG
from athenaeum.services.commands.replies import http_status
from athenaeum.services.http.common import Gateway

LISTED = 200  # records a list shows; the CLI's list pages through more


def handlers(gateway: Gateway) -> list[HTTPRouteHandler]:
    async def shown(template: str, name: str, **fields: Any) -> Template:
        """``template`` with the query's result as ``record``, or the error page with its status."""
        answer = await gateway.query(name, **fields)
        if not answer["ok"]:
            return _refused(answer["error"])
        return Template(template_name=template, context={"record": answer["result"]})

    async def listed(family: str) -> list[dict[str, Any]]:
        answer = await gateway.query(f"{family}.list", limit=LISTED)
        return answer["result"]["items"] if answer["ok"] else []

    @get("/ui", include_in_schema=False)
    async def home() -> Template:
        return Template(template_name="home.html", context={})

    @get("/ui/inbox", include_in_schema=False)
    async def inbox_of(agent: str) -> Redirect:
        """The sign-in form's answer without the script: the principal's own inbox."""
        return Redirect(f"/ui/inbox/{quote(agent, safe='')}")

    @get("/ui/inbox/{agent:str}", include_in_schema=False)
    async def inbox(agent: str) -> Template:
        if not SLUG.fullmatch(agent):
            return _refused({"code": "invalid", "message": f"{agent!r} is not an agent slug", "field": "agent"})
        return await shown("inbox.html", "check", agent=agent)

    def family_pages(plural: str, family: str, show: str, key: str) -> list[HTTPRouteHandler]:
        """``/ui/<plural>``, the family's records, and ``/ui/<plural>/<id>``, one of them."""
        @get(f"/ui/{plural}", include_in_schema=False, name=f"ui-{plural}")
        async def listing() -> Template:
            return Template(template_name=f"{plural}.html", context={"records": await listed(family)})

        @get(f"/ui/{plural}/{{record_id:str}}", include_in_schema=False, name=f"ui-{family}")
        async def one(record_id: str) -> Template:
            return await shown(f"{family}.html", show, **{key: record_id})

        return [listing, one]

    @get("/ui/canon", include_in_schema=False)
    async def canon(project: str | None = None) -> Template:
        """Every page with where each agent stands; and a project's tasks, arbitrations first."""
        rows = await listed("page")
        answers = await asyncio.gather(*(gateway.query("page.show", page=row["page"]) for row in rows))
        pages = [answer["result"] for answer in answers if answer["ok"]]
        tasks: list[dict[str, Any]] = []
        refusal = None
        if project:
            answer = await gateway.query("task.list", project_id=project)
            if answer["ok"]:
                tasks = sorted(answer["result"]["tasks"], key=lambda task: (task["status"] != "arbitrating", task["id"]))
            else:
                refusal = answer["error"]
        return Template(template_name="canon.html", context={
            "pages": pages, "project": project or "", "tasks": tasks, "refusal": refusal})

    return [home, inbox_of, inbox, canon, *family_pages("ratifications", "ratification", "ratification.show", "topic"),
            *family_pages("proposals", "quorum", "quorum.show", "proposal_id"),
            *family_pages("threads", "thread", "thread.show", "slug")]


def _refused(error: dict[str, Any]) -> Template:
    return Template(template_name="refused.html", context={"error": error}, status_code=http_status(error["code"]))
