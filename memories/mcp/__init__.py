"""The MCP (Model Context Protocol) server: the memory as tools for agents (``manage.py mcp``).

- ``server``: the SDK's ``MCPServer`` over stdio or streamable HTTP.
- ``auth``: who the tools act as: API keys as the HTTP transport's bearer tokens, or what stdio was started with.
- ``tools``: the tools, each mapping its arguments to a GraphQL operation's variables.
- ``operations``: those operations, documents of the public GraphQL API.
- ``execution``: runs an operation in-process as the caller, and maps its result to a tool result.
"""
