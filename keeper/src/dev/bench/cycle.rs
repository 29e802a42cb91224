//! One keeper cycle over many markets, and its book reads one market at a time against the
//! deployless lens.

use super::*;

/// What one reader's result looked like, comparable.
pub(super) type ReadView = Vec<Option<(U256, U256, bool, Vec<(U256, U256)>, Vec<(U256, U256)>)>>;

pub(super) fn view(reads: &[(MarketInfo, crate::chain::reads::Result<MarketState>)]) -> ReadView {
    reads
        .iter()
        .map(|(_, r)| {
            r.as_ref()
                .ok()
                .map(|s| (s.best_bid, s.best_ask, s.finalized, s.bids.clone(), s.asks.clone()))
        })
        .collect()
}

/// Gas of one lens `eth_call` over `markets`, from a call trace.
pub(super) async fn lens_gas(w: &World, markets: &[MarketInfo]) -> Result<u64> {
    let req = crate::chain::lens::request(markets).map_err(|e| BenchError::Lens(Box::new(e)))?;
    let trace: serde_json::Value = w
        .keeper_rpc
        .raw_request(
            "debug_traceCall".into(),
            (req, "latest", serde_json::json!({"tracer": "callTracer"})),
        )
        .await
        .map_err(rpc_err("debug_traceCall of the lens"))?;
    let hex = trace.get("gasUsed").and_then(|g| g.as_str()).unwrap_or("0x0");
    u64::from_str_radix(hex.trim_start_matches("0x"), 16)
        .map_err(|source| BenchError::GasHex { hex: hex.to_string(), source })
}

pub(super) struct Cycle {
    pub(super) n: usize,
    pub(super) cycle_secs: f64,
    pub(super) per_market_secs: f64,
    pub(super) lens_secs: f64,
    pub(super) lens_calls: usize,
    pub(super) one_call: std::result::Result<f64, String>,
    pub(super) gas_chunk: u64,
    pub(super) gas_all: std::result::Result<u64, String>,
    /// Where the keeper cycle's time went, step by step.
    pub(super) steps: crate::engine::StepTimes,
    pub(super) submits: crate::engine::SubmitTimes,
}

/// Seeds `n` abstain markets, times the book reads one cycle needs (per market, and through
/// the lens in chunks and in one call, results compared) and one keeper cycle over them.
pub(super) async fn big_cycle(w: &World, n: usize, tmp: &Path) -> Result<Cycle> {
    seed_abstain_markets(w, n).await?;
    let infos = discover(w).await?;
    if infos.len() != n {
        return Err(check("discover", format!("{} markets, want {n}", infos.len())));
    }
    eprintln!("bench:   book reads over {n} markets, per market and through the lens");
    let p = &w.keeper_rpc;
    let at = p.get_block_number().await.map_err(rpc_err("reading the block number"))?;
    let (per_market_secs, per_market) = median_secs(READ_RUNS, || {
        crate::chain::reads::read_markets(p, &infos, at, READ_CONCURRENCY)
    })
    .await;
    let (lens_secs, lensed) = median_secs(READ_RUNS, || {
        crate::chain::lens::read_markets(p, &infos, at, READ_CONCURRENCY)
    })
    .await;
    let per_market = view(&per_market);
    if per_market.iter().any(Option::is_none) {
        return Err(check("per-market reads", "a read failed".into()));
    }
    if view(&lensed) != per_market {
        return Err(check("lens reads", "differ from the per-market reads".into()));
    }
    let (one_secs, one) =
        median_secs(READ_RUNS, || crate::chain::lens::read_chunk(p, &infos, at)).await;
    let one_call = match one {
        Ok(_) => Ok(one_secs),
        Err(e) => Err(crate::error_chain(&e)),
    };
    let chunk = &infos[..infos.len().min(crate::chain::lens::MARKETS_PER_CALL)];
    let gas_chunk = lens_gas(w, chunk).await?;
    let gas_all = lens_gas(w, &infos).await.map_err(|e| crate::error_chain(&e));

    eprintln!("bench:   keeper cycle over {n} markets");
    let mut k = w.keeper(Some(tmp.to_path_buf())).batch_window(super::BOT_WINDOW).build()?;
    let (cycle_secs, report) = timed_cycle(&mut k, n, "keeper cycle").await?;
    // Every market is due again for the memory run that follows.
    w.advance(k.strategy().reask_secs()).await?;
    Ok(Cycle {
        n,
        cycle_secs,
        per_market_secs,
        lens_secs,
        lens_calls: n.div_ceil(crate::chain::lens::MARKETS_PER_CALL),
        one_call,
        gas_chunk,
        gas_all,
        steps: report.steps,
        submits: report.submits,
    })
}

