"""The demo page (`dbgorilla demo`): the agent session every door uses, on a web page served on
127.0.0.1, each step streamed as it happens. The page is plain HTML, CSS and JavaScript shipped in
the package (`static/`): no build step, nothing fetched from elsewhere."""
