"""`python -m dbgorilla.embedding --port N`: run the inference service in the foreground."""

from __future__ import annotations

import argparse

from dbgorilla.embedding.server import serve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8086)
    args = parser.parse_args()
    serve(args.host, args.port)


if __name__ == "__main__":
    main()
