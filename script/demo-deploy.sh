#!/usr/bin/env bash
# Local demo of the deploy: starts a throw-away anvil on a free loopback port, deploys the
# collateral, the market factory and the gate with script/Deploy.s.sol, then reads the gate's
# bounds and paramsHash back from the chain with `cast call`. anvil is stopped on any exit.
#
# The signer is anvil's own dev account 0, whose key anvil publishes (it is public and worthless
# outside this local chain). It is read from anvil's --config-out file and handed to forge in
# the environment (DEPLOYER_PRIVATE_KEY), never as a flag, so it shows up in no process list.
# GATE_* (the bounds, GATE_TRUSTED_RESOLVERS, GATE_TRUSTED_CREATORS) / KEEPER_ADDRESS from the
# caller's environment pass through to the deploy script. The deploy script has no default for
# the trusted lists (each role its own address); on this throw-away chain they default to anvil's
# dev accounts 1 (resolver) and 2 (creator), never the deployer, which is the keeper here.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
FORGE="$root/.toolchain/bin/forge"
ANVIL="$root/.toolchain/bin/anvil"
CAST="$root/.toolchain/bin/cast"

die() {
  echo "demo-deploy: $*" >&2
  exit 1
}

for tool in "$FORGE" "$ANVIL" "$CAST"; do
  [[ -x "$tool" ]] || die "$tool not found: run 'make bootstrap' first"
done
command -v node >/dev/null || die "node not found (the pinned toolchain needs Node 20)"

# shellcheck source=lib/anvil.sh
source "$root/script/lib/anvil.sh"
start_anvil
chain_id="$("$CAST" chain-id --rpc-url "$rpc" 2>/dev/null)" || die "anvil at $rpc did not answer"
echo "demo-deploy: anvil up at $rpc (chain $chain_id)"

DEPLOYER_PRIVATE_KEY="$(anvil_config private_keys 0)"
export DEPLOYER_PRIVATE_KEY
GATE_TRUSTED_RESOLVERS="${GATE_TRUSTED_RESOLVERS:-$(anvil_config available_accounts 1)}"
GATE_TRUSTED_CREATORS="${GATE_TRUSTED_CREATORS:-$(anvil_config available_accounts 2)}"
export GATE_TRUSTED_RESOLVERS GATE_TRUSTED_CREATORS

if ! "$FORGE" script script/Deploy.s.sol --rpc-url "$rpc" --broadcast \
  >"$workdir/deploy.log" 2>&1; then
  cat "$workdir/deploy.log" >&2
  die "forge script script/Deploy.s.sol failed (log above)"
fi
unset DEPLOYER_PRIVATE_KEY
sed -n '/== Logs ==/,/^$/p' "$workdir/deploy.log"

deployment="deployments/$chain_id.json"
[[ -s "$deployment" ]] || die "$deployment was not written by the deploy script"
gate="$(node -e '
  const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  process.stdout.write(d.gate);
' "$deployment")" || die "no gate address in $deployment"

code="$("$CAST" code "$gate" --rpc-url "$rpc")"
[[ "$code" != "0x" ]] || die "no code at the gate address $gate"

bounds="$("$CAST" call "$gate" \
  "bounds()((uint256,uint256,uint256,uint32,uint8,uint256,uint32,uint256,uint32,uint16))" \
  --rpc-url "$rpc")" || die "cast call bounds() on $gate failed"
resolvers="$("$CAST" call "$gate" "trustedResolvers()(address[])" --rpc-url "$rpc")" \
  || die "cast call trustedResolvers() on $gate failed"
creators="$("$CAST" call "$gate" "trustedCreators()(address[])" --rpc-url "$rpc")" \
  || die "cast call trustedCreators() on $gate failed"
params_hash="$("$CAST" call "$gate" "paramsHash()(bytes32)" --rpc-url "$rpc")" \
  || die "cast call paramsHash() on $gate failed"

echo
echo "gate:        $gate"
echo "bounds:      (minPrice, maxPrice, maxSize, minHeadroom, maxConcurrent, maxNotional,"
echo "              maxHorizon, maxDrawdown, writeOffGrace, minFillBps)"
echo "             $bounds"
echo "resolvers:   $resolvers"
echo "creators:    $creators"
echo "paramsHash:  $params_hash"
echo "(read back from chain $chain_id at $rpc; anvil stops now)"
