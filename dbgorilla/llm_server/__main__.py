"""`python -m dbgorilla.llm_server`: llama-cpp-python's server with this package's patches (its docstring)."""

from dbgorilla.llm_server import main

main()
