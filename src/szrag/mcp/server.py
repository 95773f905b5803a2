"""Serving szrag over the Model Context Protocol with the official SDK's low-level server.

The low-level server is used, not the decorator one, because szrag's tools already have their
JSON Schemas (the live tools share theirs with the model's tool loop): the schema a client
lists is the schema every call is checked against, with szrag's one validator.

Several repositories (``szrag mcp --repo NAME=PATH``, ``--config FILE``): every code tool
takes an optional ``repository`` (an enum of the names served when there are several). A tool
given none asks the first repository, except the two that search by a question:
``search_code`` searches every repository, their files merged on one scale
(``service/merging.py``), each source naming its ``repository``, and ``get_context``'s
question is routed to the repository of the best file of all, as ``POST /api/ask`` routes
one; each result names its ``repository``. An unknown
name is a tool error listing the known ones. The prompt takes ``repository`` too (without
one its question is routed). The resources listed are the first repository's files; any
repository's file reads as ``szrag://file/PATH?repository=NAME``. The live tools are the
first repository's (the application running from it).

Who may do what: over stdio the client is the agent of the person who started ``szrag mcp``
on this machine, so it gets the admin tool (``get_errors``) as the CLI does; over HTTP a caller
needs a token where the API needs one and gets the admin tool only with the admin token. Every
caller runs commands as a tool does: the allowlist only, never ``ask``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote, unquote

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from szrag.base.errors import SzragError, UnknownRepository
from szrag.base.public import dumps, to_public
from szrag.base.redact import redact
from szrag.commands.model import Identity
from szrag.index.shared import SharedIndex
from szrag.llm.prompts import SYSTEM_PROMPT, build_user_message, load_prompt
from szrag.mcp.catalogue import (
    CODE_TOOLS,
    CODE_TOOLS_BY_NAME,
    REPOSITORY,
    ROUTED_TOOLS,
    SEARCH_EVERYWHERE,
    CodeTool,
    mcp_tool_name,
    search_everywhere,
    with_repository,
)
from szrag.service.configuration import Config
from szrag.service.host import Host
from szrag.service.repositories import ServicePlan
from szrag.service.service import Service
from szrag.service.watch import IndexWatcher, start_warming
from szrag.tools.definitions import COMMAND_TOOL, TOOLS, ToolDefinition
from szrag.tools.schema import validate
from szrag.version import __version__

log = logging.getLogger("szrag.mcp")

SERVER_NAME = "szrag"
FILE_SCHEME = "szrag://file/"
RESOURCES_PER_PAGE = 200
MAX_RESOURCE_BYTES = 1_000_000
ANSWER_PROMPT = "answer_about_repository"
INSTRUCTIONS = (
    "szrag answers questions about one code repository and the application running from it. "
    "Start with search_code or get_context for a question; read_code for a file's lines; "
    "find_symbols, find_references, find_routes, "
    "get_dependencies, get_dependants and find_environment_variable for structure; the live "
    "tools (get_status, get_logs, get_errors, get_metrics, get_routes, get_commands, "
    "run_command, get_release_info) for what the running application does. Cite paths with "
    "line ranges."
)
# the live tools by the name an MCP client sees, and by their spec name (still accepted)
LIVE_TOOLS_BY_MCP_NAME: dict[str, ToolDefinition] = {
    **{tool.name: tool for tool in TOOLS},
    **{mcp_tool_name(tool.name): tool for tool in TOOLS},
}


def _identity(client: str) -> Identity:
    person = Identity.local()
    return Identity(
        user_id=f"mcp:{person.user_name}", user_name=client, channel_id="mcp", team_id="local"
    )


@dataclass
class McpFace:
    """One repository served to MCP clients: the host (whose index is the shared one) and
    whether callers without a credential of their own get the admin tool."""

    host: Host
    index: SharedIndex
    privileged: bool
    identity: Identity
    # the start-up thread building the shared views, while it runs
    warming: asyncio.Future[None] | None = None
    # several repositories (``--repo``, ``--config``): ``host`` and ``index`` are the first's
    service: Service | None = None
    watch: bool = False  # whether a repository opened later is watched too
    watchers: dict[str, IndexWatcher] = field(default_factory=dict)

    @classmethod
    def open(cls, config: Config, *, privileged: bool, client: str = "mcp") -> McpFace:
        """Build or refresh the index of ``config``'s repository and the host around it (the
        configuration read once by the face, ``szrag mcp``)."""
        from szrag.index.shared import open_shared_index

        index = open_shared_index(config.root)
        # many questions in one process: views kept in memory once ``watching`` built them
        host = Host.of(config, index=index)
        host.runtime.attach()  # this process's logs and errors, for getLogs and getErrors
        return cls(host, index, privileged, _identity(client))

    @classmethod
    def open_service(
        cls,
        plan: ServicePlan,
        environ: Mapping[str, str],
        *,
        privileged: bool,
        client: str = "mcp",
    ) -> McpFace:
        """The repositories of ``plan``, each opened when a tool first asks about it (the
        first now), each repository's file read with ``environ`` once."""
        service = Service(plan, environ)
        first = plan.repositories[0].name
        try:
            host = service.host(first)
        except BaseException:
            service.close()
            raise
        host.runtime.attach()
        return cls(
            host, service.shared_index(first), privileged, _identity(client), service=service
        )

    def close(self) -> None:
        """Stop collecting logs and release the index (every repository's)."""
        self.host.runtime.detach()
        if self.service is not None:
            self.service.close()
            return
        self.host.conversations.close()
        self.index.close()

    def names(self) -> list[str]:
        """The repositories served, in order (one: the root's folder name)."""
        return self.service.names() if self.service is not None else [self.index.root.name]

    # Tools -----------------------------------------------------------------------------

    def tools(self, *, privileged: bool) -> list[types.Tool]:
        """The code tools, then the live tools this caller may use (when they are on)."""
        names = self.names() if self.service is not None else None
        listed = [_code_tool(tool, names) for tool in CODE_TOOLS]
        if self.host.live_tools:
            listed += [_live_tool(tool) for tool in TOOLS if privileged or not tool.admin]
        return listed

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None, *, privileged: bool
    ) -> types.CallToolResult:
        """Run one tool; a bad argument or a failing call is an error result the client's
        model can read and correct, an unknown tool a protocol error."""
        args = dict(arguments or {})
        code_tool = CODE_TOOLS_BY_NAME.get(name)
        if code_tool is not None:
            return await self._call_code(code_tool, args)
        live = LIVE_TOOLS_BY_MCP_NAME.get(name)
        if live is None or not self.host.live_tools or (live.admin and not privileged):
            known = [tool.name for tool in self.tools(privileged=privileged)]
            raise MCPError(
                types.INVALID_PARAMS, f"unknown tool {name[:64]!r}; available: {', '.join(known)}"
            )
        adapter = self.host.tools(privileged=privileged)
        result = await adapter.call(live.name, args, identity=self.identity)
        return _result(result.content, error=not result.ok)

    async def _call_code(self, tool: CodeTool, given: dict[str, Any]) -> types.CallToolResult:
        args = tool.arguments(given)
        service = self.service
        if service is None:
            problems = validate(tool.parameters, args)
        else:
            named = args.get(REPOSITORY)
            if isinstance(named, str) and named not in service.names():
                error = UnknownRepository(
                    f"no repository is called {named[:64]!r} (known: {', '.join(self.names())})"
                )
                return _failure(error.code, error.message)
            problems = validate(with_repository(tool.parameters, self.names()), args)
        if problems:
            return _failure("invalid_arguments", "; ".join(problems))
        named = args.pop(REPOSITORY, None)
        if tool.needs_views and self.warming is not None and not self.warming.done():
            await asyncio.shield(self.warming)  # one build of the views, not two racing
        try:
            if service is None:
                value = await anyio.to_thread.run_sync(tool.run, self.index, self.host, args)
                return _result(value)
            if named is None and tool.name == SEARCH_EVERYWHERE and len(service.names()) > 1:
                found = await anyio.to_thread.run_sync(search_everywhere, service, args)
                return _result(found)
            name = await self._repository_of(service, tool, named, args)
            host = await anyio.to_thread.run_sync(service.host, name)
            self._watch(service, name)
            value = await anyio.to_thread.run_sync(tool.run, service.shared_index(name), host, args)
        except SzragError as error:
            return _failure(error.code, str(error))
        return _result({REPOSITORY: name, **value} if isinstance(value, dict) else value)

    async def _repository_of(
        self, service: Service, tool: CodeTool, named: str | None, args: Mapping[str, Any]
    ) -> str:
        """The repository a call asks: the one named, else its question's routed one (the
        searching tools), else the first."""
        if named is not None:
            return named
        if tool.name in ROUTED_TOOLS and len(service.names()) > 1:
            routed = await anyio.to_thread.run_sync(service.route, str(args["question"]))
            return routed.repository
        return service.names()[0]

    def _watch(self, service: Service, name: str) -> None:
        """Keep a repository opened after the start fresh, as the first is."""
        if self.watch and name != service.names()[0] and name not in self.watchers:
            watcher = IndexWatcher(service.shared_index(name))
            watcher.start()
            self.watchers[name] = watcher

    # Resources -------------------------------------------------------------------------

    def resources(self, cursor: str | None) -> types.ListResourcesResult:
        """One page of the indexed files as ``szrag://file/PATH`` resources."""
        files = sorted(self.index.files(), key=lambda stored: stored.path)
        start = _page_start(cursor)
        page = files[start : start + RESOURCES_PER_PAGE]
        following = start + RESOURCES_PER_PAGE
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=file_uri(stored.path),
                    name=stored.path,
                    mime_type="text/plain",
                    size=stored.size,
                )
                for stored in page
            ],
            next_cursor=_cursor(following) if following < len(files) else None,
        )

    def read(self, uri: str) -> types.ReadResourceResult:
        """An indexed file's current text, its secrets redacted (of the repository its
        ``?repository=NAME`` names on a server of several, else the first)."""
        uri, _, query = uri.partition("?")
        named = _repository_of_query(query)
        index, suffix = self.index, ""
        if named is not None:
            if self.service is None or named not in self.service.names():
                raise MCPError(
                    types.INVALID_PARAMS,
                    f"no repository is called {named[:64]!r} (known: {', '.join(self.names())})",
                )
            index = self.service.shared_index(named)  # opened on first use
            suffix = f"?{REPOSITORY}={quote(named, safe='')}"
        path = path_of_uri(uri)
        if path is None or not index.has_file(path):
            raise MCPError(
                types.INVALID_PARAMS,
                f"no indexed file at {uri[:200]!r} (resources/list lists them)",
            )
        text = self._read_text(index, path)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=file_uri(path) + suffix,
                    mime_type="text/plain",
                    text=redact(text, path=path),
                )
            ]
        )

    def _read_text(self, index: SharedIndex, path: str) -> str:
        root = index.root.resolve()
        target = (root / path).resolve()
        if not target.is_relative_to(root):  # an indexed path never leaves the root; be sure
            raise MCPError(types.INVALID_PARAMS, f"{path!r} is outside the repository")
        try:
            with target.open("rb") as handle:
                data = handle.read(MAX_RESOURCE_BYTES + 1)
        except OSError as error:
            raise MCPError(
                types.INTERNAL_ERROR, f"{path} could not be read: {error.strerror or error}"
            ) from None
        text = data[:MAX_RESOURCE_BYTES].decode("utf-8", errors="replace")
        if len(data) > MAX_RESOURCE_BYTES:
            text += f"\n[... cut at {MAX_RESOURCE_BYTES} bytes]"
        return text

    # Prompts ---------------------------------------------------------------------------

    def prompt(self, arguments: Mapping[str, str] | None) -> types.GetPromptResult:
        """The answer-about-this-repository prompt: szrag's instructions, then the question
        with the packed repository context, as szrag's own model would receive them."""
        question = (arguments or {}).get("question", "")
        tool = CODE_TOOLS_BY_NAME["get_context"]
        problems = validate(tool.parameters, {"question": question})
        if problems:
            raise MCPError(types.INVALID_PARAMS, "; ".join(problems))
        from szrag.context.assemble import assemble_context

        host, index, name = self.host, self.index, self.index.root.name
        if self.service is not None:  # the repository named, else the question's routed one
            name = self._prompt_repository(self.service, question, arguments or {})
            host, index = self.service.host(name), self.service.shared_index(name)
        found = assemble_context(question, index, plan=host.plan())
        system = load_prompt(SYSTEM_PROMPT, host.root)
        user = build_user_message(question, repository_context=found.packed.text)
        return types.GetPromptResult(
            description=f"Answer about {name}: {question[:80]}",
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(text=system)),
                types.PromptMessage(role="user", content=types.TextContent(text=user)),
            ],
        )

    def _prompt_repository(
        self, service: Service, question: str, arguments: Mapping[str, str]
    ) -> str:
        """The repository the prompt packs: the one named (a protocol error for a name not
        served), else the question's routed one."""
        named = arguments.get(REPOSITORY) or None
        if named is not None:
            if named not in service.names():
                raise MCPError(
                    types.INVALID_PARAMS,
                    f"no repository is called {named[:64]!r} (known: {', '.join(self.names())})",
                )
            return named
        if len(service.names()) > 1:
            return service.route(question).repository
        return service.names()[0]


