"""weather_server.py: an MCP server with one tool, written with the `mcp` package's
FastMCP server (`MCPServer` since mcp 2). `python weather_server.py` serves it over stdio."""

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

app = MCPServer("weather")
FORECASTS = {"Paris": "sunny, 24 °C", "Lyon": "rain, 17 °C"}


@app.tool()
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    if city not in FORECASTS:
        raise ToolError(f"no forecast for {city}; try one of {', '.join(FORECASTS)}")
    return f"{city}: {FORECASTS[city]}"


if __name__ == "__main__":
    app.run()
