//! `keeper bench`: throughput of the keeper against a baseline of pre-built `submitVerdict`
//! transactions sent back to back (same run, same anvil), peak RSS of `keeper run --once` over
//! many markets, and the gate's gas figures from real receipts. Writes results/bench/keeper.md.

use crate::{
    bindings::IRiskGate::{self, Quote},
    chain::short,
    cli::BenchArgs,
    compile,
    dev::world::{confirm, World, WorldError},
    executor,
    quote::QuotePolicy,
    strategy::Model,
};
use alloy::{
    network::{EthereumWallet, TransactionBuilder},
    primitives::{Address, Bytes, B256, U256},
    providers::Provider as _,
    rpc::types::TransactionRequest,
    sol_types::SolCall,
};
use std::{fmt::Write as _, path::Path, time::Instant};
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    World(#[from] WorldError),
    #[error(transparent)]
    Run(#[from] crate::runner::RunError),
    #[error(transparent)]
    Compile(#[from] compile::CompileError),
    #[error(transparent)]
    Anvil(#[from] crate::anvil::AnvilError),
    #[error("bench step {step}: {reason}")]
    Step { step: String, reason: String },
}

pub type Result<T> = std::result::Result<T, BenchError>;

fn step(step: &str) -> impl Fn(String) -> BenchError + '_ {
    move |reason| BenchError::Step { step: step.to_string(), reason }
}

/// The demo's bounds with the position caps and the drawdown bound opened wide, so that the
/// throughput run measures the keeper, not the gate's limits.
fn bench_params() -> IRiskGate::Params {
    IRiskGate::Params {
        maxConcurrent: 255,
        maxNotional: U256::from(1_000_000_000_000u64),
        maxDrawdown: U256::from(1_000_000_000_000u64),
        ..crate::dev::demo::demo_params()
    }
}

/// The quote the keeper would send for `raw` against a book with this best bid and ask, read at
/// chain time `now` (default slippage and TTL).
fn keeper_quote(raw: &str, bid: u64, ask: u64, now: u64) -> Quote {
    let state = crate::collectors::MarketState {
        info: crate::collectors::MarketInfo {
            address: Address::ZERO,
            index: U256::ZERO,
            tick_size: U256::ZERO,
            lot_size: U256::ZERO,
            min_quantity: U256::ZERO,
            expiry: 0,
            resolver: Address::ZERO,
        },
        best_bid: U256::from(bid),
        best_ask: U256::from(ask),
        finalized: false,
        bids: vec![],
        asks: vec![],
    };
    QuotePolicy::default().quote(raw, &state, now)
}

/// Markets whose book (bid 0.48 / ask 0.52) makes the builtin model abstain, so the keeper's
/// and the baseline's transactions do the same on-chain work (an ABSTAIN decision each).
async fn seed_abstain_markets(w: &World, n: usize) -> Result<Vec<Address>> {
    let expiry = w.chain_time().await? + 86_400;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let m = w.create_market(10_000, 100, 0, expiry).await?;
        w.ask(m, 520_000, 1_000_000).await?;
        out.push(m);
    }
    Ok(out)
}

struct Throughput {
    n: usize,
    keeper_secs: f64,
    baseline_secs: f64,
}

async fn throughput(w: &World, n: usize, tmp: &Path) -> Result<Throughput> {
    let markets = seed_abstain_markets(w, n).await?;
    let mut k = w.keeper(Some(tmp.to_path_buf()));
    let cancel = CancellationToken::new();
    let t = Instant::now();
    let report = k.cycle(&Model::Builtin, None, &cancel).await?;
    let keeper_secs = t.elapsed().as_secs_f64();
    if report.submitted != n {
        return Err(step("keeper cycle")(format!("submitted {} of {n}", report.submitted)));
    }

    // Baseline: the same number of submitVerdict transactions, signed in advance, sent back to
    // back with alloy, then all receipts awaited.
    let signer =
        crate::chain::dev_signer(w.anvil.dev_key(0).map_err(|e| step("dev key")(e.to_string()))?)
            .map_err(|e| step("signer")(e.to_string()))?;
    let wallet = EthereumWallet::from(signer);
    let p = &w.keeper_rpc;
    let nonce = p
        .get_transaction_count(w.keeper_addr)
        .await
        .map_err(|e| step("nonce")(short(&e.to_string())))?;
    let fees = executor::current_fees(p).await.map_err(|e| step("fees")(e.to_string()))?;
    let chain_id = w.deployment.chain_id;
    let mut raw_txs = Vec::with_capacity(n);
    for (i, m) in markets.iter().enumerate() {
        let data = IRiskGate::submitVerdictCall {
            market: *m,
            raw: "ABSTAIN".to_string(),
            promptHash: B256::ZERO,
            quote: Quote { maxPricePaid: U256::ZERO, deadline: 0 },
        }
        .abi_encode();
        let tx = TransactionRequest::default()
            .with_to(w.deployment.gate)
            .with_input(Bytes::from(data))
            .with_nonce(nonce + i as u64)
            .with_chain_id(chain_id)
            .with_gas_limit(executor::submit_gas_limit("ABSTAIN"))
            .with_max_fee_per_gas(fees.max_fee_per_gas)
            .with_max_priority_fee_per_gas(fees.max_priority_fee_per_gas);
        let env = tx.build(&wallet).await.map_err(|e| step("sign")(e.to_string()))?;
        raw_txs.push(alloy::eips::eip2718::Encodable2718::encoded_2718(&env));
    }
    let t = Instant::now();
    let mut hashes = Vec::with_capacity(n);
    for raw in &raw_txs {
        let pending = p
            .send_raw_transaction(raw)
            .await
            .map_err(|e| step("baseline send")(short(&e.to_string())))?;
        hashes.push(*pending.tx_hash());
    }
    for h in hashes {
        confirm(p, "baseline receipt", h).await?;
    }
    let baseline_secs = t.elapsed().as_secs_f64();
    Ok(Throughput { n, keeper_secs, baseline_secs })
}

/// Peak RSS (KiB) of `keeper run --once` over `n` markets, measured with wait4(2) on the child.
async fn peak_rss(w: &World, n: usize, root: &Path, tmp: &Path) -> Result<(u64, f64)> {
    seed_abstain_markets(w, n).await?;
    let exe = std::env::current_exe().map_err(|e| step("current exe")(e.to_string()))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("--root")
        .arg(root)
        .arg("run")
        .arg("--once")
        .arg("--rpc-url")
        .arg(w.anvil.url.as_str())
        .arg("--gate")
        .arg(w.deployment.gate.to_string())
        .arg("--from-block")
        .arg(w.deployment.deploy_block.to_string())
        .arg("--results")
        .arg(tmp)
        // The dev key the anvil this bench spawned published, only against that anvil.
        .env("KEEPER_PRIVATE_KEY", w.anvil.dev_key(0).map_err(|e| step("dev key")(e.to_string()))?)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let t = Instant::now();
    let child = cmd.spawn().map_err(|e| step("spawn keeper")(e.to_string()))?;
    let pid = child.id() as libc::pid_t;
    let (status, maxrss) = tokio::task::spawn_blocking(move || {
        let mut status: libc::c_int = 0;
        // SAFETY: zeroed rusage is a valid value; wait4 fills it for our own child `pid`.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        (if r == pid { status } else { -1 }, usage.ru_maxrss as u64)
    })
    .await
    .map_err(|e| step("wait")(e.to_string()))?;
    let secs = t.elapsed().as_secs_f64();
    if status != 0 {
        return Err(step("keeper run --once")(format!("exit status {status}")));
    }
    drop(child);
    Ok((maxrss, secs))
}

struct Gas {
    abstain: u64,
    /// The gate's first BUY decision ever: it also stores the high-water mark from zero.
    band_first: u64,
    band: u64,
    pass_one_level: u64,
    refuse_64: u64,
    refuse_100k: u64,
    evaluate_exec: u64,
    evaluate_estimate: u64,
    evaluate_intrinsic: u64,
}

/// Sends one submitVerdict and returns its gasUsed and the reason it published.
async fn submit_gas(w: &World, market: Address, raw: &str, quote: Quote) -> Result<(u64, u8)> {
    let g = IRiskGate::new(w.deployment.gate, &w.keeper_rpc);
    let tx = g
        .submitVerdict(market, raw.to_string(), B256::ZERO, quote)
        .gas(executor::submit_gas_limit(raw))
        .send()
        .await
        .map_err(|e| step("submitVerdict")(executor::describe(&e)))?;
    let r = confirm(&w.keeper_rpc, "submitVerdict", *tx.tx_hash()).await?;
    let reason = r
        .inner
        .logs()
        .iter()
        .find_map(|l| {
            use alloy::sol_types::SolEvent;
            IRiskGate::Decision::decode_log(&l.inner).ok()
        })
        .map(|ev| ev.data.reason)
        .unwrap_or(u8::MAX);
    Ok((r.gas_used, reason))
}

/// Calldata cost before EIP-7623's floor: 4 gas per zero byte, 16 per non-zero byte.
fn calldata_gas(data: &[u8]) -> u64 {
    data.iter().map(|b| if *b == 0 { 4 } else { 16 }).sum()
}

async fn gas(w: &World) -> Result<Gas> {
    let t = w.chain_time().await?;
    let expiry = t + 86_400 / 2;
    w.mint(w.deployment.gate, U256::from(1_000_000_000u64)).await?;
    let m_abstain = w.create_market(10_000, 100, 0, expiry).await?;
    w.ask(m_abstain, 400_000, 20_000_000).await?;
    let m_first = w.create_market(10_000, 100, 0, expiry).await?;
    w.ask(m_first, 970_000, 20_000_000).await?;
    let m_band = w.create_market(10_000, 100, 0, expiry).await?;
    w.ask(m_band, 970_000, 20_000_000).await?;
    let m_pass = w.create_market(10_000, 100, 0, expiry).await?;
    w.ask(m_pass, 400_000, 20_000_000).await?;
    let none = Quote { maxPricePaid: U256::ZERO, deadline: 0 };
    let now = w.chain_time().await?;
    let (abstain, r1) = submit_gas(w, m_abstain, "ABSTAIN", none.clone()).await?;
    let band_quote = keeper_quote("BUY_UP", 0, 970_000, now);
    let (band_first, r5a) = submit_gas(w, m_first, "BUY_UP", band_quote.clone()).await?;
    let (band, r5) = submit_gas(w, m_band, "BUY_UP", band_quote).await?;
    let pass_quote = keeper_quote("BUY_UP", 0, 400_000, now);
    let (pass_one_level, r0) = submit_gas(w, m_pass, "BUY_UP", pass_quote).await?;
    // Unparseable answers of 64 bytes and of 100 KB (102,400 bytes): both reason 11.
    let (refuse_64, r11a) = submit_gas(w, m_abstain, &"x".repeat(64), none.clone()).await?;
    let (refuse_100k, r11b) = submit_gas(w, m_abstain, &"x".repeat(102_400), none).await?;
    let reasons = [r1, r5a, r5, r0, r11a, r11b];
    if reasons != [1, 5, 5, 0, 11, 11] {
        return Err(step("gas")(format!("unexpected reasons {reasons:?} (want 1,5,5,0,11,11)")));
    }
    // evaluate on a passing BUY_UP book: the snapshot the gate itself would read now, from a
    // fresh market with one resting ask at 0.40, and the keeper's quote for it.
    let m_eval = w.create_market(10_000, 100, 0, expiry).await?;
    w.ask(m_eval, 400_000, 20_000_000).await?;
    let g = IRiskGate::new(w.deployment.gate, &w.keeper_rpc);
    let snapshot = g
        .snapshotOf(m_eval)
        .call()
        .await
        .map_err(|e| step("snapshotOf")(executor::describe(&e)))?;
    let quote = keeper_quote("BUY_UP", 0, 400_000, snapshot.nowSec);
    let r = g
        .evaluate(snapshot.clone(), quote.clone(), 1)
        .call()
        .await
        .map_err(|e| step("evaluate")(executor::describe(&e)))?;
    if r.reason != 0 {
        return Err(step("evaluate")(format!("book does not pass (reason {})", r.reason)));
    }
    let data = IRiskGate::evaluateCall { s: snapshot, q: quote, verdict: 1 }.abi_encode();
    let req = TransactionRequest::default()
        .with_from(w.keeper_addr)
        .with_to(w.deployment.gate)
        .with_input(Bytes::from(data.clone()));
    let evaluate_estimate = w
        .keeper_rpc
        .estimate_gas(req.clone())
        .await
        .map_err(|e| step("estimate")(short(&e.to_string())))?;
    let evaluate_intrinsic = 21_000 + calldata_gas(&data);
    // Execution gas of the gate's frame from a struct-log trace: gas at the first opcode minus
    // gas left after the last one.
    let trace: serde_json::Value = w
        .keeper_rpc
        .raw_request(
            "debug_traceCall".into(),
            (
                req,
                "latest",
                serde_json::json!({"disableStorage": true, "disableStack": true, "enableMemory": false}),
            ),
        )
        .await
        .map_err(|e| step("debug_traceCall")(short(&e.to_string())))?;
    let logs = trace.get("structLogs").and_then(|v| v.as_array()).cloned().unwrap_or_default();
    let first = logs.first().and_then(|l| l.get("gas")).and_then(|g| g.as_u64()).unwrap_or(0);
    let last_gas = logs.last().and_then(|l| l.get("gas")).and_then(|g| g.as_u64()).unwrap_or(0);
    let last_cost =
        logs.last().and_then(|l| l.get("gasCost")).and_then(|g| g.as_u64()).unwrap_or(0);
    let evaluate_exec = first.saturating_sub(last_gas.saturating_sub(last_cost));
    Ok(Gas {
        abstain,
        band_first,
        band,
        pass_one_level,
        refuse_64,
        refuse_100k,
        evaluate_exec,
        evaluate_estimate,
        evaluate_intrinsic,
    })
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "meets target"
    } else {
        "MISSES target"
    }
}

