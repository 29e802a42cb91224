# Shared by the project's shell scripts (source it; it defines functions only).
# start_anvil: a throw-away anvil on a free loopback port, stopped on any exit of the caller.
# Sets: workdir (a temp dir, removed on exit), anvil_pid, rpc. Needs: ANVIL, CAST, die().
# anvil publishes its dev accounts in $workdir/anvil.json (--config-out); read them with
# anvil_config <field> <index> rather than keeping any key, even a public one, in the repo.

workdir=""
anvil_pid=""

_anvil_cleanup() {
  if [[ -n "$anvil_pid" ]] && kill -0 "$anvil_pid" 2>/dev/null; then
    kill "$anvil_pid" 2>/dev/null || true
    wait "$anvil_pid" 2>/dev/null || true
  fi
  [[ -n "$workdir" ]] && rm -rf "$workdir"
}

start_anvil() {
  workdir="$(mktemp -d)"
  trap _anvil_cleanup EXIT
  trap 'exit 130' INT TERM
  local port
  port="$(node -e '
    const s = require("net").createServer();
    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });
  ')" || die "could not find a free loopback port"
  rpc="http://127.0.0.1:$port"
  # --prune-history and --cache-path: no per-block state under ~/.foundry/anvil/tmp, which
  # anvil leaves behind on exit (the kit's anvils do the same, kit/src/anvil.rs).
  "$ANVIL" --host 127.0.0.1 --port "$port" --silent --config-out "$workdir/anvil.json" \
    --prune-history --cache-path "$workdir/states" >"$workdir/anvil.log" 2>&1 &
  anvil_pid=$!
  # Wait for the RPC to answer (up to ~10 s), failing fast if anvil died (e.g. port taken).
  for _ in $(seq 1 50); do
    kill -0 "$anvil_pid" 2>/dev/null || die "anvil exited at start: $(cat "$workdir/anvil.log")"
    if "$CAST" chain-id --rpc-url "$rpc" >/dev/null 2>&1 && [[ -s "$workdir/anvil.json" ]]; then
      return 0
    fi
    sleep 0.2
  done
  die "anvil at $rpc did not answer within 10 s"
}

# anvil_config <field> <index>: one entry of an array in anvil's --config-out file
# (private_keys, available_accounts).
anvil_config() {
  node -e '
    const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const v = (c[process.argv[2]] || [])[Number(process.argv[3])];
    if (!v) process.exit(1);
    process.stdout.write(v);
  ' "$workdir/anvil.json" "$1" "$2" || die "no $1[$2] in anvil's --config-out file"
}
