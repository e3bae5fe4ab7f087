#!/bin/sh
# Run a command (e.g. the hostile-corpus tests) inside a cgroup v1 safety net,
# so a sandbox bug cannot take the machine down with a fork or memory bomb.
#
#   tests/safety_net.sh python -m pytest tests/test_hardening.py
#
# The net is nested under this shell's own memory and pids cgroups (so any
# limit the caller already runs under still applies), removed afterwards.
# Limits: AIOEVAL_NET_PIDS (default 4000) and AIOEVAL_NET_MEM (default 12G).
# Without v1 controllers or root it runs the command unconfined, with a warning.
set -u
name="aioeval-safety-$$"
dirs=""
for ctrl in pids memory; do
    own=$(awk -F: -v c="$ctrl" '$2 ~ "(^|,)" c "(,|$)" {print $3}' /proc/self/cgroup)
    dir="/sys/fs/cgroup/$ctrl${own%/}/$name"
    if [ -n "$own" ] && mkdir "$dir" 2>/dev/null; then
        dirs="$dirs $dir"
    else
        echo "safety_net: no $ctrl cgroup available; running without that limit" >&2
    fi
done
for dir in $dirs; do
    case "$dir" in
    */pids/*) echo "${AIOEVAL_NET_PIDS:-4000}" >"$dir/pids.max" ;;
    */memory/*)
        echo "${AIOEVAL_NET_MEM:-12G}" >"$dir/memory.limit_in_bytes"
        echo "${AIOEVAL_NET_MEM:-12G}" >"$dir/memory.memsw.limit_in_bytes" 2>/dev/null
        ;;
    esac
done
# The child joins the net, then becomes the command.
sh -c 'for d in $1; do echo $$ >"$d/cgroup.procs"; done; shift; exec "$@"' sh "$dirs" "$@"
status=$?
for dir in $dirs; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        # Nested cgroups (sandbox templates killed with their engine) first.
        find "$dir" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
        rmdir "$dir" 2>/dev/null && break
        for pid in $(cat "$dir/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        sleep 0.2
    done
done
exit $status
