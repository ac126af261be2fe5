#!/bin/sh
# Reloads HAProxy (after its configuration or a certificate changed) without a moment when it routes by guesswork:
# it saves each server's state through the runtime API, reloads (a new worker takes the new connections and the
# checks, the old one finishes the connections it holds), and removes the saved state once the new worker has read
# it, so that a HAProxy started later (after a crash, a reboot) never starts from a state that has gone stale.
# Needs socat (apt-get install socat). Run as root on the machine that runs HAProxy.
set -eu
socket=${HAPROXY_SOCKET:-/run/haproxy/admin.sock}
state=${HAPROXY_SERVER_STATE:-/run/haproxy/server-state}

haproxy -c -q -f "${HAPROXY_CONFIG:-/etc/haproxy/haproxy.cfg}"
echo "show servers state" | socat stdio "unix-connect:$socket" > "$state.new"
mv "$state.new" "$state"
# Debian's unit runs HAProxy with -Ws: the reload returns once the new worker is ready, having read the file.
systemctl reload haproxy
rm -f "$state"
