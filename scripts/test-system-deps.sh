#!/usr/bin/env bash
# Installs the Debian packages the test suite drives for real (run by `npm test` before vitest, and
# by .ci/run). As root it apt-get installs what is missing; otherwise it names the one command to run.
set -uo pipefail

need_apt=()
# PostgreSQL's server binaries: the tests start throwaway clusters of their own (test/support/postgres.ts).
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need_apt+=(postgresql)
# PgBouncer in transaction pooling mode in front of Sluice nodes (test/stores/postgres-pgbouncer.test.ts).
[ -x /usr/sbin/pgbouncer ] || need_apt+=(pgbouncer)
# boto3 and the aws CLI, Debian's own (test/smoke uses /usr/bin/python3 and /usr/bin/aws, not a version manager's shims).
/usr/bin/python3 -c 'import boto3' 2>/dev/null || need_apt+=(python3-boto3)
[ -x /usr/bin/aws ] || need_apt+=(awscli)
# Debian's Chromium: the dashboard's browser tests drive it through playwright-core (test/dashboard).
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
# promtool (Debian's prometheus package): the metrics and alert-rule tests check /metrics and
# docs/operations.md's rules with it.
[ -x /usr/bin/promtool ] || need_apt+=(prometheus)
# systemd-analyze: docs/operations.md's unit file is verified with it.
command -v systemd-analyze >/dev/null || need_apt+=(systemd)
# Podman (with runc) and mmdebstrap: test/container builds the Dockerfile's image on a base made
# locally (scripts/container-base-image.sh) and runs it.
for tool in podman runc mmdebstrap; do command -v "$tool" >/dev/null || need_apt+=("$tool"); done
# The Python SDK's tests (clients/python, run by test/python), its packaging test (wheel + sdist
# built offline, installed into a fresh venv) and examples/python-digits' model.
for mod_pkg in pytest:python3-pytest sklearn:python3-sklearn build:python3-build setuptools:python3-setuptools \
               wheel:python3-wheel pip:python3-pip ensurepip:python3-venv; do
  /usr/bin/python3 -c "import ${mod_pkg%%:*}" 2>/dev/null || need_apt+=("${mod_pkg##*:}")
done

# Podman's default rlimits are refused on these machines: a drop-in turns them off (root only).
podman_dropin=/etc/containers/containers.conf.d/sluice-tests-ulimits.conf
if [ "$(id -u)" -eq 0 ] && ! grep -qs 'default_ulimits *= *\[ *\]' /etc/containers/containers.conf.d/*.conf; then
  mkdir -p /etc/containers/containers.conf.d && printf '[containers]\ndefault_ulimits = []\n' > "$podman_dropin"
fi

[ "${#need_apt[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "The tests need Debian packages that are missing; install them with: sudo apt-get install -y ${need_apt[*]}" >&2
  exit 1
fi
echo "test setup: apt-get install ${need_apt[*]}" >&2
apt-get -o DPkg::Lock::Timeout=300 update -qq &&
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${need_apt[@]}" >/dev/null || {
    echo "apt-get install ${need_apt[*]} failed" >&2
    exit 1
  }
