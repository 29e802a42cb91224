# riskgate: one entry point for users and CI. Every target bootstraps the pinned toolchain first.
SHELL := /bin/bash
export PATH := $(CURDIR)/.toolchain/bin:$(PATH)
FORGE := .toolchain/bin/forge
SLITHER := .toolchain/venv/bin/slither
CARGO ?= cargo
# One feature set and profile for every cargo command, so the dependency tree compiles once for
# the binaries and the tests (clippy's own check build aside): the binaries are run from
# target/release/ rather than through `cargo run -p`, which would unify another feature set.
# The bot without the dev feature (no demo, bench or test world): cargo build --release -p keeper
CARGO_FLAGS := --release --locked --workspace --features keeper/dev
BIN := target/release

.PHONY: all bootstrap build rust-build test test-sol lint-rust test-rust test-sim test-record slither demo deploy-local serve screenshots bench bench-report bench-consensus bench-batch fmt lint clean

all: build

bootstrap:
	@./tools/bootstrap.sh

build: rust-build

## rust-build: the contracts and the workspace's binaries (keeper, gate-sim), once for every target
rust-build: bootstrap
	$(FORGE) build
	$(CARGO) build $(CARGO_FLAGS)

## test: the whole suite (forge unit/fuzz/invariant in the ci profile, slither, Rust tests)
test: bootstrap test-sol slither lint-rust test-rust test-sim test-record

test-sol: bootstrap
	$(FORGE) fmt --check
	FOUNDRY_PROFILE=ci $(FORGE) test

## slither builds into its own out dir so it never races a forge build of the tests
slither: bootstrap
	FOUNDRY_OUT=out-slither FOUNDRY_CACHE_PATH=cache-slither $(SLITHER) . --config-file slither.config.json

test-rust: rust-build
	$(CARGO) test $(CARGO_FLAGS)

## test-sim: gate-sim's command-line checks (its cargo tests run in test-rust): the corpus counts
## on the reference, revm and anvil; 10,000 differential cases in revm and 500 on anvil; a
## 100,000-decision simulation per model and the issue-7 adversaries (on the reference model; the
## cargo tests run them through the compiled contracts), zero violations (report kept out of results/)
test-sim: rust-build
	$(BIN)/gate-sim corpus --with-anvil
	$(BIN)/gate-sim diff --cases 10000 --backend revm --seed 1
	$(BIN)/gate-sim diff --cases 500 --backend anvil --seed 1
	$(BIN)/gate-sim simulate --markets 10 --steps 10000 --seed 1 \
		--model builtin,random,hostile --out target/gate-sim/SIMULATION.md

## test-record: the published records in results/ (the relayed gate), results/attested/ (the
## attested gate: every vote and signature too) and results/consensus/ (the consensus gate: every
## vote against its verdict source's logs, every prompt against the one built on chain) must
## re-derive from their saved chain states, and
## the gate's code on each chain must match contracts/src/RiskGate.sol (re-run make demo after
## changing the contract)
test-record: rust-build
	$(BIN)/keeper report --check --check-prompts --load-state results/anvil-state.json
	$(BIN)/keeper report --check --check-prompts --load-state results/attested/anvil-state.json
	$(BIN)/keeper report --check --check-prompts --load-state results/consensus/anvil-state.json

## deploy-local: throw-away anvil, deploy, print the bounds read back from chain
deploy-local: bootstrap
	./script/demo-deploy.sh

## demo: start anvil, deploy, run the agent, write results/
demo: rust-build
	$(BIN)/keeper demo

## serve: the floor over the demo's saved chain, on http://127.0.0.1:8080/ (Ctrl-C stops it)
serve: rust-build
	$(BIN)/keeper serve --load-state results/anvil-state.json

## screenshots: the floor over the demo record, in headless Chromium, into results/floor.png and
## results/floor-decision.png (the browser test that checks the page against the record takes them)
screenshots: rust-build
	FLOOR_SHOTS=$(CURDIR)/results $(CARGO) test $(CARGO_FLAGS) --test floor \
		-- the_floor_shows_the_demo_record --nocapture

## bench: gas and speed figures into results/BENCH.md (sections in results/bench/)
bench: rust-build bench-consensus bench-batch
	$(BIN)/gate-sim bench --out results/bench/gate-sim.md
	$(BIN)/keeper bench
	$(MAKE) bench-report

## bench-report: results/BENCH.md from the sections in results/bench/ (make bench runs it last)
bench-report:
	{ echo "# Benchmarks"; echo; echo "Written by \`make bench\` from its sections in results/bench/; every figure below comes from the command its section names."; \
	  for f in gate-sim keeper consensus batch; do echo; cat results/bench/$$f.md; done; } > results/BENCH.md
	@echo "wrote results/BENCH.md"

## bench-batch: gas per decision in a submitVerdicts batch of 100 (ABSTAIN, a refusal that reads
## the book, PASS) and the venue's worst take against ORDER_GAS, into results/bench/batch.md
bench-batch: bootstrap
	@mkdir -p target
	$(FORGE) test --match-contract RiskGateBatchGasTest -vv > target/batch-gas.log
	{ echo "## Batched submissions (issue 37)"; echo; \
	  echo "Printed by \`forge test --match-contract RiskGateBatchGasTest -vv\`: per decision, the gate's"; \
	  echo "gas plus 21,000 and the calldata, over 100 (receipt terms); see docs/gate.md#batches."; echo; \
	  echo "| figure | gas |"; echo "| --- | ---: |"; \
	  awk '/^Logs:/ {on = 1; next} on && /^  / {v = $$NF; $$NF = ""; sub(/^ +/, ""); sub(/ +$$/, ""); \
	    printf "| %s | %s |\n", $$0, v; next} {on = 0}' target/batch-gas.log; } > results/bench/batch.md
	@echo "wrote results/bench/batch.md"

## bench-consensus: the consensus mode's gas on the stand-in platform (ask, and the callback with
## three responses agreeing ABSTAIN, agreeing PASS, disagreeing) into results/bench/consensus.md
bench-consensus: bootstrap
	@mkdir -p target
	$(FORGE) test --match-test test_gas_askAndCallbacks -vv > target/consensus-gas.log
	{ echo "## Consensus mode on the stand-in platform (issue 36)"; echo; \
	  echo "Gas used inside the called contract's frame (\`vm.lastCallGas\`), printed by"; \
	  echo "\`forge test --match-test test_gas_askAndCallbacks -vv\`; see docs/somnia.md."; echo; \
	  echo "| call | gas |"; echo "| --- | ---: |"; \
	  awk '/^Logs:/ {on = 1; next} on && /^  / {v = $$NF; $$NF = ""; sub(/^ +/, ""); sub(/ +$$/, ""); \
	    printf "| %s | %s |\n", $$0, v; next} {on = 0}' target/consensus-gas.log; } > results/bench/consensus.md
	@echo "wrote results/bench/consensus.md"

fmt:
	$(FORGE) fmt
	$(CARGO) fmt --all

lint: bootstrap lint-rust
	$(FORGE) fmt --check

## lint-rust: fmt, clippy on everything with the dev feature, then on the bot as it ships (no dev
## feature: the same dependency features, so only the workspace's own crates are checked again)
lint-rust: bootstrap
	$(CARGO) fmt --all --check
	$(CARGO) clippy $(CARGO_FLAGS) --all-targets -- -D warnings
	$(CARGO) clippy --release --locked --workspace --lib --bins -- -D warnings

clean:
	rm -rf out cache out-slither cache-slither target
