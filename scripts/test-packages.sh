#!/usr/bin/env bash
# The system packages the tests need, installed when they are missing: the one install path of
# `make test` and of CI (`.ci/run` runs `make test`). Debian's packages, because the tests
# drive real programs rather than stand-ins:
# - postgresql: the storage, job and webhook tests start throwaway servers (tests/pg.py) with
#   its initdb and pg_ctl (on PATH or in /usr/lib/postgresql/*/bin); as root they run as the
#   `postgres` user the package creates;
# - chromium: the Mini App's browser tests drive /usr/bin/chromium with Playwright (the pip
#   package only: Playwright's own browser download is never run);
# - haproxy: the chaos test and tests/test_deploy.py put it in front of the webhook workers,
#   with deploy/haproxy.cfg.
#
# Everything present: prints nothing, runs nothing, exits 0. Something missing: with apt-get
# and either root or password-less sudo, says which packages it installs and installs them;
# otherwise prints one paragraph naming each missing package and exits 1, before pytest would
# fail on them one test at a time.
#
# KRENDZU_SYSROOT (default: none) is prefixed to the fixed paths looked at, so that
# tests/test_test_packages.py can try this script against a made-up machine.
set -euo pipefail

root="${KRENDZU_SYSROOT:-}"

has_postgresql() {
    local found=""
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        found=yes
    else
        local bindir
        for bindir in "$root"/usr/lib/postgresql/*/bin; do
            if [ -x "$bindir/initdb" ] && [ -x "$bindir/pg_ctl" ]; then found=yes; fi
        done
    fi
    [ -n "$found" ] || return 1
    # PostgreSQL refuses to run as root: tests/pg.py runs it as the package's `postgres` user.
    if [ "$(id -u)" -eq 0 ] && ! getent passwd postgres >/dev/null 2>&1; then return 1; fi
    return 0
}

has_chromium() {
    # tests/miniapp_browser.py: KRENDZU_CHROMIUM, else Debian's /usr/bin/chromium.
    if [ -n "${KRENDZU_CHROMIUM:-}" ]; then [ -x "$KRENDZU_CHROMIUM" ]; return; fi
    [ -x "$root/usr/bin/chromium" ]
}

has_haproxy() {
    # tests/cluster.py: PATH, then /usr/sbin and /usr/local/sbin.
    command -v haproxy >/dev/null 2>&1 || [ -x "$root/usr/sbin/haproxy" ] \
        || [ -x "$root/usr/local/sbin/haproxy" ]
}

missing=()
has_postgresql || missing+=(postgresql)
has_chromium || missing+=(chromium)
has_haproxy || missing+=(haproxy)
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
can_install=""
if command -v apt-get >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
        can_install=yes
    elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
        sudo="sudo -n"
        can_install=yes
    fi
fi

if [ -z "$can_install" ]; then
    cat >&2 <<EOF
The tests need these system packages, which are missing here: ${missing[*]}. This machine has
no apt-get that can be run as root or through password-less sudo, so they were not installed.
Install them with your system's package manager and run make test again: the PostgreSQL server
programs (initdb and pg_ctl), a Chromium binary at /usr/bin/chromium (or named by
KRENDZU_CHROMIUM) and haproxy on PATH. On Debian or Ubuntu:
    sudo apt-get install ${missing[*]}
EOF
    exit 1
fi

echo "Installing the Debian packages the tests need: ${missing[*]} (apt-get)"
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
