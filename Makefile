# riskgate: one entry point for users and CI. Every target bootstraps the pinned toolchain first.
SHELL := /bin/bash
export PATH := $(CURDIR)/.toolchain/bin:$(PATH)
FORGE := .toolchain/bin/forge
SLITHER := .toolchain/venv/bin/slither
CARGO ?= cargo

.PHONY: all bootstrap build test test-sol lint-rust test-rust test-sim test-record slither demo deploy-local serve screenshots bench fmt lint clean

all: build

bootstrap:
	@./tools/bootstrap.sh

build: bootstrap
	$(FORGE) build
	$(CARGO) build --release --locked --workspace

## test: the whole suite (forge unit/fuzz/invariant in the ci profile, slither, Rust tests)
test: bootstrap test-sol slither lint-rust test-rust test-sim test-record

test-sol: bootstrap
	$(FORGE) fmt --check
	FOUNDRY_PROFILE=ci $(FORGE) test

## slither builds into its own out dir so it never races a forge build of the tests
slither: bootstrap
	FOUNDRY_OUT=out-slither FOUNDRY_CACHE_PATH=cache-slither $(SLITHER) . --config-file slither.config.json

test-rust: bootstrap
	$(FORGE) build
	$(CARGO) test --release --locked --workspace --features keeper/dev

## test-sim: gate-sim's command-line checks (its cargo tests run in test-rust): the corpus counts
## on the reference, revm and anvil; 10,000 differential cases in revm and 500 on anvil; a
## 100,000-decision simulation per model and the issue-7 adversaries (on the reference model; the
## cargo tests run them through the compiled contracts), zero violations (report kept out of results/)
test-sim: bootstrap
	$(FORGE) build
	$(CARGO) run --release --locked -p gate-sim -- corpus --with-anvil
	$(CARGO) run --release --locked -p gate-sim -- diff --cases 10000 --backend revm --seed 1
	$(CARGO) run --release --locked -p gate-sim -- diff --cases 500 --backend anvil --seed 1
	$(CARGO) run --release --locked -p gate-sim -- simulate --markets 10 --steps 10000 --seed 1 \
		--model builtin,random,hostile --out target/gate-sim/SIMULATION.md

## test-record: the published record in results/ must re-derive from its saved chain state, and
## the gate's code on that chain must match contracts/src/RiskGate.sol (re-run make demo after
## changing the contract)
test-record: bootstrap
	$(CARGO) run --release --locked -p keeper -- report --check --check-prompts --load-state results/anvil-state.json

## deploy-local: throw-away anvil, deploy, print the bounds read back from chain
deploy-local: bootstrap
	./script/demo-deploy.sh

## demo: start anvil, deploy, run the agent, write results/
demo: bootstrap
	$(FORGE) build
	$(CARGO) run --release --locked -p keeper --features dev -- demo

## serve: the floor over the demo's saved chain, on http://127.0.0.1:8080/ (Ctrl-C stops it)
serve: bootstrap
	$(CARGO) run --release --locked -p keeper -- serve --load-state results/anvil-state.json

## screenshots: the floor over the demo record, in headless Chromium, into results/floor.png and
## results/floor-decision.png (the browser test that checks the page against the record takes them)
screenshots: bootstrap
	$(FORGE) build
	FLOOR_SHOTS=$(CURDIR)/results $(CARGO) test --release --locked -p keeper --features dev --test floor \
		-- the_floor_shows_the_demo_record --nocapture

## bench: gas and speed figures into results/BENCH.md (sections in results/bench/)
bench: bootstrap
	$(FORGE) build
	$(CARGO) run --release --locked -p gate-sim -- bench --out results/bench/gate-sim.md
	$(CARGO) run --release --locked -p keeper --features dev -- bench
	{ echo "# Benchmarks"; echo; echo "Written by \`make bench\`; every figure below comes from that run."; \
	  for f in gate-sim keeper; do echo; cat results/bench/$$f.md; done; } > results/BENCH.md
	@echo "wrote results/BENCH.md"

fmt:
	$(FORGE) fmt
	$(CARGO) fmt --all

lint: bootstrap lint-rust
	$(FORGE) fmt --check

lint-rust: bootstrap
	$(CARGO) fmt --all --check
	$(CARGO) clippy --release --locked --workspace --all-targets --features keeper/dev -- -D warnings
	$(CARGO) clippy --release --locked -p keeper -- -D warnings

clean:
	rm -rf out cache out-slither cache-slither target
