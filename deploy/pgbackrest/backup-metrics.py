#!/usr/bin/python3
# The repository's health as Prometheus metrics, from `pgbackrest info --output=json`: run it on the repository
# machine from cron every few minutes, writing into node_exporter's textfile folder, for example
#   */5 * * * * postgres /usr/local/bin/backup-metrics.py > /var/lib/prometheus/node-exporter/pgbackrest.prom.$$ && mv /var/lib/prometheus/node-exporter/pgbackrest.prom.$$ /var/lib/prometheus/node-exporter/pgbackrest.prom
# docs/operations.md ("Backups and restores") gives the alert rules. tests/failover runs this script as it is.
import json
import subprocess
import sys

STANZA = sys.argv[1] if len(sys.argv) > 1 else "tessera"

answer = subprocess.run(["pgbackrest", f"--stanza={STANZA}", "--output=json", "info"], capture_output=True, text=True)
lines = [
    "# HELP pgbackrest_info_ok 1 when pgbackrest info answered and the stanza's status is ok.",
    "# TYPE pgbackrest_info_ok gauge",
]
stanzas = json.loads(answer.stdout) if answer.returncode == 0 and answer.stdout.strip() else []
stanza = next((entry for entry in stanzas if entry.get("name") == STANZA), None)
ok = stanza is not None and stanza.get("status", {}).get("code") == 0
lines.append(f'pgbackrest_info_ok{{stanza="{STANZA}"}} {1 if ok else 0}')
backups = stanza.get("backup", []) if stanza else []
lines += [
    "# HELP pgbackrest_backup_last_stop_seconds When the newest backup of each type ended (Unix time).",
    "# TYPE pgbackrest_backup_last_stop_seconds gauge",
]
for kind in ("full", "diff", "incr"):
    stops = [backup["timestamp"]["stop"] for backup in backups if backup.get("type") == kind and not backup.get("error", False)]
    if stops:
        lines.append(f'pgbackrest_backup_last_stop_seconds{{stanza="{STANZA}",type="{kind}"}} {max(stops)}')
lines += [
    "# HELP pgbackrest_backup_count Backups kept in the repository.",
    "# TYPE pgbackrest_backup_count gauge",
    f'pgbackrest_backup_count{{stanza="{STANZA}"}} {len(backups)}',
]
print("\n".join(lines))
sys.exit(0 if ok else 1)
