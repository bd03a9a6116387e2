#!/usr/bin/env bash
# Makes the Dockerfile's base image (node:20-bookworm-slim) locally, for machines that reach Debian's
# mirror but no container registry: a minbase Debian bookworm rootfs from mmdebstrap plus this
# machine's Node 20, laid out as the official image has it (/usr/local). Kept in Podman's storage
# with a label naming the Debian release, Node version and architecture: made again only when one changes.
# Usage: bash scripts/container-base-image.sh [TAG]    (PODMAN overrides the podman command line)
set -euo pipefail

tag="${1:-node:20-bookworm-slim}"
release=bookworm
podman_cmd=(${PODMAN:-podman --runtime runc --cgroup-manager=cgroupfs})
node_bin="$(command -v node)"
node_version="$("$node_bin" --version)"
case "$node_version" in v20.*) ;; *) echo "container-base-image: the image is Node 20's; this machine's node is $node_version" >&2; exit 1 ;; esac
node_prefix="$(dirname "$(dirname "$(readlink -f "$node_bin")")")"
[ -d "$node_prefix/include/node" ] || { echo "container-base-image: no Node headers in $node_prefix/include/node (native modules build against them)" >&2; exit 1; }
[ -d "$node_prefix/lib/node_modules/npm" ] || { echo "container-base-image: no npm in $node_prefix/lib/node_modules/npm" >&2; exit 1; }
key="debian-$release-node-$node_version-$(uname -m)"

if [ "$("${podman_cmd[@]}" image inspect --format '{{ index .Labels "sluice.base-key" }}' "$tag" 2>/dev/null || true)" = "$key" ]; then
  exit 0
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/sluice-base-XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The official image's layout: node, npm, npx and the headers under /usr/local.
mmdebstrap --quiet --variant=minbase --aptopt='Acquire::Check-Valid-Until "false"' \
  --customize-hook='mkdir -p "$1/usr/local/bin" "$1/usr/local/lib/node_modules" "$1/usr/local/include"' \
  --customize-hook="cp -a '$node_prefix/bin/node' \"\$1/usr/local/bin/node\"" \
  --customize-hook="cp -a '$node_prefix/lib/node_modules/npm' \"\$1/usr/local/lib/node_modules/\"" \
  --customize-hook="cp -a '$node_prefix/include/node' \"\$1/usr/local/include/\"" \
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"' \
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
  "$release" "$work/rootfs.tar" http://deb.debian.org/debian
"${podman_cmd[@]}" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=${node_version#v}" \
  --change "LABEL sluice.base-key=$key" \
  --change 'CMD ["node"]' \
  "$work/rootfs.tar" "$tag" >/dev/null
