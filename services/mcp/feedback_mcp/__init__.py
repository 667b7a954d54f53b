"""The MCP service (plugin ``mcp``). The package is not named ``mcp``: that is the SDK's."""
