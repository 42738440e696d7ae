# Shared by hack/image/*.sh (sourced, not run).

# npm for the local base image: the major the node:24 images ship.
NPM_VERSION=11.19.1

# The test cluster's sandbox image (hack/cluster/host.sh builds it; containerd's sandbox_image).
PAUSE_IMAGE=localhost/masakari-pause:3.10

# ensure_packages PKG...: apt-get installs the Debian packages that are missing.
ensure_packages() {
  local missing=() p
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || { echo "$(basename "$0"): needs ${missing[*]} (no apt-get here to install them)" >&2; exit 1; }
  echo "installing ${missing[*]} from Debian..." >&2
  [ -n "$(ls -A /var/lib/apt/lists/ 2>/dev/null | grep -v -e lock -e partial)" ] || apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# The Debian mirror the host's apt uses (deb.debian.org when it cannot tell).
debian_mirror() {
  local uri
  uri=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | grep -v security \
    | awk '$1 == "URIs:" { print $2; exit } $1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }')
  [[ "$uri" == http*debian ]] || uri=http://deb.debian.org/debian
  echo "$uri"
}
