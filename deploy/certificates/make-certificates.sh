#!/bin/sh
# Makes the deployment's certificate authority (once) and a key and certificate for each named machine, signed by it,
# with openssl alone. Run it on an administrator's machine and copy each machine's files to it (docs/deployment.md,
# "Backups"); tests/failover runs this script as it is.
#
#   make-certificates.sh FOLDER NAME...
#
# FOLDER keeps ca.key (the authority's key: keep it off the servers) and ca.crt (give it to every machine), and gets
# NAME.key, NAME.crt and NAME.pem (the two in one file, as HAProxy takes them) for each NAME: a certificate whose common name is NAME (the name pgBackRest's
# tls-server-auth lists) and that is valid as a server and as a client for the DNS name NAME, plus any of
# EXTRA_NAMES (space-separated: more DNS names or IP:addresses). EXTRA_NAMES goes into every certificate of the
# run: give a machine's other names in a run of its own (EXTRA_NAMES="db1 10.0.0.11" make-certificates.sh DIR
# db1.internal), never to several machines at once. An existing authority is kept; existing leaves are
# replaced, so running it again renews them. Certificates last DAYS days (825 by default), the authority 3650.
set -eu

if [ "$#" -lt 2 ]; then
  echo "usage: make-certificates.sh FOLDER NAME..." >&2
  exit 2
fi
folder=$1
shift
days=${DAYS:-825}
umask 077
mkdir -p "$folder"

if [ ! -f "$folder/ca.key" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -sha256 -days 3650 \
    -subj "/CN=Tessera deployment CA" -keyout "$folder/ca.key" -out "$folder/ca.crt" 2>/dev/null
  echo "made the certificate authority: $folder/ca.crt"
fi

for name in "$@"; do
  case $name in
    *[!A-Za-z0-9.-]* | "") echo "not a host name: $name" >&2; exit 2 ;;
  esac
  names="DNS:$name"
  for extra in ${EXTRA_NAMES:-}; do
    case $extra in
      IP:*) names="$names,$extra" ;;
      *) names="$names,DNS:$extra" ;;
    esac
  done
  extensions=$(mktemp)
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=%s\n' "$names" > "$extensions"
  # Made beside the files in use and renamed over them at the end, so that a program reading them (etcd does at
  # each connection) never finds a new key with the old certificate for long.
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -sha256 -subj "/CN=$name" \
    -keyout "$folder/$name.key.new" -out "$folder/$name.csr" 2>/dev/null
  openssl x509 -req -sha256 -days "$days" -in "$folder/$name.csr" -CA "$folder/ca.crt" -CAkey "$folder/ca.key" \
    -CAcreateserial -extfile "$extensions" -out "$folder/$name.crt.new" 2>/dev/null
  rm -f "$folder/$name.csr" "$extensions"
  # HAProxy takes the certificate and its key in one file.
  cat "$folder/$name.crt.new" "$folder/$name.key.new" > "$folder/$name.pem.new"
  mv "$folder/$name.key.new" "$folder/$name.key"
  mv "$folder/$name.crt.new" "$folder/$name.crt"
  mv "$folder/$name.pem.new" "$folder/$name.pem"
  echo "made $folder/$name.crt ($names, $days days)"
done
