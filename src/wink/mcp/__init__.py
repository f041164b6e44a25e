"""Tools from MCP servers, under wink's contract: `from wink.mcp import MCPServerStdio`.

A section offers a server's tools with `MarkdownSection(..., mcp_servers=[server])`.
Whatever goes wrong in a call (an error the tool reports, a protocol error, a server
that dies or does not answer in time) goes back to the model as a failed `ToolResult`;
a server that cannot be started or reached raises `wink.ToolSourceError` when it
connects. Needs the `mcp` package: `pip install 'wink[mcp]'` (docs/mcp.md).
"""

from .options import ToolFilter as ToolFilter
from .servers import MCPServerHTTP as MCPServerHTTP, MCPServerStdio as MCPServerStdio

__all__ = ["MCPServerHTTP", "MCPServerStdio", "ToolFilter"]
