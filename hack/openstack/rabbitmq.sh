#!/usr/bin/env bash
# Makes sure Debian's rabbitmq-server is installed (apt-get, when missing) and
# prints the path of its server script. The mini cloud runs its own RabbitMQ
# node on free loopback ports (tools/openstack-cloud), never the system service.
set -euo pipefail
server=/usr/lib/rabbitmq/bin/rabbitmq-server
if [ ! -x "$server" ] || ! command -v epmd >/dev/null; then
  echo "rabbitmq: installing Debian's rabbitmq-server (first time only)..." >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # no service start inside containers without an init system: we start our own node
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends rabbitmq-server >&2
fi
[ -x "$server" ] || { echo "rabbitmq: $server missing after install" >&2; exit 1; }
echo "$server"
