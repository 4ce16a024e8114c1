"""Tool arguments to weaviate-client v4 calls, with typed errors and canonical results."""
