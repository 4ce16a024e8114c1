#!/usr/bin/env bash
# Start a Docker engine for the docker tier of the tests, idempotently. Where one answers already,
# nothing happens. Where this runs as root with apt, it installs Debian's docker.io, docker-compose
# and debootstrap (the local images are built from Debian packages) and starts dockerd. Anywhere
# else it says why it cannot, and the docker tests skip with that reason; it never fails the run.
set -uo pipefail
log=/var/log/dbgorilla-dockerd.log
if docker info > /dev/null 2>&1; then
    echo "docker engine: already running"
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get > /dev/null; then
    echo "docker engine: not started (installing one needs root and apt); the docker tests will skip" >&2
    exit 0
fi
if ! command -v dockerd > /dev/null || ! command -v docker-compose > /dev/null || ! command -v debootstrap > /dev/null; then
    echo "docker engine: installing docker.io, docker-compose and debootstrap from Debian's packages"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose debootstrap > /dev/null; }; then
        echo "docker engine: apt-get install failed; the docker tests will skip" >&2
        exit 0
    fi
fi
nohup dockerd > "$log" 2>&1 &
for _ in $(seq 1 60); do
    if docker info > /dev/null 2>&1; then
        echo "docker engine: started (log: $log)"
        exit 0
    fi
    sleep 1
done
echo "docker engine: dockerd did not answer within 60 s (see $log); the docker tests will skip" >&2
exit 0
