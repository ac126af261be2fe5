#!/bin/sh
# Replaces the deployment's certificate authority in three steps, so that at no moment does a machine present a
# certificate that another machine does not trust (docs/operations.md, "Replacing the certificate authority").
#
#   rotate-authority.sh FOLDER begin    makes a new authority; ca.crt then holds the new one and the old one
#   make-certificates.sh FOLDER NAME... (every machine's certificate again, now signed by the new authority)
#   rotate-authority.sh FOLDER finish   ca.crt holds the new authority alone; the old one's key is deleted
#
# After each step, copy ca.crt (and, after the second, each machine's certificate) to the machines and have every
# program read them again, as the runbook says. FOLDER is the one make-certificates.sh keeps the authority in.
# `finish` refuses while a certificate in FOLDER is still signed by the old authority.
set -eu

if [ "$#" -ne 2 ]; then
  echo "usage: rotate-authority.sh FOLDER begin|finish" >&2
  exit 2
fi
folder=$1
step=$2
umask 077

if [ ! -f "$folder/ca.key" ] || [ ! -f "$folder/ca.crt" ]; then
  echo "$folder has no certificate authority (ca.key and ca.crt of make-certificates.sh)" >&2
  exit 1
fi

case $step in
  begin)
    if [ -f "$folder/ca-retiring.crt" ]; then
      echo "a rotation is under way in $folder (ca-retiring.crt is there): finish it first" >&2
      exit 1
    fi
    stamp=$(date -u +%Y-%m-%dT%H:%MZ)
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -sha256 -days 3650 \
      -subj "/CN=Tessera deployment CA $stamp" -keyout "$folder/ca-new.key" -out "$folder/ca-new.crt" 2>/dev/null
    # The old authority is kept beside the new until `finish`; the trusted file holds the new one first, which
    # make-certificates.sh then signs with.
    openssl x509 -in "$folder/ca.crt" -out "$folder/ca-retiring.crt"
    mv "$folder/ca.key" "$folder/ca-retiring.key"
    mv "$folder/ca-new.key" "$folder/ca.key"
    cat "$folder/ca-new.crt" "$folder/ca-retiring.crt" > "$folder/ca.crt"
    rm -f "$folder/ca-new.crt"
    echo "made a new certificate authority (Tessera deployment CA $stamp): $folder/ca.crt now trusts it and the old one"
    echo "next: copy ca.crt to every machine and reload, then make every machine's certificate again with make-certificates.sh"
    ;;
  finish)
    if [ ! -f "$folder/ca-retiring.crt" ]; then
      echo "no rotation is under way in $folder: run rotate-authority.sh $folder begin first" >&2
      exit 1
    fi
    current=$(mktemp)
    openssl x509 -in "$folder/ca.crt" -out "$current"
    stale=""
    for certificate in "$folder"/*.crt; do
      case $(basename "$certificate") in ca.crt | ca-retiring.crt) continue ;; esac
      if ! openssl verify -CAfile "$current" "$certificate" >/dev/null 2>&1; then
        stale="$stale $(basename "$certificate" .crt)"
      fi
    done
    if [ -n "$stale" ]; then
      rm -f "$current"
      echo "still signed by the old authority:$stale; make them again with make-certificates.sh $folder$stale first" >&2
      exit 1
    fi
    mv "$current" "$folder/ca.crt"
    rm -f "$folder/ca-retiring.crt" "$folder/ca-retiring.key"
    echo "$folder/ca.crt now trusts the new authority alone; the old one's key is deleted"
    echo "next: copy ca.crt to every machine and reload"
    ;;
  *)
    echo "usage: rotate-authority.sh FOLDER begin|finish" >&2
    exit 2
    ;;
esac
