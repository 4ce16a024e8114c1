"""Local stand-in for Weaviate's text2vec-transformers inference container."""
