#!/usr/bin/env bash
# @module hookbox self set-up, run before `npm start` and `npm test`.
# Idempotent: npm dependencies, a Docker engine that answers (installing Debian's docker.io and
# gVisor's runsc when this is a Debian-like machine and we are root), and the hook runtime image
# (its Debian base built offline with debootstrap when no registry answers). Each step prints one
# progress line with its duration; with everything in place the whole run takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
# --test: also what the test suite needs beyond the service (a headless Chromium for the page test,
# Docker Compose for the compose.yaml test).
FOR_TESTS=false
[ "${1:-}" = "--test" ] && FOR_TESTS=true

IMAGE="${HOOKBOX_IMAGE:-hookbox/runtime:latest}"     # one source of truth: engine/names.ts
BASE_IMAGE="${HOOKBOX_BASE_IMAGE:-hookbox/base:bookworm}"
SUITE=bookworm
DOCKERD_LOG=/var/log/hookbox-dockerd.log

now_ms() { date +%s%3N; }
say() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }
step_start=0
begin() { step_start=$(now_ms); say "$1 ..."; }
done_step() { local ms=$(( $(now_ms) - step_start )); say "$1 ($(( ms / 1000 )).$(( (ms % 1000) / 100 )) s)"; }

is_root() { [ "$(id -u)" = 0 ]; }
can_apt() { is_root && command -v apt-get >/dev/null 2>&1; }
engine_answers() { timeout 10 docker info >/dev/null 2>&1; }

apt_install() {
  can_apt || die "need $* but cannot install it: not root on a Debian-like machine. Install: $*"
  if [ -z "${APT_UPDATED:-}" ]; then
    apt-get update -qq >/dev/null || die "apt-get update failed"
    APT_UPDATED=1
  fi
  local log; log=$(mktemp /var/tmp/hookbox-apt.XXXXXX.log)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >"$log" 2>&1 \
    || { tail -n 20 "$log" >&2; die "apt-get install $* failed (log: $log)"; }
  rm -f "$log"
}

