//! The keeper's throughput on a mixed workload against a baseline of the same answers sent
//! as pre-built signed `submitVerdicts` batches back to back, at two sizes.

use super::*;

/// The mixed workload's book, the same in every market: one ask at 0.40 (20,000,000 units)
/// and one bid at 0.02 (1,000,000 units).
pub(super) const MIX_ASK: u64 = 400_000;
pub(super) const MIX_ASK_QTY: u64 = 20_000_000;
pub(super) const MIX_BID: u64 = 20_000;
pub(super) const MIX_BID_QTY: u64 = 1_000_000;
/// An answer that is none of the three tokens (and not one wrapped in trim bytes).
pub(super) const MIX_GARBAGE: &str = "I think UP is underpriced";

/// The four answers of the mixed workload, handed out in turn, and the reason the gate gives
/// each on the book above with `bench_params` (demo bounds: band [0.05, 0.95], maxSize
/// 10,000,000; caps opened wide):
/// - `BUY_UP`: pays the ask rounded up to the tick, 400,000, inside the band; quantity
///   10,000,000 (maxSize on the lot grid) fits in the 20,000,000 resting; the worst-case cost
///   (at most 10,000,000 × 0.95 = 9,500,000) is far under the caps and the gate's funding:
///   reason 0, PASS.
/// - `BUY_DOWN`: pays 1,000,000 − 20,000 = 980,000 for DOWN, above maxPrice 950,000: rule 5 is
///   the lowest failing rule (2, 3 and 4 hold: open, a day to expiry, a bid rests): reason 5.
/// - `ABSTAIN`: reason 1, whatever the book.
/// - `MIX_GARBAGE`: not a token: reason 11, whatever the book.
///
/// Every market has the same book, so a market's reason follows from the answer it got alone,
/// whichever market the model's answers reach in whichever order.
pub(super) const MIX: [(&str, u8); 4] =
    [("BUY_UP", 0), ("BUY_DOWN", 5), ("ABSTAIN", 1), (MIX_GARBAGE, 11)];

/// The reason the gate publishes for `raw` on the mixed book (see `MIX`).
pub(super) fn mix_reason(raw: &str) -> Option<u8> {
    MIX.iter().find(|(a, _)| *a == raw).map(|(_, r)| *r)
}

/// `n` answers, the four kinds in turn (n/4 of each).
pub(super) fn mix_answers(n: usize) -> Vec<String> {
    (0..n).map(|i| MIX[i % MIX.len()].0.to_string()).collect()
}

pub(super) async fn seed_mixed_markets(w: &World, n: usize, what: &str) -> Result<Vec<Address>> {
    let expiry = w.chain_time().await? + DAY_SECS;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let m = w.create_market(TICK, LOT, w.fillable_min_qty(LOT), expiry).await?;
        w.ask(m, MIX_ASK, MIX_ASK_QTY).await?;
        w.bid(m, MIX_BID, MIX_BID_QTY).await?;
        out.push(m);
        progress(what, i + 1, n);
    }
    Ok(out)
}

/// The gate's `Decision` events in blocks `[from, to]`, as (market, raw head, reason); checks
/// that each reason is the one its answer gets on the mixed book and returns the count per
/// reason, in `MIX` order.
pub(super) async fn check_mixed_decisions(
    w: &World,
    from: u64,
    to: u64,
    markets: &[Address],
    what: &str,
) -> Result<[usize; 4]> {
    use alloy::sol_types::SolEvent;
    let logs = crate::chain::reads::logs_in_ranges(
        &w.keeper_rpc,
        w.deployment.gate,
        vec![IRiskGate::Decision::SIGNATURE_HASH],
        from,
        to,
        10_000,
    )
    .await
    .map_err(|e| BenchError::Collect {
        what: format!("gate's Decision logs ({what})"),
        source: Box::new(e),
    })?;
    let mut counts = [0usize; 4];
    let mut seen = std::collections::HashSet::new();
    for log in logs {
        let ev = IRiskGate::Decision::decode_log(&log.inner).map_err(BenchError::Decode)?;
        if !markets.contains(&ev.market) || !seen.insert(ev.market) {
            return Err(check(what, format!("unexpected decision about {}", ev.market)));
        }
        let raw = String::from_utf8_lossy(&ev.rawHead).into_owned();
        let want = mix_reason(&raw)
            .ok_or_else(|| check(what, format!("answer {raw:?} is not one of the mix")))?;
        if ev.reason != want {
            return Err(check(
                what,
                format!(
                    "market {}: answer {raw:?} got reason {}, want {want}",
                    ev.market, ev.reason
                ),
            ));
        }
        let k = MIX.iter().position(|(_, r)| *r == want).unwrap_or_default();
        counts[k] += 1;
    }
    if seen.len() != markets.len() {
        return Err(check(what, format!("{} decisions for {} markets", seen.len(), markets.len())));
    }
    Ok(counts)
}

