#!/usr/bin/env bash
# @module Builds a Debian base image offline: debootstrap (minbase) from the Debian mirror this
# machine already uses, then `docker import`. Tags it TAG and, so that standard Dockerfiles
# (`FROM debian:SUITE-slim`) build unchanged without a registry, also debian:SUITE-slim when no such
# image is present.
#   images/build-base.sh SUITE TAG        e.g. images/build-base.sh bookworm hookbox/base:bookworm
set -euo pipefail
SUITE=${1:?usage: build-base.sh SUITE TAG}
TAG=${2:?usage: build-base.sh SUITE TAG}
say() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

mirror() {
  local m
  m=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
      | grep -vE 'security|updates|nodesource|google|docker' \
      | sed -E 's/^URIs:[[:space:]]*//; s/^deb (\[[^]]*\] )?//' | awk '{print $1}' | grep -E '/debian/?$' | head -n1)
  echo "${m:-http://deb.debian.org/debian}"
}

if ! docker image inspect "$TAG" >/dev/null 2>&1; then
  if timeout 20 docker pull -q "debian:$SUITE-slim" >/dev/null 2>&1; then
    docker tag "debian:$SUITE-slim" "$TAG"
    say "base $TAG pulled from a registry"
  else
    if ! command -v debootstrap >/dev/null 2>&1; then
      [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || die "debootstrap is missing and cannot be installed here"
      log=$(mktemp /var/tmp/hookbox-apt.XXXXXX.log)
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >"$log" 2>&1 \
        || { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >"$log" 2>&1; } \
        || die "cannot install debootstrap; see $log"
    fi
    m=$(mirror)
    dir=$(mktemp -d /var/tmp/hookbox-base.XXXXXX)
    trap 'rm -rf "$dir"' EXIT
    say "no registry answers: debootstrap $SUITE from $m (about a minute) ..."
    log=$(mktemp "/var/tmp/hookbox-debootstrap-$SUITE.XXXXXX.log")
    # Release files checked against the Debian archive keyring, whatever the mirror's scheme: no
    # unverified packages in the image every hook runs in.
    debootstrap --force-check-gpg --variant=minbase "$SUITE" "$dir" "$m" >"$log" 2>&1 \
      || die "debootstrap failed (its Release files must verify against debian-archive-keyring); see $log"
    rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
    tar -C "$dir" -c . | docker import - "$TAG" >/dev/null || die "docker import failed"
    say "base $TAG built with debootstrap"
  fi
fi
if ! docker image inspect "debian:$SUITE-slim" >/dev/null 2>&1; then
  docker tag "$TAG" "debian:$SUITE-slim"
fi