# --- 1. npm dependencies -------------------------------------------------------------------------
begin "npm dependencies"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
   || [ package.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error >&2 || die "npm ci failed"
  done_step "npm dependencies installed"
else
  done_step "npm dependencies up to date"
fi

# --- 2. a Docker engine that answers, with the runsc runtime registered -------------------------
command -v docker >/dev/null 2>&1 || [ -x /usr/bin/docker ] || apt_install docker.io

register_runsc() {
  # daemon.json: add the runsc runtime (gVisor). --network=none: hooks never get a network, and
  # this runsc version cannot set up Docker's bridge networking on this kernel anyway.
  local runsc; runsc=$(command -v runsc)
  node -e '
    const fs = require("node:fs"); const f = "/etc/docker/daemon.json";
    let c = {};
    let text;
    try { text = fs.readFileSync(f, "utf8"); } catch {}
    // An administrator'"'"'s daemon.json that does not parse is never overwritten: said, and left as it is.
    if (text !== undefined) try { c = JSON.parse(text); } catch (e) { console.error(`${f} is not valid JSON (${e.message}): fix it, or register runsc in it yourself`); process.exit(4); }
    c.runtimes = c.runtimes || {};
    const want = { path: process.argv[1], runtimeArgs: ["--network=none"] };
    if (JSON.stringify(c.runtimes.runsc) === JSON.stringify(want)) process.exit(0);
    c.runtimes.runsc = want;
    fs.mkdirSync("/etc/docker", { recursive: true });
    fs.writeFileSync(f, JSON.stringify(c, null, 2) + "\n");
    process.exit(3);
  ' "$runsc"
}

begin "container engine"
if engine_answers; then
  done_step "container engine answers"
else
  if ! command -v dockerd >/dev/null 2>&1; then
    can_apt || die "no Docker engine answers and dockerd is not installed; install Docker (or run as root on Debian so set-up can install docker.io)"
    say "installing Debian's docker.io and runsc (gVisor) ..."
    apt_install docker.io runsc
  fi
  if command -v runsc >/dev/null 2>&1 && is_root; then register_runsc || true; fi
  is_root || die "no Docker engine answers at ${DOCKER_HOST:-/var/run/docker.sock} and we are not root to start dockerd"
  # A dockerd killed with SIGKILL leaves its pid files; a new one refuses to start over them.
  pidof dockerd >/dev/null 2>&1 || rm -f /var/run/docker.pid
  pidof containerd >/dev/null 2>&1 || rm -f /var/run/docker/containerd/containerd.pid
  say "starting dockerd (log: $DOCKERD_LOG) ..."
  # It outlives this script: from / and without the caller's TMPDIR (gVisor's runsc makes each
  # sandbox's root in the engine's TMPDIR — a test run's own folder, removed when the run ends,
  # would leave every later runsc container unable to start).
  (cd / && setsid env -u TMPDIR dockerd >"$DOCKERD_LOG" 2>&1 </dev/null &)
  for _ in $(seq 1 120); do engine_answers && break; sleep 0.5; done
  engine_answers || die "dockerd did not answer within 60 s; see $DOCKERD_LOG"
  done_step "container engine started"
fi

begin "gVisor runtime (runsc)"
if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; then
  done_step "runsc registered"
elif can_apt && pidof dockerd >/dev/null 2>&1; then
  command -v runsc >/dev/null 2>&1 || apt_install runsc
  rc=0; register_runsc || rc=$?
  [ "$rc" -ne 4 ] || die "/etc/docker/daemon.json is not valid JSON: not touched; fix it and run set-up again"
  # shellcheck disable=SC2046 # every dockerd running reloads its runtimes on SIGHUP
  kill -HUP $(pidof dockerd)
  for _ in $(seq 1 20); do docker info --format '{{json .Runtimes}}' | grep -q '"runsc"' && break; sleep 0.5; done
  docker info --format '{{json .Runtimes}}' | grep -q '"runsc"' || die "runsc did not register (daemon.json rc=$rc); see $DOCKERD_LOG"
  done_step "runsc registered"
else
  done_step "runsc not available: hooks can run under runc only (with runtime = \"runsc\", /readyz answers 503 and container hooks fail to start)"
fi

# --- 3. the hook runtime image -------------------------------------------------------------------
image_label() { docker image inspect --format "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true; }

begin "Debian base image $BASE_IMAGE"
if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 && docker image inspect "debian:$SUITE-slim" >/dev/null 2>&1; then
  done_step "base image present"
else
  bash images/build-base.sh "$SUITE" "$BASE_IMAGE"
  done_step "base image ready"
fi

build_image() { # name dir
  local name=$1 dir=$2 hash log
  # The base image's id, not its name: a rebuilt base rebuilds the hook image.
  hash=$( (cat "$dir"/*; docker image inspect --format '{{.Id}}' "$BASE_IMAGE") | sha256sum | cut -c1-16)
  begin "hook image $name"
  if [ "$(image_label "$name" hookbox.source-hash)" = "$hash" ]; then
    done_step "hook image up to date"
    return
  fi
  log=$(mktemp /var/tmp/hookbox-build.XXXXXX.log)
  docker build -q --build-arg "BASE=$BASE_IMAGE" --label "hookbox.source-hash=$hash" -t "$name" "$dir" \
    >"$log" 2>&1 || { tail -n 30 "$log" >&2; die "docker build of $name failed (log: $log)"; }
  rm -f "$log"
  done_step "hook image built"
}
build_image "$IMAGE" images/runtime

# Image builds reach the npm registry through this machine's network: trust the same extra CAs.
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
  for crt in /usr/local/share/ca-certificates/*.crt; do
    cmp -s "$crt" "deploy/ca/$(basename "$crt")" || cp "$crt" deploy/ca/
  done
fi

# The service image (deploy/Dockerfile) needs Node 20, which Debian has from trixie on.
begin "Debian base image debian:trixie-slim (for deploy/Dockerfile)"
if docker image inspect debian:trixie-slim >/dev/null 2>&1; then
  done_step "base image present"
else
  bash images/build-base.sh trixie hookbox/base:trixie
  done_step "base image ready"
fi

if $FOR_TESTS; then
  begin "headless Chromium (for the decisions page test)"
  if [ -x /usr/bin/chromium ]; then
    done_step "chromium present"
  else
    apt_install chromium
    done_step "chromium installed"
  fi
  # test/compose.test.ts runs compose.yaml: Compose v2 when the docker CLI has it, else Debian's
  # standalone docker-compose (bookworm has no v2 package).
  begin "Docker Compose (for the compose.yaml test)"
  if docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1; then
    done_step "compose present"
  else
    apt_install docker-compose
    done_step "docker-compose installed"
  fi
fi
