"""The function-calling loop: tool schema from the live database, model calls, executor results."""
