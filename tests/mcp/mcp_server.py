"""A real MCP server for the tests, written with the `mcp` package's FastMCP server
(`MCPServer` since mcp 2). Run as `python mcp_server.py` it serves over stdio; with
`--http` it serves streamable HTTP on a loopback port (`--port`, a free one by default)
and prints `PORT <n>` once it listens.

`--tools NAMES` keeps only the tools named (comma-separated), so two servers can offer
clashing names.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import sys

import anyio
import uvicorn
from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import (
    INVALID_PARAMS,
    AudioContent,
    CallToolResult,
    ImageContent,
    TextContent,
)
from pydantic import BaseModel

server = MCPServer("wink-tests", log_level="CRITICAL")


class Point(BaseModel):
    x: float
    y: float


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def search(query: str) -> str:
    """Search the test corpus."""
    return f"results for {query}"


@server.tool()
def distance(start: Point, end: Point | None = None) -> float:
    """Distance between two points (from the origin without an end)."""
    other = end or Point(x=0, y=0)
    return ((start.x - other.x) ** 2 + (start.y - other.y) ** 2) ** 0.5


@server.tool()
def crash(reason: str) -> str:
    """A tool with a bug: it raises."""
    raise ValueError(f"bug: {reason}")


@server.tool()
def refuse(reason: str) -> CallToolResult:
    """A tool that reports an error (isError)."""
    return CallToolResult(
        content=[TextContent(type="text", text=f"refused: {reason}")], is_error=True
    )


@server.tool()
def declined(reason: str) -> str:
    """A tool that reports an error by raising ToolError."""
    raise ToolError(f"declined: {reason}")


@server.tool()
def protocol_error() -> str:
    """A tool whose call is answered with a JSON-RPC error."""
    raise MCPError(code=INVALID_PARAMS, message="the server rejects this call")


@server.tool()
async def slow(seconds: float, started: str = "") -> str:
    """Sleeps, then answers; first creates the file `started`, if named."""
    if started:
        await anyio.Path(started).touch()
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def secret_error() -> str:
    """Reports an error that quotes the API key from its environment."""
    raise ToolError(f"key {os.environ.get('TEST_API_KEY', '')} was refused")


PIXEL = base64.b64decode(  # a 1x1 red PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


@server.tool()
def picture() -> Image:
    """A tiny PNG."""
    return Image(data=PIXEL, format="png")


@server.tool()
def recording() -> CallToolResult:
    """A picture and a sound, with a caption."""
    return CallToolResult(
        content=[
            TextContent(type="text", text="a red pixel, and silence"),
            ImageContent(
                type="image", data=base64.b64encode(PIXEL).decode(), mime_type="image/png"
            ),
            AudioContent(type="audio", data="UklGRg==", mime_type="audio/wav"),
        ]
    )


@server.tool(name="db.query")
def db_query(sql: str) -> str:
    """A tool whose name providers cannot take as it is."""
    return f"ran {sql}"


async def serve_http(port: int) -> None:
    app = server.streamable_http_app()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical")
    http = uvicorn.Server(config)
    task = asyncio.create_task(http.serve())
    while not http.started:  # noqa: ASYNC110  (uvicorn has no event for it)
        await asyncio.sleep(0.01)
    port = http.servers[0].sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    await task


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tools", default="")
    options = parser.parse_args()
    if options.tools:
        keep = set(options.tools.split(","))
        for tool in list(asyncio.run(server.list_tools())):
            if tool.name not in keep:
                server.remove_tool(tool.name)
    if options.http:
        asyncio.run(serve_http(options.port))
    else:
        server.run()
    sys.exit(0)


if __name__ == "__main__":
    main()
