"""The web page for humans at ``/ui/``: what waits on a principal, the records, and the human
decisions as forms that send the same signed commands as the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template import TemplateConfig

from athenaeum.events.page import CanonLevel
from athenaeum.events.ratification import HumanChoice
from athenaeum.services.http.common import Gateway
from athenaeum.services.http.ui import live, pages, signing

# Shipped with the package (pyproject's package-data): nothing is fetched at run time.
STATIC = Path(__file__).parent / "static"


def handlers(gateway: Gateway) -> list[Any]:
    return [*pages.handlers(gateway), signing.handler(gateway), live.handler(gateway),
            create_static_files_router(path="/ui/static", directories=[STATIC], include_in_schema=False)]


def templates() -> TemplateConfig[JinjaTemplateEngine]:
    environment = Environment(loader=PackageLoader(__name__, "templates"), autoescape=select_autoescape(default=True))
    # The choices the human decisions' forms offer, as the commands name them.
    environment.globals |= {"choices": [choice.value for choice in HumanChoice],
                            "levels": [level.value for level in CanonLevel]}
    return TemplateConfig(instance=JinjaTemplateEngine.from_environment(environment))
