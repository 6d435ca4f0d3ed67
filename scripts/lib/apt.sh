# Sourced by scripts/setup, scripts/services and scripts/test: Debian packages through apt-get,
# waiting for a package lock another process holds (an unattended upgrade, another set-up)
# instead of failing at once; after TEN_APT_LOCK_TIMEOUT seconds (default 300) it gives up
# with a message saying what to do.
#   apt_install <who> <package>...   # <who> names the calling script in messages

apt_install() {
  local who=$1
  shift
  if ! command -v apt-get >/dev/null; then
    echo "$who: apt-get not found: install $* yourself" >&2
    return 1
  fi
  local timeout=${TEN_APT_LOCK_TIMEOUT:-300}
  # DPkg::Lock::Timeout: apt-get waits that long for the dpkg lock and for the package lists'
  # lock (apt 1.9.11+), then fails with "Could not get lock ..."
  if ! apt-get -o "DPkg::Lock::Timeout=$timeout" update -qq ||
    ! DEBIAN_FRONTEND=noninteractive apt-get -o "DPkg::Lock::Timeout=$timeout" \
      install -y -qq "$@" >/dev/null; then
    echo "$who: could not install $* with apt-get (see its message above). If another" \
      "process held the package lock for more than ${timeout} s, let it finish (or set" \
      "TEN_APT_LOCK_TIMEOUT=<seconds>) and run again." >&2
    return 1
  fi
}
