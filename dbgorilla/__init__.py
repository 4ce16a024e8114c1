"""dbgorilla-live: the CLI and the services it runs (Weaviate, the embedder, the local model)."""

__version__ = "0.1.0"