def file_uri(path: str) -> str:
    """The resource URI of an indexed file."""
    return FILE_SCHEME + quote(path, safe="/")


def path_of_uri(uri: str) -> str | None:
    """The repository path a ``szrag://file/`` URI names, or None for any other URI."""
    if not uri.startswith(FILE_SCHEME):
        return None
    path = unquote(uri[len(FILE_SCHEME) :])
    parts = PurePosixPath(path).parts
    if not path or path.startswith("/") or ".." in parts:
        return None
    return path


def _repository_of_query(query: str) -> str | None:
    """The repository a resource URI's query names (``repository=NAME``), or None."""
    for part in query.split("&") if query else ():
        key, _, value = part.partition("=")
        if key == REPOSITORY:
            return unquote(value)
    return None


def _cursor(position: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"at": position}).encode()).decode()


def _page_start(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        position = json.loads(base64.urlsafe_b64decode(cursor.encode()))["at"]
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise MCPError(types.INVALID_PARAMS, "the cursor is not one this server gave") from None
    if not isinstance(position, int) or position < 0:
        raise MCPError(types.INVALID_PARAMS, "the cursor is not one this server gave")
    return position


def _code_tool(tool: CodeTool, names: list[str] | None) -> types.Tool:
    """A code tool as listed: with the ``repository`` argument when several repositories
    may be served (``names``; None for one ``--root``)."""
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.parameters if names is None else with_repository(tool.parameters, names),
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )


