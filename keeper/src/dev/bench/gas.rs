//! The gate's gas figures, from real receipts and call traces (deterministic).

use super::*;

pub(super) struct Gas {
    pub(super) abstain: u64,
    /// The gate's first BUY decision ever: it also stores the high-water mark from zero.
    pub(super) band_first: u64,
    pub(super) band: u64,
    pub(super) pass_one_level: u64,
    pub(super) refuse_64: u64,
    pub(super) refuse_100k: u64,
    pub(super) evaluate_exec: u64,
    pub(super) evaluate_estimate: u64,
    pub(super) evaluate_intrinsic: u64,
    /// `deposit(50 units)` by an account that has deposited before (warm balance slots), and
    /// its first one.
    pub(super) deposit: u64,
    pub(super) deposit_first: u64,
    /// A PASS whose IOC sweeps the smallest orders 64 makers at distinct addresses rest ahead
    /// of real liquidity (issue 14's dust book, rule 20's worst admitted case).
    pub(super) pass_64_makers: u64,
    pub(super) pass_64_filled: u64,
}

/// The figures issue 14 measured on v2 (the gate before the lifetime bound), which v2.1 may
/// exceed by at most [`V21_GAS_ALLOWANCE`] on each path.
pub(super) const V2_GAS: [(&str, u64); 4] =
    [("ABSTAIN", 39_101), ("refusal", 71_395), ("PASS", 226_060), ("evaluate", 5_402)];
pub(super) const V21_GAS_ALLOWANCE: u64 = 5_000;
/// The absolute targets this table had before issue 14 (still shown, so a path that outgrew
/// one says so).
pub(super) const EARLIER_GAS_TARGETS: [(&str, u64); 4] =
    [("ABSTAIN", 40_000), ("refusal", 75_000), ("PASS", 260_000), ("evaluate", 6_000)];

/// Sends `deposit(amount)` from the keeper account (minting and approving first); its gasUsed.
pub(super) async fn deposit_gas(w: &World, amount: U256) -> Result<u64> {
    w.mint(w.keeper_addr, amount).await?;
    let c = crate::kit::bindings::ITestCollateral::new(w.deployment.collateral, &w.keeper_rpc);
    let tx =
        c.approve(w.deployment.gate, amount).send().await.map_err(CallFailed::on("approve"))?;
    confirm(&w.keeper_rpc, "approve", *tx.tx_hash()).await?;
    let g = IRiskGate::new(w.deployment.gate, &w.keeper_rpc);
    let tx = g.deposit(amount).send().await.map_err(CallFailed::on("deposit"))?;
    Ok(confirm(&w.keeper_rpc, "deposit", *tx.tx_hash()).await?.gas_used)
}

