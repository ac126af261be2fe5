#!/usr/bin/python3
# The repository's health as Prometheus metrics, from `pgbackrest info --output=json` and the report of the last
# `pgbackrest verify` (backup.cron writes it): run it on the repository machine from cron every few minutes,
# writing into node_exporter's textfile folder, for example
#   */5 * * * * postgres /usr/local/bin/backup-metrics.py > /var/lib/prometheus/node-exporter/pgbackrest.prom.tmp && mv /var/lib/prometheus/node-exporter/pgbackrest.prom.tmp /var/lib/prometheus/node-exporter/pgbackrest.prom
# It always exits 0, so the file is replaced even when the repository is unhealthy (pgbackrest_info_ok 0 says so).
# docs/operations.md ("Backups and restores") gives the alert rules. tests/failover runs this script as it is.
#
#   backup-metrics.py [STANZA [VERIFY_REPORT]]    defaults: tessera, /var/log/pgbackrest/verify-last.txt
import json
import os
import re
import subprocess
import sys

STANZA = sys.argv[1] if len(sys.argv) > 1 else "tessera"
VERIFY_REPORT = sys.argv[2] if len(sys.argv) > 2 else "/var/log/pgbackrest/verify-last.txt"

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
# `pgbackrest verify` exits 0 whatever it finds: its report says `status: ok` or `status: error`.
lines += [
    "# HELP pgbackrest_verify_ok 1 when the last verify report says status: ok, 0 when it says otherwise.",
    "# TYPE pgbackrest_verify_ok gauge",
    "# HELP pgbackrest_verify_report_seconds When the last verify report was written (Unix time).",
    "# TYPE pgbackrest_verify_report_seconds gauge",
]
try:
    with open(VERIFY_REPORT, encoding="utf-8") as report:
        text = report.read()
    verified = re.search(r"^\s*status: ok\s*$", text, re.MULTILINE) is not None and re.search(r"status: error", text) is None
    lines.append(f'pgbackrest_verify_ok{{stanza="{STANZA}"}} {1 if verified else 0}')
    lines.append(f'pgbackrest_verify_report_seconds{{stanza="{STANZA}"}} {int(os.path.getmtime(VERIFY_REPORT))}')
except OSError:
    pass
print("\n".join(lines))