pub(super) struct Throughput {
    pub(super) n: usize,
    pub(super) keeper_secs: f64,
    pub(super) baseline_secs: f64,
    /// Decisions per reason, in `MIX` order, keeper then baseline.
    pub(super) keeper_counts: [usize; 4],
    pub(super) baseline_counts: [usize; 4],
}

/// Baseline on `w`, keeper on `wk`: two fresh chains deployed alike, so neither run pays for the
/// other's history.
pub(super) async fn throughput(w: &World, wk: &World, n: usize, tmp: &Path) -> Result<Throughput> {
    if n == 0 || !n.is_multiple_of(MIX.len()) {
        return Err(check("throughput", format!("--markets {n} is not a positive multiple of 4")));
    }
    // Funds for every PASS of both runs: n/2 of them, each costing at most 10,000,000 × 0.95.
    w.mint(w.deployment.gate, U256::from(1_000_000_000_000u64)).await?;
    wk.mint(wk.deployment.gate, U256::from(1_000_000_000_000u64)).await?;
    let answers = mix_answers(n);
    // Baseline: the same answers about n markets with the same book, as submitVerdict
    // transactions signed in advance (with the quote the keeper sends for that book), sent
    // back to back with alloy, then all receipts awaited.
    let markets = seed_mixed_markets(w, n, "mixed markets for the baseline").await?;
    let signer = crate::chain::dev_signer(w.anvil.dev_key(0)?)?;
    let wallet = EthereumWallet::from(signer);
    let p = &w.keeper_rpc;
    let nonce = p
        .get_transaction_count(w.keeper_addr)
        .await
        .map_err(rpc_err("reading the keeper's nonce"))?;
    let fees = sender::current_fees(p).await.map_err(|e| BenchError::Fees(Box::new(e)))?;
    let chain_id = w.deployment.chain_id;
    let asks: Vec<(Address, &str)> =
        markets.iter().zip(&answers).map(|(m, raw)| (*m, raw.as_str())).collect();
    let quotes = keeper_quotes(w, &asks).await?;
    let read_block = p.get_block_number().await.map_err(rpc_err("reading the block number"))?;
    // Batches as the keeper makes them: `DEFAULT_BATCH_MAX` answers each, in order, signed
    // with their pending-state estimate plus the keeper's margin.
    let elements: Vec<IRiskGate::Submission> = asks
        .into_iter()
        .zip(quotes)
        .map(|((m, raw), quote)| sender::batch_element(m, raw, B256::ZERO, read_block, &quote))
        .collect();
    let mut raw_txs = Vec::new();
    for (i, batch) in elements.chunks(crate::engine::DEFAULT_BATCH_MAX).enumerate() {
        let cap = sender::submit_batch_gas_cap(batch.iter().map(|e| e.raw.as_str()));
        let data = sender::submit_batch_calldata(batch.to_vec());
        let est = sender::estimate(p, "submitVerdicts", w.keeper_addr, w.deployment.gate, &data)
            .await
            .map_err(|e| BenchError::Estimate(Box::new(e)))?;
        let gas = sender::gas_with_margin("submitVerdicts", est, cap)
            .map_err(|e| BenchError::Estimate(Box::new(e)))?;
        let tx = TransactionRequest::default()
            .with_to(w.deployment.gate)
            .with_input(data)
            .with_nonce(nonce + i as u64)
            .with_chain_id(chain_id)
            .with_gas_limit(gas)
            .with_max_fee_per_gas(fees.max_fee_per_gas)
            .with_max_priority_fee_per_gas(fees.max_priority_fee_per_gas);
        let env = tx.build(&wallet).await.map_err(|e| BenchError::Sign(Box::new(e)))?;
        raw_txs.push(alloy::eips::eip2718::Encodable2718::encoded_2718(&env));
    }
    let first = head(w).await?.number + 1;
    eprintln!("bench:   baseline, {n} decisions in {} pre-signed batches", raw_txs.len());
    let t = Instant::now();
    let mut hashes = Vec::with_capacity(n);
    for raw in &raw_txs {
        let pending =
            p.send_raw_transaction(raw).await.map_err(rpc_err("sending a baseline transaction"))?;
        hashes.push(*pending.tx_hash());
    }
    // Receipts awaited as the keeper awaits its own: `RECEIPT_CONCURRENCY` polls in flight.
    let receipts: Vec<_> = futures::stream::iter(hashes)
        .map(|h| confirm(p, "baseline receipt", h))
        .buffered(RECEIPT_CONCURRENCY)
        .collect()
        .await;
    for r in receipts {
        r?;
    }
    let baseline_secs = t.elapsed().as_secs_f64();
    let last = head(w).await?.number;
    let baseline_counts =
        check_mixed_decisions(w, first, last, &markets, "baseline decisions").await?;

    let markets = seed_mixed_markets(wk, n, "mixed markets for the keeper").await?;
    let model =
        Model::Replay(crate::inference::replay::Replay::from_answers("bench-mix", answers.clone()));
    let mut k =
        wk.keeper(Some(tmp.to_path_buf())).model(model).batch_window(super::BOT_WINDOW).build()?;
    let first = head(wk).await?.number + 1;
    eprintln!("bench:   keeper cycle over {n} markets");
    let (keeper_secs, _) = timed_cycle(&mut k, n, "keeper cycle").await?;
    let last = head(wk).await?.number;
    let keeper_counts =
        check_mixed_decisions(wk, first, last, &markets, "keeper decisions").await?;

    let want = [n / MIX.len(); 4];
    if keeper_counts != want || baseline_counts != want {
        return Err(check(
            "throughput",
            format!(
            "reasons (PASS, 5, 1, 11): keeper {keeper_counts:?}, baseline {baseline_counts:?}, \
             want {want:?}"
        ),
        ));
    }
    Ok(Throughput { n, keeper_secs, baseline_secs, keeper_counts, baseline_counts })
}

