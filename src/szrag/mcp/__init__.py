"""The Model Context Protocol face: szrag's retrieval, code structure and live tools for any
MCP client (coding agents, editors, desktop assistants).

A thin face like the CLI and the server: ``catalogue.py`` says which tools exist (strict input
schemas) and which library call each one makes, ``server.py`` serves them with the official
``mcp`` SDK over stdio (one process per client session) or the streamable HTTP transport (on
loopback, with the API's token rules), keeping the index fresh with the server's watcher.
"""

from __future__ import annotations

from szrag.mcp.catalogue import CODE_TOOLS, CodeTool
from szrag.mcp.server import McpFace, build_server, serve_http, serve_stdio

__all__ = ["CODE_TOOLS", "CodeTool", "McpFace", "build_server", "serve_http", "serve_stdio"]