/// Sends one submitVerdict and returns its gasUsed and the reason it published.
pub(super) async fn submit_gas(
    w: &World,
    market: Address,
    raw: &str,
    quote: Quote,
) -> Result<(u64, u8)> {
    let g = IRiskGate::new(w.deployment.gate, &w.keeper_rpc);
    // A real block number (as many non-zero calldata bytes as the keeper's would have).
    let read_block =
        w.keeper_rpc.get_block_number().await.map_err(rpc_err("reading the block number"))?;
    let tx = g
        .submitVerdict(market, raw.to_string(), B256::ZERO, read_block, quote)
        .gas(sender::submit_gas_cap(raw))
        .send()
        .await
        .map_err(CallFailed::on("submitVerdict"))?;
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
pub(super) fn calldata_gas(data: &[u8]) -> u64 {
    data.iter().map(|b| if *b == 0 { 4 } else { 16 }).sum()
}

pub(super) async fn gas(w: &World) -> Result<Gas> {
    let t = w.chain_time().await?;
    let expiry = t + 86_400 / 2;
    w.mint(w.deployment.gate, U256::from(1_000_000_000u64)).await?;
    let m_abstain = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await?;
    w.ask(m_abstain, 400_000, 20_000_000).await?;
    let m_first = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await?;
    w.ask(m_first, 970_000, 20_000_000).await?;
    let m_band = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await?;
    w.ask(m_band, 970_000, 20_000_000).await?;
    let m_pass = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await?;
    w.ask(m_pass, 400_000, 20_000_000).await?;
    let none = Quote { maxPricePaid: U256::ZERO, deadline: 0 };
    // The keeper's quotes, all read before the first submission.
    let quotes =
        keeper_quotes(w, &[(m_first, "BUY_UP"), (m_band, "BUY_UP"), (m_pass, "BUY_UP")]).await?;
    let [first_quote, band_quote, pass_quote]: [Quote; 3] = quotes
        .try_into()
        .map_err(|q: Vec<Quote>| check("gas", format!("{} quotes for 3 markets", q.len())))?;
    let (abstain, r1) = submit_gas(w, m_abstain, "ABSTAIN", none.clone()).await?;
    let (band_first, r5a) = submit_gas(w, m_first, "BUY_UP", first_quote).await?;
    let (band, r5) = submit_gas(w, m_band, "BUY_UP", band_quote).await?;
    let (pass_one_level, r0) = submit_gas(w, m_pass, "BUY_UP", pass_quote).await?;
    // Unparseable answers of 64 bytes and of 100 KB (102,400 bytes): both reason 11.
    let (refuse_64, r11a) = submit_gas(w, m_abstain, &"x".repeat(64), none.clone()).await?;
    let (refuse_100k, r11b) = submit_gas(w, m_abstain, &"x".repeat(102_400), none).await?;
    let reasons = [r1, r5a, r5, r0, r11a, r11b];
    if reasons != [1, 5, 5, 0, 11, 11] {
        return Err(check("gas", format!("unexpected reasons {reasons:?} (want 1,5,5,0,11,11)")));
    }
    // evaluate on a passing BUY_UP book: the snapshot the gate itself would read now, from a
    // fresh market with one resting ask at 0.40, and the keeper's quote for it.
    let m_eval = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await?;
    w.ask(m_eval, 400_000, 20_000_000).await?;
    let g = IRiskGate::new(w.deployment.gate, &w.keeper_rpc);
    let snapshot = g.snapshotOf(m_eval).call().await.map_err(CallFailed::on("snapshotOf"))?;
    let quote = keeper_quotes(w, &[(m_eval, "BUY_UP")])
        .await?
        .pop()
        .ok_or_else(|| check("evaluate", "no quote for the market".into()))?;
    let r = g
        .evaluate(snapshot.clone(), quote.clone(), 1)
        .call()
        .await
        .map_err(CallFailed::on("evaluate"))?;
    if r.reason != 0 {
        return Err(check("evaluate", format!("book does not pass (reason {})", r.reason)));
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
        .map_err(rpc_err("eth_estimateGas of evaluate"))?;
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
        .map_err(rpc_err("debug_traceCall of evaluate"))?;
    let logs = trace.get("structLogs").and_then(|v| v.as_array()).cloned().unwrap_or_default();
    let first = logs.first().and_then(|l| l.get("gas")).and_then(|g| g.as_u64()).unwrap_or(0);
    let last_gas = logs.last().and_then(|l| l.get("gas")).and_then(|g| g.as_u64()).unwrap_or(0);
    let last_cost =
        logs.last().and_then(|l| l.get("gasCost")).and_then(|g| g.as_u64()).unwrap_or(0);
    let evaluate_exec = first.saturating_sub(last_gas.saturating_sub(last_cost));

    let fifty = U256::from(50_000_000u64);
    let deposit_first = deposit_gas(w, fifty).await?;
    let deposit = deposit_gas(w, fifty).await?;

    // 64 makers each rest the market's minimum size at 0.39, real liquidity behind them at the
    // same price: the IOC's 64 matches reach the minimum fill (64 × 39,100 = 2,502,400 ≥
    // 2,500,000) and stop at the cap.
    let q = w.fillable_min_qty(100);
    let m_dust = w.create_market(10_000, 100, q, expiry).await?;
    let makers = w
        .extra_makers(
            "riskgate bench dust maker",
            crate::kit::bindings::MAX_MATCHES_PER_TAKE as usize,
            U256::from(q),
        )
        .await?;
    for (_, signer) in &makers {
        w.rest_ask_with(signer, m_dust, 390_000, q).await?;
    }
    w.ask(m_dust, 390_000, 20_000_000).await?;
    let dust_quote = keeper_quotes(w, &[(m_dust, "BUY_UP")])
        .await?
        .pop()
        .ok_or_else(|| check("gas", "no quote for the dust market".into()))?;
    let (pass_64_makers, r0) = submit_gas(w, m_dust, "BUY_UP", dust_quote).await?;
    if r0 != 0 {
        return Err(check("gas", format!("the 64-maker book gave reason {r0}, not a PASS")));
    }
    let pass_64_filled = q * crate::kit::bindings::MAX_MATCHES_PER_TAKE;
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
        deposit,
        deposit_first,
        pass_64_makers,
        pass_64_filled,
    })
}

