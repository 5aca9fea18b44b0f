#!/usr/bin/env bash
# The project's entry point on a fresh machine:
#   bash scripts/nvcf.sh start   # gateway + worker + example models on a local Redis
#   bash scripts/nvcf.sh test    # typecheck, lint, compose check and the whole test suite
#   bash scripts/nvcf.sh bench   # the benchmark (pnpm bench)
# It brings Node 24 and pnpm 10 from the npm registry when the machine lacks them, then installs
# dependencies from the lockfile.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tools="${NVCF_TOOLS_DIR:-$HOME/.cache/nvcf-tools}"
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

ensure_node() {
  if [ "$(node_major)" -ge 24 ]; then return; fi
  if [ -x "$tools/node_modules/.bin/node" ]; then export PATH="$tools/node_modules/.bin:$PATH"; fi
  if [ "$(node_major)" -ge 24 ]; then return; fi
  command -v npm >/dev/null || { echo "npm is needed to fetch Node 24 (install Node.js and npm first)" >&2; exit 1; }
  echo "› installing Node 24 into $tools" >&2
  mkdir -p "$tools"
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$tools" node@24 >&2
  export PATH="$tools/node_modules/.bin:$PATH"
}

ensure_pnpm() {
  if pnpm --version 2>/dev/null | grep -q '^10\.'; then return; fi
  if [ -x "$tools/node_modules/.bin/pnpm" ]; then export PATH="$tools/node_modules/.bin:$PATH"; fi
  if pnpm --version 2>/dev/null | grep -q '^10\.'; then return; fi
  echo "› installing pnpm 10 into $tools" >&2
  mkdir -p "$tools"
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$tools" node@24 pnpm@10 >&2
  export PATH="$tools/node_modules/.bin:$PATH"
}

ensure_deps() {
  # onnxruntime-node's install script downloads CUDA binaries; the CPU provider ships in the package.
  export ONNXRUNTIME_NODE_INSTALL=skip
  pnpm install --frozen-lockfile --reporter=silent >&2
}

ensure_compose_checker() {
  command -v docker-compose >/dev/null && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "› installing Debian's docker-compose (to validate docker-compose.yml without an engine)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker-compose >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker-compose >/dev/null 2>&1; } || true
  fi
}

ensure_browser() {
  # The browser tests drive Debian's chromium (CHROMIUM_PATH overrides).
  [ -n "${CHROMIUM_PATH:-}" ] && return
  command -v chromium >/dev/null && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "› installing Debian's chromium (for the browser tests)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1; } || true
  fi
}

ensure_sandbox() {
  # Container functions in process mode run in bubblewrap where it works; its tests check that sandbox.
  command -v bwrap >/dev/null && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "› installing Debian's bubblewrap (the sandbox of process-mode container functions)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null 2>&1; } || true
  fi
}

ensure_prometheus() {
  # The dashboard test runs every panel's query on a real Prometheus (PROMETHEUS_PATH overrides).
  [ -n "${PROMETHEUS_PATH:-}" ] && return
  command -v prometheus >/dev/null && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "› installing Debian's prometheus (for the dashboard test)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus >/dev/null 2>&1; } || true
  fi
}

ensure_kubectl() {
  # The Kubernetes manifests' tests render deploy/kubernetes with `kubectl kustomize` (Kustomize v5: kubectl 1.27+).
  if ! command -v kubectl >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "› installing Debian's kubernetes-client (kubectl, to render deploy/kubernetes)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q kubernetes-client >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q kubernetes-client >/dev/null 2>&1; } || true
  fi
  if command -v kubectl >/dev/null && ! kubectl version --client 2>/dev/null | grep -q 'Kustomize Version: v5'; then
    echo "› kubectl has no Kustomize v5 (kubectl 1.27+ has): the deploy/kubernetes tests will fail" >&2
  fi
}

cmd="${1:-}"
shift || true
case "$cmd" in
  start)
    ensure_node; ensure_pnpm; ensure_deps
    exec node scripts/start.ts "$@"
    ;;
  test)
    ensure_node; ensure_pnpm; ensure_deps; ensure_compose_checker; ensure_browser; ensure_sandbox; ensure_prometheus; ensure_kubectl
    exec node scripts/check.ts "$@"
    ;;
  bench)
    ensure_node; ensure_pnpm; ensure_deps
    exec pnpm bench "$@"
    ;;
  *)
    echo "usage: bash scripts/nvcf.sh start|test|bench" >&2
    exit 2
    ;;
esac
