#!/usr/bin/python3
# When each certificate of a machine expires, as Prometheus metrics: run it from cron on every machine of the
# deployment, writing into node_exporter's textfile folder, for example
#   17 * * * * root /usr/local/bin/certificate-metrics.py > /var/lib/prometheus/node-exporter/certificates.prom.tmp && mv /var/lib/prometheus/node-exporter/certificates.prom.tmp /var/lib/prometheus/node-exporter/certificates.prom
# Every certificate of every .crt and .pem file of the folder counts, a bundle's each (ca.crt holds two while the
# authority is replaced). A file it cannot read is reported with tessera_certificate_readable 0. It always exits 0.
# docs/operations.md ("Certificates") gives the alert rule. tests/failover runs this script as it is.
#
#   certificate-metrics.py [FOLDER]    default: /etc/tessera/tls
import os
import re
import subprocess
import sys
from datetime import datetime, timezone

FOLDER = sys.argv[1] if len(sys.argv) > 1 else "/etc/tessera/tls"
BLOCK = re.compile(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.S)


def label(value):
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def described(pem):
    """The certificate's subject, serial number and end of validity (Unix time), from openssl; None when it cannot say."""
    answer = subprocess.run(["openssl", "x509", "-noout", "-subject", "-serial", "-enddate", "-nameopt", "RFC2253"], input=pem, capture_output=True, text=True)
    if answer.returncode != 0:
        return None
    fields = dict(line.split("=", 1) for line in answer.stdout.splitlines() if "=" in line)
    try:
        ends = datetime.strptime(fields["notAfter"], "%b %d %H:%M:%S %Y %Z").replace(tzinfo=timezone.utc)
    except (KeyError, ValueError):
        return None
    return fields.get("subject", ""), fields.get("serial", ""), int(ends.timestamp())


seen = set()
lines = [
    "# HELP tessera_certificate_not_after_seconds When the certificate stops being valid (Unix time).",
    "# TYPE tessera_certificate_not_after_seconds gauge",
]
readable = []
names = sorted(os.listdir(FOLDER)) if os.path.isdir(FOLDER) else []
for name in names:
    if not (name.endswith(".crt") or name.endswith(".pem")):
        continue
    path = os.path.join(FOLDER, name)
    try:
        with open(path, encoding="ascii", errors="replace") as file:
            blocks = BLOCK.findall(file.read())
    except OSError:
        blocks = []
    found = [described(block) for block in blocks]
    readable.append((name, len(blocks) > 0 and all(found)))
    for entry in found:
        # The same certificate twice in one file (a bundle) is one series.
        if entry and (path, entry) not in seen:
            seen.add((path, entry))
            subject, serial, ends = entry
            lines.append(f'tessera_certificate_not_after_seconds{{file="{label(path)}",subject="{label(subject)}",serial="{label(serial)}"}} {ends}')
lines += [
    "# HELP tessera_certificate_readable 1 when every certificate of the file could be read.",
    "# TYPE tessera_certificate_readable gauge",
]
lines += [f'tessera_certificate_readable{{file="{label(os.path.join(FOLDER, name))}"}} {1 if ok else 0}' for name, ok in readable]
print("\n".join(lines))