pub async fn run(args: &BenchArgs, root: &Path) -> Result<()> {
    let anvil_bin = root.join(&args.anvil);
    let tmp = tempfile::tempdir().map_err(|e| step("tempdir")(e.to_string()))?;
    let artifacts = compile::compile(root)?;

    // The figures read only the latest state; anvil need not keep older ones.
    let prune = ["--prune-history".to_string()];
    eprintln!("bench: gas figures from receipts");
    let anvil = crate::anvil::Anvil::start(&anvil_bin, None, &prune).await?;
    let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
    let gas = gas(&w).await;
    w.stop().await;
    let gas = gas?;

    eprintln!("bench: throughput, {} markets", args.markets);
    let anvil = crate::anvil::Anvil::start(&anvil_bin, None, &prune).await?;
    let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
    let tp = throughput(&w, args.markets, &tmp.path().join("tp")).await;
    w.stop().await;
    let tp = tp?;

    eprintln!("bench: peak RSS of `keeper run --once`, {} markets", args.rss_markets);
    let anvil = crate::anvil::Anvil::start(&anvil_bin, None, &prune).await?;
    let w = World::deploy_on(anvil, artifacts, &bench_params()).await?;
    let rss = peak_rss(&w, args.rss_markets, root, &tmp.path().join("rss")).await;
    w.stop().await;
    let (rss_kib, rss_secs) = rss?;

    let keeper_rate = tp.n as f64 / tp.keeper_secs;
    let base_rate = tp.n as f64 / tp.baseline_secs;
    let ratio = keeper_rate / base_rate;
    let rss_mb = rss_kib as f64 / 1024.0;
    let mut md = String::new();
    let _ = writeln!(md, "# Keeper benchmark\n");
    let _ = writeln!(md, "Written by `make bench` (`keeper bench`) against anvil from the pinned toolchain on this machine ({} cores).\n", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let _ = writeln!(md, "## Throughput ({} markets)\n", tp.n);
    let _ =
        writeln!(md, "| run | decisions | seconds | decisions/s |\n| --- | ---: | ---: | ---: |");
    let _ = writeln!(md, "| keeper cycle (discover, read books, render, builtin model, submit, receipts, decode, write results) | {} | {:.3} | {:.1} |", tp.n, tp.keeper_secs, keeper_rate);
    let _ = writeln!(md, "| baseline: pre-built signed submitVerdict txs sent back to back, then receipts | {} | {:.3} | {:.1} |", tp.n, tp.baseline_secs, base_rate);
    let _ = writeln!(md, "\nRatio keeper/baseline: **{ratio:.2}** (target >= 0.70: {}). Both runs make the same on-chain decisions (every book makes the builtin model abstain; the baseline submits `ABSTAIN`).\n", verdict(ratio >= 0.7));
    let _ = writeln!(md, "## Memory\n");
    let _ = writeln!(md, "Peak RSS of `keeper run --once` over {} markets: **{rss_mb:.1} MB** ({rss_kib} KiB, from wait4(2) ru_maxrss; the run took {rss_secs:.1} s). Target <= 100 MB: {}.\n", args.rss_markets, verdict(rss_mb <= 100.0));
    let _ = writeln!(md, "## Gas (deterministic; gasUsed from receipts on anvil)\n");
    let _ = writeln!(md, "| measurement | gas | target | |\n| --- | ---: | ---: | --- |");
    let _ = writeln!(
        md,
        "| submitVerdict, ABSTAIN | {} | 40,000 | {} |",
        gas.abstain,
        verdict(gas.abstain <= 40_000)
    );
    let _ = writeln!(md, "| submitVerdict, refusal that reads the book (ask 0.97 outside the band, reason 5) | {} | 75,000 | {} |", gas.band, verdict(gas.band <= 75_000));
    let _ = writeln!(md, "| submitVerdict, PASS filling against one resting level (first fill in a fresh market) | {} | 260,000 | {} |", gas.pass_one_level, verdict(gas.pass_one_level <= 260_000));
    let _ = writeln!(
        md,
        "| evaluate on a passing BUY_UP book with the keeper's quote, the gate's own frame | {} | 6,000 | {} |",
        gas.evaluate_exec,
        verdict(gas.evaluate_exec <= 6_000)
    );
    let _ = writeln!(
        md,
        "| submitVerdict, unparseable 64-byte answer (reason 11) | {} | | |",
        gas.refuse_64
    );
    let _ = writeln!(md, "| submitVerdict, unparseable 100 KB answer (102,400 bytes, reason 11) | {} | | {} more than 64 bytes |", gas.refuse_100k, gas.refuse_100k.saturating_sub(gas.refuse_64));
    let _ = writeln!(md, "\nThe refusal and the PASS are measured on a gate whose high-water mark is already set, as it is after its first BUY decision; that first decision of a gate's life also stores H from zero (and logs `HighWaterMark`): the same refusal then cost {} gas. The 100 KB answer is refused without being copied or logged (the `Decision` log carries its first 64 bytes, its length and its keccak256); what it costs beyond the 64-byte one is its calldata (a transaction this calldata-heavy pays EIP-7623's floor, 40 gas per non-zero byte: 102,400 × 40 = 4,096,000 gas) and hashing it.", gas.band_first);
    let _ = writeln!(md, "\nHow `evaluate` is measured: `debug_traceCall` of `evaluate(snapshotOf(market), quote, BUY_UP)` (the quote the keeper would send for that book) with struct logs; the figure is the gas at the first opcode minus the gas left after the last one, i.e. exactly what the gate's frame spends when called. A calling contract adds its own CALL overhead (100 gas warm, 2,600 cold) and ABI encoding. For reference, `eth_estimateGas` of the same call gave {} gas, of which {} is intrinsic (21,000 + calldata at 4/16 gas per zero/non-zero byte), leaving {} (EIP-7623's calldata floor can raise a small call's estimate, so the trace figure is the one compared).", gas.evaluate_estimate, gas.evaluate_intrinsic, gas.evaluate_estimate.saturating_sub(gas.evaluate_intrinsic));
    let out = root.join(&args.out);
    crate::recorder::write_atomic(&out, md.as_bytes()).map_err(|e| step("write")(e.to_string()))?;
    print!("{md}");
    Ok(())
}