def _live_tool(tool: ToolDefinition) -> types.Tool:
    command = tool.kind == COMMAND_TOOL
    description = tool.description
    for other in TOOLS:  # a description naming another tool names it as the client sees it
        description = description.replace(other.name, mcp_tool_name(other.name))
    return types.Tool(
        name=mcp_tool_name(tool.name),
        description=description,
        input_schema=tool.parameters,
        annotations=types.ToolAnnotations(read_only_hint=not command, open_world_hint=command),
    )


def _result(value: Any, *, error: bool = False) -> types.CallToolResult:
    content = to_public(value)
    structured = content if isinstance(content, dict) else {"result": content}
    return types.CallToolResult(
        content=[types.TextContent(text=dumps(content))],
        structured_content=structured,
        is_error=error,
    )


def _failure(code: str, message: str) -> types.CallToolResult:
    return _result({"error": {"type": code, "message": message}}, error=True)


def _caller_privileged(face: McpFace, request: Any) -> bool:
    """Over HTTP, what the authentication middleware decided; over stdio, the face's own."""
    if request is None:
        return face.privileged
    state = getattr(request, "scope", {}).get("state", {})
    return bool(state.get("szrag_admin", False))


def build_server(face: McpFace) -> Server[Any]:
    """The SDK server whose handlers call ``face``."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=face.tools(privileged=_caller_privileged(face, ctx.request))
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        privileged = _caller_privileged(face, ctx.request)
        return await face.call(params.name, params.arguments, privileged=privileged)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        cursor = getattr(params, "cursor", None) if params is not None else None
        return await anyio.to_thread.run_sync(face.resources, cursor)

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=FILE_SCHEME + "{+path}",
                    name="file",
                    description="An indexed file of the repository, secrets redacted",
                    mime_type="text/plain",
                ),
                *(
                    [
                        types.ResourceTemplate(
                            uri_template=FILE_SCHEME + "{+path}{?repository}",
                            name="file_of_repository",
                            description="An indexed file of one of the repositories served "
                            f"({', '.join(face.names())}), secrets redacted",
                            mime_type="text/plain",
                        )
                    ]
                    if face.service is not None
                    else []
                ),
            ]
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await anyio.to_thread.run_sync(face.read, str(params.uri))

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=ANSWER_PROMPT,
                    title="Answer about this repository",
                    description="szrag's instructions and the repository context for a question",
                    arguments=[
                        types.PromptArgument(
                            name="question", description="The question", required=True
                        ),
                        *(
                            [
                                types.PromptArgument(
                                    name=REPOSITORY,
                                    description="The repository (default: the question's "
                                    f"routed one): {', '.join(face.names())}",
                                    required=False,
                                )
                            ]
                            if face.service is not None
                            else []
                        ),
                    ],
                )
            ]
        )

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != ANSWER_PROMPT:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name[:64]!r}")
        return await anyio.to_thread.run_sync(face.prompt, params.arguments)

    return Server(
        SERVER_NAME,
        version=__version__,
        title=f"szrag: {face.index.root.name}",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


@asynccontextmanager
async def watching(face: McpFace, enabled: bool) -> AsyncIterator[None]:
    """The index kept fresh by the server's watcher while the block runs; the views every
    question shares (ranking arrays, code records) built in a worker thread meanwhile, so the
    client's first question does not wait for them."""
    watcher = IndexWatcher(face.index) if enabled else None
    if watcher is not None:
        watcher.start()
    face.watch = enabled
    warming = start_warming(face.index, prepare=face.host.plan().counter)
    face.warming = warming
    try:
        yield
    finally:
        # a thread cannot be stopped: the index is closed only once it has finished with it
        await asyncio.shield(warming)
        if watcher is not None:
            await watcher.stop()
        for other in list(face.watchers.values()):
            await other.stop()
        face.watchers.clear()


async def serve_stdio(face: McpFace, *, watch: bool = True) -> None:
    """Serve one client on stdin and stdout until stdin closes."""
    server = build_server(face)
    async with watching(face, watch), stdio_server() as (reader, writer):
        await server.run(reader, writer, server.create_initialization_options())


async def serve_http(
    face: McpFace,
    *,
    host: str,
    port: int,
    watch: bool = True,
    log_level: str = "warning",
) -> None:
    """Serve the streamable HTTP transport at ``http://HOST:PORT/mcp`` with the API's token
    rules (``SZRAG_API_TOKENS``, ``SZRAG_ADMIN_TOKEN``, from the face's configuration) until
    interrupted."""
    import uvicorn

    from szrag.mcp.http import authenticated

    settings = face.host.config.server
    server = build_server(face)
    app = authenticated(server.streamable_http_app(host=host), settings)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on")
    async with watching(face, watch):
        await uvicorn.Server(config).serve()
