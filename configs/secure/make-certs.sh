#!/usr/bin/env bash
# Makes the certificates of an authenticated Flotilla network (see
# docs/security.md): a certificate authority, and a certificate and key per identity, each
# signed by it, with the identity as its common name — the name the world's
# access control knows it by.
#
#   make-certs.sh [-o DIR] [-r "robot1 robot2 ..."] WORLD_ADDRESS...
#
# WORLD_ADDRESS: every IP address or host name the world is reached at (the
# nodes check the world's certificate against the address they connect to).
# -o: where to write them (default: certs/ beside this script).
# -r: the robots that get a controller identity (default: robot1 to robot4).
# Identities: world, node (every plugin node), operator (spawn, delete, reset
# and the other control services), bridge, and controller-<robot> per robot.
set -euo pipefail

out="$(dirname "$0")/certs"
robots="robot1 robot2 robot3 robot4"
while getopts "o:r:" option; do
    case "$option" in
        o) out="$OPTARG" ;;
        r) robots="$OPTARG" ;;
        *) echo "usage: $0 [-o DIR] [-r \"robot1 robot2\"] WORLD_ADDRESS..." >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
    echo "usage: $0 [-o DIR] [-r \"robot1 robot2\"] WORLD_ADDRESS... (the world's IPs or host names)" >&2
    exit 2
fi
mkdir -p "$out"
cd "$out"

days=825  # what browsers and rustls accept for a leaf certificate
if [ ! -f ca.pem ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
        -subj "/CN=flotilla-ca" -keyout ca.key -out ca.pem 2>/dev/null
fi

# Subject alternative names of the world: every address it is reached at.
world_names=""
for address in "$@" localhost 127.0.0.1; do
    if [[ "$address" =~ ^[0-9.]+$ || "$address" == *:* ]]; then
        world_names+="IP:$address,"
    else
        world_names+="DNS:$address,"
    fi
done

issue() {  # issue NAME [SUBJECT_ALT_NAMES]
    local name="$1" san="${2:-DNS:$1}"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name" \
        -keyout "$name.key" -out "$name.csr" 2>/dev/null
    printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n' "$san" > "$name.ext"
    openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$days" \
        -extfile "$name.ext" -out "$name.pem" 2>/dev/null
    rm -f "$name.csr" "$name.ext"
}

issue world "${world_names%,}"
for name in node operator bridge; do
    issue "$name"
done
for robot in $robots; do
    issue "controller-$robot"
done
chmod 600 ./*.key
echo "certificates for world, node, operator, bridge and controller-{${robots// /,}} in $(pwd)"
