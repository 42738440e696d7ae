#!/usr/bin/env bash
# Makes sure Debian's openipmi (ipmi_sim, the IPMI BMC of the mini cloud's
# emulated BMCs) and ipmitool (the client the operator's IPMI driver runs)
# are installed (apt-get, when missing), and prints the path of ipmi_sim.
# Like hack/openstack/rabbitmq.sh: no service is started; the mini cloud runs
# its own ipmi_sim per host on free loopback ports (tools/openstack-cloud/bmc/).
set -euo pipefail
if ! command -v ipmi_sim >/dev/null || ! command -v ipmitool >/dev/null; then
  echo "openipmi: installing Debian's openipmi and ipmitool (first time only)..." >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # another apt (the rabbitmq-server install, hack/openstack/rabbitmq.sh) may hold dpkg's lock: wait for it
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends openipmi ipmitool >&2
fi
command -v ipmi_sim
