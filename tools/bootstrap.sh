#!/usr/bin/env bash
# Installs the project's pinned toolchain into git-ignored folders, idempotently:
#   tools/node_modules  forge/anvil/cast 1.7.1, solc-js 0.8.30, OpenZeppelin (tools/package-lock.json)
#   .toolchain/bin      links to the native foundry binaries and the solc shim
#   .toolchain/venv     slither (tools/requirements.lock)
# Everything comes from the package registries; nothing is downloaded from anywhere else.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

stamp=".toolchain/.stamp"
want="$(cat tools/package-lock.json tools/requirements.lock | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x .toolchain/bin/forge && -x .toolchain/venv/bin/slither ]]; then
  exit 0
fi

echo "bootstrap: installing pinned toolchain (npm ci, pip) ..."
mkdir -p .toolchain/bin
(cd tools && npm ci --no-audit --no-fund --loglevel=error)
for t in forge anvil cast; do
  bin="tools/node_modules/@foundry-rs/$t-linux-amd64/bin/$t"
  [[ -x "$bin" ]] || { echo "bootstrap: $bin missing (only linux-amd64 is supported)" >&2; exit 1; }
  ln -sf "$root/$bin" ".toolchain/bin/$t"
done
ln -sf "$root/tools/solc" .toolchain/bin/solc

if [[ ! -x .toolchain/venv/bin/python ]]; then
  python3 -m venv .toolchain/venv
fi
.toolchain/venv/bin/pip install --quiet --disable-pip-version-check -r tools/requirements.lock

.toolchain/bin/forge --version | head -1
.toolchain/bin/solc --version | tail -1
.toolchain/venv/bin/slither --version
echo "$want" > "$stamp"
echo "bootstrap: done"
