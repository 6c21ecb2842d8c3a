"""The Model Context Protocol door: agents search, ask and read the knowledge base (and, when
allowed, add and delete documents) through the tools of ``retrieval.mcp.server``, over stdio
(``retrieval mcp``) or streamable HTTP (``retrieval mcp --http``, or beside gRPC in
``retrieval serve`` with ``RETRIEVAL_MCP_PORT``)."""
