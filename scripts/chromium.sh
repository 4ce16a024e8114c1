#!/usr/bin/env bash
# Debian's headless Chromium for the demo page's browser test (tests/integration/test_demo_page.py,
# driven by Playwright with executable_path=/usr/bin/chromium: Playwright never downloads a browser).
# Idempotent: nothing happens where it is installed. It needs root and apt; anywhere else it says how.
set -uo pipefail
if [ -x /usr/bin/chromium ]; then
    echo "chromium: already installed"
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get > /dev/null; then
    echo "chromium: not installed (needs root and apt): run 'apt-get install chromium'; the demo page's browser test needs it" >&2
    exit 0
fi
echo "chromium: installing Debian's chromium"
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null; }; then
    echo "chromium: apt-get install failed; the demo page's browser test will fail naming it" >&2
fi
exit 0