/// The report's section on gas.
pub(super) fn write_gas(md: &mut String, gas: &Gas) {
    let _ = writeln!(md, "## Gas (deterministic; gasUsed from receipts on anvil)\n");
    let _ = writeln!(
        md,
        "v2.1 may cost at most {V21_GAS_ALLOWANCE} gas more than v2 on each path (issue 14); the v2 \
         column is the figure issue 14 measured before the change.\n"
    );
    let _ = writeln!(md, "| measurement | gas | v2 | change | target (v2 + {V21_GAS_ALLOWANCE}) | |\n| --- | ---: | ---: | ---: | ---: | --- |");
    let measured = [
        ("submitVerdict, ABSTAIN", gas.abstain),
        (
            "submitVerdict, refusal that reads the book (ask 0.97 outside the band, reason 5)",
            gas.band,
        ),
        (
            "submitVerdict, PASS filling against one resting level (first fill in a fresh market)",
            gas.pass_one_level,
        ),
        (
            "evaluate on a passing BUY_UP book with the keeper's quote, the gate's own frame",
            gas.evaluate_exec,
        ),
    ];
    for ((what, got), (_, v2)) in measured.iter().zip(V2_GAS) {
        let target = v2 + V21_GAS_ALLOWANCE;
        let _ = writeln!(
            md,
            "| {what} | {got} | {v2} | {:+} | {target} | {} |",
            i128::from(*got) - i128::from(v2),
            verdict(*got <= target)
        );
    }
    let earlier: Vec<String> = measured
        .iter()
        .zip(EARLIER_GAS_TARGETS)
        .map(|((_, got), (path, t))| format!("{path} {got} of {t} ({})", verdict(*got <= t)))
        .collect();
    let _ = writeln!(
        md,
        "\nThe absolute targets this table had before issue 14: {}.\n",
        earlier.join("; ")
    );
    let _ = writeln!(md, "| measurement | gas | |\n| --- | ---: | --- |");
    let _ = writeln!(
        md,
        "| deposit(50 units), the depositor's first | {} | reported |",
        gas.deposit_first
    );
    let _ = writeln!(md, "| deposit(50 units), again | {} | reported |", gas.deposit);
    let _ = writeln!(md, "| submitVerdict, PASS sweeping 64 makers' minimum-size asks (filled {} units, the match cap) | {} | reported; the keeper signs it at its estimate, capped at {} |", gas.pass_64_filled, gas.pass_64_makers, sender::submit_gas_cap("BUY_UP"));
    let _ = writeln!(
        md,
        "| submitVerdict, unparseable 64-byte answer (reason 11) | {} | |",
        gas.refuse_64
    );
    let _ = writeln!(md, "| submitVerdict, unparseable 100 KB answer (102,400 bytes, reason 11) | {} | {} more than 64 bytes |", gas.refuse_100k, gas.refuse_100k.saturating_sub(gas.refuse_64));
    let _ = writeln!(md, "\nThe refusal and the PASS are measured on a gate whose high-water mark is already set, as it is after its first BUY decision; that first decision of a gate's life also stores H from zero (and logs `HighWaterMark`): the same refusal then cost {} gas. The 100 KB answer is refused without being copied or logged (the `Decision` log carries its first 64 bytes, its length and its keccak256); what it costs beyond the 64-byte one is its calldata (a transaction this calldata-heavy pays EIP-7623's floor, 40 gas per non-zero byte: 102,400 × 40 = 4,096,000 gas) and hashing it.", gas.band_first);
    let _ = writeln!(md, "\nHow `evaluate` is measured: `debug_traceCall` of `evaluate(snapshotOf(market), quote, BUY_UP)` (the quote the keeper would send for that book) with struct logs; the figure is the gas at the first opcode minus the gas left after the last one, i.e. exactly what the gate's frame spends when called. A calling contract adds its own CALL overhead (100 gas warm, 2,600 cold) and ABI encoding. For reference, `eth_estimateGas` of the same call gave {} gas, of which {} is intrinsic (21,000 + calldata at 4/16 gas per zero/non-zero byte), leaving {} (EIP-7623's calldata floor can raise a small call's estimate, so the trace figure is the one compared).", gas.evaluate_estimate, gas.evaluate_intrinsic, gas.evaluate_estimate.saturating_sub(gas.evaluate_intrinsic));
}
