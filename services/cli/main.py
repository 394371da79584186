"""The ``athenaeum`` command line.

Exit codes: 0 done, 1 rejected by a rule (with ``--json`` the error object on stdout),
2 usage error, 3 server unreachable.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import select
import sys
import uuid
from importlib import metadata
from datetime import timedelta
from pathlib import Path
from typing import Any

import argcomplete
import msgspec
from nkeys import KeyPair
from eventsourcing.persistence import OperationalError, ProgrammingError

from athenaeum.events import event_registry
from athenaeum.events.commands import CommandRecord
from athenaeum.services.cli import agent as cli_agent
from athenaeum.services.cli import audit as cli_audit
from athenaeum.services.cli import importing as cli_import
from athenaeum.services.importing.task_tables import Unreadable
from athenaeum.services.cli import page as cli_page
from athenaeum.services.cli import quorum as cli_quorum
from athenaeum.services.cli import ratify as cli_ratify
from athenaeum.services.cli import task as cli_task
from athenaeum.services.cli import thread as cli_thread
from athenaeum.services.cli.args import UsageError, addresses, agent, duration, principals
from athenaeum.services.cli import output
from athenaeum.services.cli.examples import EXAMPLES
from athenaeum.services.cli.next_steps import command_for
from athenaeum.services.cli.parser import Parser, VerbUsageError, explained
from athenaeum.services.cli.nats_accounts import write_accounts, write_cluster
from athenaeum.services.client import NotPermitted, SyncClient, Unreachable
from athenaeum.services.identity.accounts import auditor_key
from athenaeum.services.identity.keys import KeyProblem, key_path, read_key
from athenaeum.services.jetstream.factory import DEFAULT_STREAM, JetStreamFactory
from athenaeum.services.runtime.logs import FORMATS as LOG_FORMATS, LEVELS as LOG_LEVELS, configure as configure_logs
from athenaeum.services.runtime.nats_binary import NatsServerError
from athenaeum.services.commands.replies import Reply, encode
from athenaeum.services.commands.routes import EXPOSED
from athenaeum.services.runtime.where import DEFAULT_HTTP, SERVICES, default_data_dir, running_url
from athenaeum.services.cli.entry import INTERRUPTED

DONE, REJECTED, USAGE, UNREACHABLE = 0, 1, 2, 3
# The error code --json gives each exit; a rejection no rule made: NATS refused the principal.
FAILURE_CODES = {REJECTED: "not_permitted", USAGE: "usage", UNREACHABLE: "unavailable"}
SHELLS = ("bash", "zsh", "fish")
CHECK_LIMIT = 20
EVENT_MODULES = ("fleet", "page", "quorum", "ratification", "task", "thread")
MODULES = (cli_ratify, cli_quorum, cli_thread, cli_page, cli_task, cli_agent, cli_import)
FAMILIES = {name: module for module in MODULES for name in module.NAMES}  # CLI verb group -> its module
SUMMARIES = {tag: summarize for module in MODULES for tag, summarize in module.SUMMARIES.items()}


def build_parser() -> argparse.ArgumentParser:
    data_dir_option = argparse.ArgumentParser(add_help=False)
    data_dir_option.add_argument("--data-dir", type=Path, default=None, help="default $ATHENAEUM_HOME or ~/.local/share/athenaeum")
    json_option = argparse.ArgumentParser(add_help=False)
    json_option.add_argument("--json", action="store_true", help="machine-readable output: one JSON object")
    reader = argparse.ArgumentParser(add_help=False, parents=[data_dir_option])
    reader.add_argument("--nats", help="NATS URL of the deployment (default: the serve running on --data-dir, "
                                       "else $ATHENAEUM_NATS, else the serve running on $ATHENAEUM_HOME or the default "
                                       "data dir)")
    acting = argparse.ArgumentParser(add_help=False, parents=[reader])
    acting.add_argument("--as", dest="actor", default=os.environ.get("ATHENAEUM_AGENT"),
                        help="who acts ($ATHENAEUM_AGENT); signs with <data-dir>/keys/NAME.nk when it exists")
    acting.add_argument("--key", type=Path, default=os.environ.get("ATHENAEUM_KEY"),
                        help="sign with the seed in this file instead ($ATHENAEUM_KEY)")
    common = argparse.ArgumentParser(add_help=False, parents=[acting, json_option])
    common.add_argument("--command-id", metavar="ID",
                        help="the command's id (default: a new one): sent again with the same id, as after a lost "
                             "reply or Ctrl-C, it applies at most once and answers as it first did")
    common.add_argument("--get", metavar="FIELD",
                        help="print only this field of the --json answer (a.b for a nested one, a.0 for a list's "
                             "first item), for a shell variable: sha=$(athenaeum ratify init ... --get artifact_sha256)")

    parser = Parser(
        prog="athenaeum",
        description="Athenaeum: the ledger of how a fleet of agents decides together, on NATS JetStream.",
        epilog="Every verb has --help, with an example. Exit codes: 0 done, 1 refused by a rule, 2 usage, 3 unreachable.",
    )
    parser.add_argument("--version", action="version", version=f"athenaeum {metadata.version('athenaeum')}")
    subparsers = parser.add_subparsers(dest="family", metavar="COMMAND")

    run = subparsers.add_parser("serve", parents=[data_dir_option], help="run the ledger: NATS and all services")
    run.add_argument("--nats", help="use this NATS server or cluster (URL[,URL...]) instead of an embedded one")
    run.add_argument("--port", type=int, default=0, help="NATS port of the embedded server (default: a free one)")
    run.add_argument("--humans", default=os.environ.get("ATHENAEUM_HUMANS", ""),
                     help="the human principals recorded at the first start: a,b (keys made in <data-dir>/keys), "
                          "or a=U... to bind a to that public key (default $ATHENAEUM_HUMANS)")
    run.add_argument("--read-models", help="postgresql://... for shared read models (default: SQLite in the data dir)")
    run.add_argument("--services", default=",".join(sorted(SERVICES)),
                     help=f"which services run here, of {','.join(sorted(SERVICES))} (default: all)")
    run.add_argument("--http", help=f"HOST:PORT of the HTTP gateway (default $ATHENAEUM_HTTP or {DEFAULT_HTTP}; "
                                    "port 0: a free one)")
    run.add_argument("--no-http", action="store_true", help="serve no HTTP")
    run.add_argument("--metrics", metavar="HOST:PORT", default=os.environ.get("ATHENAEUM_METRICS"),
                     help="also serve Prometheus metrics at http://HOST:PORT/metrics, as the gateway does at its "
                          "/metrics: for a serve without HTTP (default $ATHENAEUM_METRICS; port 0: a free one)")
    run.add_argument("--trust-agent-header", metavar="ADDR[,ADDR...]", default="",
                     help="take X-Agent-Name without a token from these client addresses, such as a local "
                          "authenticating proxy's (off by default; the ledger stores such commands as header-asserted)")
    run.add_argument("--log-level", choices=LOG_LEVELS, default=os.environ.get("ATHENAEUM_LOG_LEVEL", "info"),
                     help="info: a line per command (who, what, on what, outcome, milliseconds); default $ATHENAEUM_LOG_LEVEL or info")
    run.add_argument("--log-format", choices=LOG_FORMATS, default=os.environ.get("ATHENAEUM_LOG_FORMAT", "text"),
                     help="json: one JSON object a line, for a log shipper")
    run.add_argument("--nats-key", type=Path, default=os.environ.get("ATHENAEUM_NATS_KEY"),
                     help="with --nats: the seed file the services connect with ($ATHENAEUM_NATS_KEY)")

    for module in MODULES:
        if module is cli_agent:
            module.add_verbs(subparsers, common, data_dir_option)
        else:
            module.add_verbs(subparsers, common)
    cli_audit.add_verbs(subparsers, reader, json_option)
    subparsers.add_parser("schema", help="the JSON Schema of every event and command")
    subparsers.add_parser("demo", help="see it work: ratifications, a quorum and a page made canon, on a throwaway server")
    check = subparsers.add_parser("check", parents=[common], help="what is waiting on you")
    check.add_argument("--after", type=int, help="wait for this position instead of the ledger's head (0: for nothing)")
    check.add_argument("--limit", type=int, default=CHECK_LIMIT, help=f"the soonest due, at most (default {CHECK_LIMIT})")
    subparsers.add_parser("mcp", parents=[acting], help="serve Athenaeum's tools and records to an agent runtime: "
                                                         "an MCP server on stdin and stdout, acting --as you")
    completion = subparsers.add_parser("completion", help="the shell code that completes athenaeum's verbs and options")
    completion.add_argument("shell", choices=SHELLS)
    explained(parser, EXAMPLES)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # Ctrl-C, no traceback: what was sent is recorded or not, and a command applies once
        # however often it is sent, so running it again goes on (an import, where it stopped).
        print("athenaeum: interrupted; run it again to go on: what it sent before applies once", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        if not _stdout_closed():
            raise
        # A reader that stopped early (``| head``) is no error; the output left unflushed
        # goes nowhere, so the interpreter's exit does not complain of the pipe either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return DONE


def _stdout_closed() -> bool:
    """Whether whoever read our stdout has gone (a pipe's reader closed: POLLERR on its writer),
    rather than some other pipe or socket broken."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    argcomplete.autocomplete(parser)
    words = sys.argv[1:] if argv is None else argv
    try:
        args = parser.parse_args(words)
    except VerbUsageError as error:
        if "--json" in words:
            return failed(USAGE, str(error), as_json=True)
        sys.stderr.write(error.usage)
        return failed(USAGE, str(error), as_json=False)
    if args.family is None:
        parser.print_help(sys.stderr)
        return USAGE
    if args.family == "completion":
        print(argcomplete.shellcode(["athenaeum"], shell=args.shell))
        return DONE
    if args.family == "demo":
        from athenaeum.services.runtime.demo import run_demo  # the services, loaded only by the verbs that run them

        asyncio.run(run_demo(sys.stdout))
        return DONE
    if args.family == "schema":
        print(msgspec.json.encode(schema()).decode())
        return DONE
    as_json = getattr(args, "json", False)
    args.data_dir_given = getattr(args, "data_dir", None) is not None
    data_dir = args.data_dir = getattr(args, "data_dir", None) or default_data_dir()
    if args.family == "key":
        try:
            if args.verb == "accounts":
                stream = os.environ.get(JetStreamFactory.STREAM, DEFAULT_STREAM)
                print(f"athenaeum: {write_accounts(args.out, args.nats, args.admit, stream)}", file=sys.stderr)
                print(f"athenaeum: {write_cluster(args.out, args.routes.split(','))}", file=sys.stderr)
            else:
                print(cli_agent.new_key(args, data_dir))
        except UsageError as error:
            return failed(USAGE, f"{error}", as_json)
        except (OperationalError, ProgrammingError) as error:
            return failed(UNREACHABLE, f"cannot read the roster: {error}", as_json)
        return DONE
    if args.family == "serve":
        import uvloop  # serve's loop: a command's round trips cost it a fifth less CPU than on asyncio's

        from athenaeum.services.runtime.serve import ServeOptions, serve

        try:
            humans = principals(args.humans, "--humans")
            services = frozenset(name.strip() for name in args.services.split(",") if name.strip())
            if not services or services - SERVICES:
                raise UsageError(f"--services: choose from {', '.join(sorted(SERVICES))}")
            if args.no_http:
                services -= {"http"}
            if args.http and "http" not in services:
                raise UsageError("--http: the http service does not run here (see --services and --no-http)")
            offset = os.environ.get("ATHENAEUM_CLOCK_OFFSET")
            options = ServeOptions(
                data_dir=data_dir,
                nats_url=args.nats,
                port=args.port,
                humans=frozenset(humans),
                human_keys={name: key for name, key in humans.items() if key},
                read_models=args.read_models,
                services=services,
                http=args.http or os.environ.get("ATHENAEUM_HTTP", DEFAULT_HTTP),
                metrics=args.metrics,
                clock_offset=duration(offset, "ATHENAEUM_CLOCK_OFFSET") if offset else timedelta(0),
                nats_key=args.nats_key,
                trust_agent_header=addresses(args.trust_agent_header, "--trust-agent-header"),
            )
            configure_logs(args.log_level, args.log_format)
            uvloop.run(serve(options))
        except KeyboardInterrupt:
            pass
        except ValueError as error:
            return failed(USAGE, f"{error}", as_json)
        # NATS, its embedded server or the read models: the message names which.
        except (OperationalError, ProgrammingError, NatsServerError, OSError) as error:
            return failed(UNREACHABLE, f"{error}", as_json)
        return DONE
    if args.family in cli_audit.NAMES:
        try:
            url = None if args.family == "verify-export" else service_url(args, data_dir)
            return cli_audit.run(args, url, data_dir)
        except ServiceNotFound as error:
            return failed(UNREACHABLE, f"{error}", as_json)
        except UsageError as error:
            return failed(USAGE, f"{error}", as_json)
        except OperationalError as error:  # NATS or the read models: the message names which
            return failed(UNREACHABLE, f"{error}", as_json)
        except ProgrammingError as error:  # no such stream, or a server too old
            return failed(UNREACHABLE, f"cannot read the ledger: {error}", as_json)
    if args.family == "mcp":
        return _mcp(args, data_dir)
    if args.family in cli_import.NAMES:
        try:
            if (code := cli_import.read_only(args)) is not None:
                return code  # a dry run: the report alone
        except UsageError as error:
            return failed(USAGE, f"{error}", as_json)
        except Unreadable as error:
            return failed(UNREACHABLE, f"cannot read the original's tables: {error}", as_json)
    try:
        query = _query(args)
        # Reading needs no identity, except to ask what waits on oneself.
        if query is None or args.family == "check":  # reading needs no identity
            if not args.actor:
                raise UsageError("--as AGENT (or ATHENAEUM_AGENT) names who acts")
            agent(args.actor, "--as (or ATHENAEUM_AGENT)")
        command_id = getattr(args, "command_id", None)  # every verb that acts takes it
        if command_id == "":
            raise UsageError("--command-id: empty; give the id an earlier run printed, or leave it out for a new one")
        if command_id is not None and (query is not None or args.family in cli_import.NAMES):
            raise UsageError("--command-id: this verb sends no one command of its own (it reads, or imports records, "
                             "whose commands take their ids from the records)")
        command = None if query else _identified(FAMILIES[args.family].command_from(args), command_id)
        unrepeatable = _unrepeatable(args) if command is not None else None
        if command_id is not None and unrepeatable:
            raise UsageError(f"--command-id: {unrepeatable}")
        # Queries too: a server that authenticates admits only the roster's keys, and the
        # embedded one its auditor's, whose key reads for whoever names nobody.
        seed = _seed(args, data_dir) if args.key or args.actor else auditor_key(data_dir / "nats")
        url = service_url(args, data_dir)
    except UsageError as error:
        return failed(USAGE, f"{error}", as_json)
    except ServiceNotFound as error:
        return failed(UNREACHABLE, f"{error}", as_json)
    try:
        with SyncClient(url, args.actor or "", seed=seed) as client:
            if query is not None:
                answer = client.query(query[0], **query[1])
                if args.get and answer["ok"]:
                    return print_field(answer["result"], args.get)
                show_answer(answer, args.json)
                return DONE if answer["ok"] else REJECTED
            if args.family in cli_import.NAMES:
                return cli_import.write(args, client.send_together)
            reply = client.send(command)
    except KeyboardInterrupt:
        if command is None:
            raise
        print(f"athenaeum: interrupted: the command may have applied; {unrepeatable or _again(command.command_id)}",
              file=sys.stderr)
        return INTERRUPTED
    except Unreachable as error:
        again = f"; {unrepeatable or _again(error.command_id)}" if error.command_id and command is not None else ""
        return failed(UNREACHABLE, f"{error}{again}", as_json)
    except NotPermitted as error:
        return failed(REJECTED, f"{error}", as_json)
    if args.get and reply.ok:
        code = print_field(summary(reply), args.get)
    else:
        show(reply, args.json)
        code = DONE if reply.ok else REJECTED
    if (finished := getattr(FAMILIES[args.family], "finished", None)) is not None:
        if (said := finished(args, reply.ok)) is not None:
            print(f"athenaeum: {said}", file=sys.stderr)
    return code


def _mcp(args: argparse.Namespace, data_dir: Path) -> int:
    """The MCP server on stdio until the runtime closes it; what goes wrong before, on stderr."""
    # Imported here: the MCP SDK takes over a second to import, which no other verb should wait for.
    from athenaeum.services.mcp.stdio import serve_stdio

    try:
        if not args.actor:
            raise UsageError("--as AGENT (or ATHENAEUM_AGENT) names who acts through the MCP server")
        agent(args.actor, "--as (or ATHENAEUM_AGENT)")
        seed, url = _seed(args, data_dir), service_url(args, data_dir)
    except UsageError as error:
        return failed(USAGE, f"{error}", as_json=False)
    except ServiceNotFound as error:
        return failed(UNREACHABLE, f"{error}", as_json=False)
    try:
        asyncio.run(serve_stdio(url, args.actor, seed))
    except Unreachable as error:
        return failed(UNREACHABLE, f"{error}", as_json=False)
    except KeyboardInterrupt:
        pass
    return DONE


def _identified(command: Any, command_id: str | None) -> Any:
    """``command`` with its id chosen here, so that what is said of it after a lost reply or
    Ctrl-C can name it (``--command-id`` gives it; else a new one)."""
    if command is None or command.command_id is not None:
        return command
    return msgspec.structs.replace(command, command_id=uuid.uuid4().hex if command_id is None else command_id)


def _unrepeatable(args: argparse.Namespace) -> str | None:
    """Why the family says the command cannot be sent again as it was (a secret made for this
    run alone), if it does."""
    said = getattr(FAMILIES[args.family], "unrepeatable", None)
    return said(args) if said is not None else None


def _again(command_id: str | None) -> str:
    return f"run it again with --command-id {command_id}, which applies it at most once"


def failed(code: int, message: str, as_json: bool) -> int:
    """An outcome that is no answer (a usage error, nothing to talk to): one line on stderr, or
    with ``--json`` the one JSON object on stdout; ``code``, the exit code."""
    if as_json:
        print(msgspec.json.encode({"ok": False, "error": {"code": FAILURE_CODES[code], "message": message}}).decode())
    else:
        print(f"athenaeum: {message}", file=sys.stderr)
    return code


def print_field(answer: dict, path: str) -> int:
    """``--get``: one field of an answer on stdout, text as it is and anything else as JSON,
    for a shell to capture; a field the answer lacks is a usage error naming those it has."""
    value: Any = answer
    for key in path.split("."):
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            has = f": it has {', '.join(value)}" if isinstance(value, dict) else ""
            return failed(USAGE, f"--get: the answer has no field {path!r}{has}", as_json=False)
    print(value if isinstance(value, str) else msgspec.json.encode(value).decode())
    return DONE


class ServiceNotFound(LookupError):
    """No deployment was named and no serve runs where the CLI looked; exit code 3."""


def service_url(args: argparse.Namespace, data_dir: Path) -> str:
    """The NATS URL of the deployment to talk to: ``--nats``, the serve running on an explicit
    ``--data-dir``, ``$ATHENAEUM_NATS``, or the serve running on ``$ATHENAEUM_HOME`` or the
    default data dir. Never a port nobody named: another server may well answer there."""
    explicit_dir = getattr(args, "data_dir_given", False)
    named = getattr(args, "nats", None) or (explicit_dir and running_url(data_dir))
    named = named or os.environ.get("ATHENAEUM_NATS") or os.environ.get("ATHENAEUM_NATS_URL") or running_url(data_dir)
    if named:
        return named
    raise ServiceNotFound(
        f"no Athenaeum to talk to: no serve runs on {data_dir} (no {data_dir / 'serve.json'}), and neither --nats nor "
        "$ATHENAEUM_NATS names one. Start one with 'athenaeum serve' (--data-dir or $ATHENAEUM_HOME for another "
        "place), or name a deployment with --nats URL")


def _seed(args: argparse.Namespace, data_dir: Path) -> KeyPair | None:
    """The key to sign with: ``--key``, else the actor's own in the data dir, if it has one."""
    path = args.key or key_path(data_dir, args.actor)
    if args.key is None and not path.exists():
        return None  # a name no key binds: the ledger says whether it may act unsigned
    try:
        return read_key(path)
    except KeyProblem as problem:
        raise UsageError(str(problem)) from None


def schema() -> dict:
    """JSON Schemas (msgspec's) of every event by tag, every command by subject, and the record
    the ledger keeps of each command with its events."""
    for family in EVENT_MODULES:  # importing a family registers its events
        importlib.import_module(f"athenaeum.events.{family}")

    events = sorted(event_registry.types().items())
    commands = [(route.subject, route.command) for route in EXPOSED]
    _, components = msgspec.json.schema_components(
        [cls for _, cls in events] + [cls for _, cls in commands] + [CommandRecord])
    return {
        "events": {tag: {"$ref": f"#/$defs/{cls.__name__}"} for tag, cls in events},
        "commands": {subject: {"$ref": f"#/$defs/{cls.__name__}"} for subject, cls in commands},
        "stored_command": {"$ref": f"#/$defs/{CommandRecord.__name__}"},
        "$defs": components,
    }


def _query(args: argparse.Namespace) -> tuple[str, dict] | None:
    """The read-model query a verb asks, if it is a query."""
    after = {"after": args.after} if getattr(args, "after", None) is not None else {}
    if args.family == "check" and not 1 <= args.limit <= 1000:
        raise UsageError("--limit: from 1 to 1000 items")
    query = (("check", {"agent": args.actor, "limit": args.limit}) if args.family == "check"
             else FAMILIES[args.family].query_from(args))
    return None if query is None else (query[0], query[1] | after)


def show_answer(answer: dict, as_json: bool) -> None:
    if as_json:
        print(msgspec.json.encode(answer.get("result") if answer["ok"] else answer).decode())
        return
    if not answer["ok"]:
        print(f"rejected: {answer['error']['code']}: {output.shown(answer['error']['message'], sys.stderr)}",
              file=sys.stderr)
        return
    result = answer["result"]
    if "record" in result:
        sys.stdout.write(output.shown(result["text"]))  # exact bytes when redirected, its own newlines
    elif "tasks" in result:
        rows = [(task["id"], task["status"], task.get("arbitrationPendingTrigger"), task["title"])
                for task in result["tasks"]]
        output.table(("id", "status", "awaiting", "title"), rows)
    elif "agent" in result and "items" in result:
        _checked(result)
    elif "items" in result:
        items = result["items"]
        columns = list(items[0]) if items else []
        output.table(columns, [[item[column] for column in columns] for item in items])
        if result.get("next"):
            print(f"more: --cursor {result['next']}", file=sys.stderr)
    else:
        output.record(result)


def _checked(result: dict) -> None:
    """What waits on the agent, the soonest due first, each with the command that acts on it."""
    items, agent = result["items"], result["agent"]
    print(f"{result.get('total', len(items))} waiting on {agent}", file=sys.stderr)
    output.table(("kind", "id", "action", "due", "run"),
                 [(item["kind"], item["id"], item["action"], item.get("deadline"), command_for(item, agent))
                  for item in items])
    if result.get("total", 0) > len(items):
        print(f"(the {len(items)} soonest; --limit for more)", file=sys.stderr)


def show(reply: Reply, as_json: bool) -> None:
    for warning in reply.warnings:
        print(f"athenaeum: warning: {output.shown(warning, sys.stderr)}", file=sys.stderr)
    if as_json:
        print(msgspec.json.encode(summary(reply)).decode())
    elif reply.ok:
        events = msgspec.json.decode(reply.events)
        print(f"done at position {reply.position}: {', '.join(e['type'] for e in events) or 'nothing to do'}")
        for key, value in _facts(events).items():
            print(f"{key:>16}: {output.shown(str(value))}")
    elif reply.error is not None:
        where = f" ({reply.error.field})" if reply.error.field else ""
        print(f"rejected: {reply.error.code}{where}: {output.shown(reply.error.message, sys.stderr)}", file=sys.stderr)


def summary(reply: Reply) -> dict:
    """The reply, plus the facts scripts need (a new proposal's id, a frozen sha) at its top level."""
    body = msgspec.json.decode(encode(reply))
    return body | _facts(body.get("events", []))


def _facts(events: list[dict]) -> dict:
    facts: dict = {}
    for event in events:
        if (summarize := SUMMARIES.get(event["type"])) is not None:
            facts |= summarize(event)
    return facts