/// [`throughput`] at each of `sizes`, each on two fresh anvils (pruned) deployed alike.
pub(super) async fn at_sizes(
    anvil_bin: &Path,
    artifacts: &compile::Artifacts,
    sizes: &[usize],
    tmp: &Path,
) -> Result<Vec<Throughput>> {
    let prune = ["--prune-history".to_string()];
    let mut out = Vec::new();
    for &n in sizes {
        eprintln!("bench: throughput on the mixed workload, {n} markets");
        let anvil = crate::kit::anvil::Anvil::start(anvil_bin, None, &prune).await?;
        let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
        let anvil = crate::kit::anvil::Anvil::start(anvil_bin, None, &prune).await?;
        let wk = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
        let tp = throughput(&w, &wk, n, &tmp.join(format!("tp-{n}"))).await;
        w.stop().await;
        wk.stop().await;
        out.push(tp?);
    }
    Ok(out)
}

/// The report's section on throughput: each size's keeper and baseline, their ratio, and how
/// the keeper's rate changes from the smallest size to the largest.
pub(super) fn write_throughput(md: &mut String, tps: &[Throughput]) {
    let sizes: Vec<String> = tps.iter().map(|t| t.n.to_string()).collect();
    let _ = writeln!(md, "## Throughput on a mixed workload ({} markets)\n", sizes.join(" and "));
    let _ = writeln!(md, "Every market has the same book (one ask at 0.40, one bid at 0.02) and the model (a replay) answers `BUY_UP`, `BUY_DOWN`, `ABSTAIN` and `{MIX_GARBAGE}` in turn, so the gate publishes PASS (0), a book-reading refusal (DOWN would cost 1 − 0.02 = 0.98, above the 0.95 band: reason 5), reason 1 and reason 11 in equal parts. Each size runs the baseline and the keeper on two fresh anvils with the same deployment, so neither pays for the other's history. Every decision is read back from the chain's `Decision` events and checked against its answer.\n");
    let _ = writeln!(md, "The keeper runs one cycle (discover, read books, render, model, quote, submit in `submitVerdicts` batches of up to {} answers sized by their gas estimates, receipts, decode, write results). The baseline sends the same answers (same books, the keeper's quotes) as pre-built signed `submitVerdicts` transactions of {} each, signed at their estimates plus the keeper's margin, back to back, then awaits the receipts ({RECEIPT_CONCURRENCY} polls in flight, as the keeper).\n", crate::engine::DEFAULT_BATCH_MAX, crate::engine::DEFAULT_BATCH_MAX);
    let _ = writeln!(
        md,
        "| markets | keeper s | keeper decisions/s | baseline s | baseline decisions/s | keeper ÷ baseline | target ≥ 0.90 |\n| ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    );
    for tp in tps {
        let keeper_rate = tp.n as f64 / tp.keeper_secs;
        let base_rate = tp.n as f64 / tp.baseline_secs;
        let ratio = keeper_rate / base_rate;
        let _ = writeln!(
            md,
            "| {} | {:.3} | {:.1} | {:.3} | {:.1} | **{ratio:.2}** | {} |",
            tp.n,
            tp.keeper_secs,
            keeper_rate,
            tp.baseline_secs,
            base_rate,
            verdict(ratio >= 0.9)
        );
    }
    if let (Some(small), Some(big)) = (tps.first(), tps.last()) {
        if big.n > small.n {
            let rate = |t: &Throughput| t.n as f64 / t.keeper_secs;
            let fall = 1.0 - rate(big) / rate(small);
            let _ = writeln!(
                md,
                "\nThe keeper's decisions per second from {} to {} markets: {:.1} → {:.1}, a fall of **{:.0} %** (target ≤ 20 %: {}; a negative fall is a rise).",
                small.n,
                big.n,
                rate(small),
                rate(big),
                fall * 100.0,
                verdict(fall <= 0.2)
            );
        }
    }
    for tp in tps {
        let [pass, band, abstain, invalid] = tp.keeper_counts;
        let b = tp.baseline_counts;
        let _ = writeln!(md, "\n{} markets, decisions by reason (PASS / 5 / 1 / 11): keeper {pass} / {band} / {abstain} / {invalid}, baseline {} / {} / {} / {}.", tp.n, b[0], b[1], b[2], b[3]);
    }
    let _ = writeln!(md);
}