/// The report's section on one cycle and its book reads.
pub(super) fn write_cycle(md: &mut String, big: &Cycle) {
    let _ = writeln!(md, "## One cycle over {} markets\n", big.n);
    let _ = writeln!(md, "Every book makes the builtin model abstain. Book reads are what the cycle reads for each market (`gateQuote`, and {} levels a side with `getBookLevels`), median of {READ_RUNS} runs; the lens results were checked identical to the per-market ones.\n", crate::chain::reads::BOOK_DEPTH);
    let _ = writeln!(md, "| step | seconds |\n| --- | ---: |");
    let _ = writeln!(
        md,
        "| keeper cycle, wall time (books read through the lens; {} ABSTAIN decisions in {} `submitVerdicts` transactions, each signed, journalled and sent) | {:.3} |",
        big.n, big.submits.sent, big.cycle_secs
    );
    let _ = writeln!(
        md,
        "| book reads, one market at a time (3 `eth_call`s each, {} in flight): {} calls | {:.3} |",
        READ_CONCURRENCY,
        big.n * 3,
        big.per_market_secs
    );
    let _ = writeln!(md, "| book reads through the deployless `BookLens`, {} markets per `eth_call`: {} calls | {:.3} |", crate::chain::lens::MARKETS_PER_CALL, big.lens_calls, big.lens_secs);
    match &big.one_call {
        Ok(secs) => {
            let _ = writeln!(md, "| book reads through `BookLens` in one `eth_call` | {secs:.3} |");
        }
        Err(e) => {
            let _ = writeln!(
                md,
                "| book reads through `BookLens` in one `eth_call` | failed: {} |",
                short(e)
            );
        }
    }
    let _ = writeln!(md, "\nThe keeper cycle step by step (`CycleReport::steps`, which `keeper run` logs with every cycle):\n\n| step of the cycle | seconds | share |\n| --- | ---: | ---: |");
    let total = big.steps.total().as_secs_f64().max(f64::MIN_POSITIVE);
    for (name, d) in big.steps.named() {
        let secs = d.as_secs_f64();
        let _ = writeln!(md, "| {name} | {secs:.3} | {:.0}% |", 100.0 * secs / total);
    }
    let _ = writeln!(md, "\nOf ask_and_submit, the {} transactions' own parts (a batch's estimate is of the whole batch, halved until it fits half the block gas limit), summed:\n\n| part of a transaction | seconds in all | ms each |\n| --- | ---: | ---: |", big.submits.sent);
    for (name, d) in big.submits.named() {
        let secs = d.as_secs_f64();
        let each = 1_000.0 * secs / big.submits.sent.max(1) as f64;
        let _ = writeln!(md, "| {name} | {secs:.3} | {each:.2} |");
    }
    let _ = writeln!(md, "\nPer-market/lens ratio: **{:.1}×** faster through the lens ({} markets per call). Gas of one lens call (call trace): {} for {} markets; {} for all {}.\n", big.per_market_secs / big.lens_secs, crate::chain::lens::MARKETS_PER_CALL, big.gas_chunk, big.n.min(crate::chain::lens::MARKETS_PER_CALL), match &big.gas_all { Ok(g) => g.to_string(), Err(e) => format!("not measured ({})", short(e)) }, big.n);
}
