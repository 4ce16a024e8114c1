"""The doors a user reaches the agent through, beside the CLI: the MCP server, and the Query Agent's API that
`dbgorilla serve` answers (its routes, `agents_api`; its wire format, `agents_wire`)."""
