//! The attested mode's cost (issue 35): the keeper with three attestors on loopback (real
//! `keeper attest` processes, the builtin rules each, k = 2) against the relayed keeper, over
//! the same markets on one chain, and the gas of the attested decisions from their receipts.

use super::*;
use crate::{
    chain::attestation::Vote,
    commands::deploy::{deploy_all, GateSpec},
    dev::bench::throughput::seed_mixed_markets,
    dev::world::ATTESTOR_ACCOUNTS,
    engine::{Engine, GateRef},
    inference::attestors::Panel,
};

/// Agreeing answers a verdict needs.
const K: u8 = 2;

pub(super) struct AttestedFigures {
    pub(super) n: usize,
    pub(super) relayed_secs: f64,
    pub(super) attested_secs: f64,
    /// Each attested decision's share of its transaction's receipt (gas used ÷ the decisions
    /// the transaction carries: the keeper batches a cycle's answers), by (reason, answers in
    /// its vote).
    pub(super) gas: Vec<(u8, usize, u64)>,
    /// The transactions that carried them, and their gas used in all.
    pub(super) transactions: usize,
    pub(super) total_gas: u64,
}

/// `n` mixed markets on one chain; the relayed keeper's cycle over them, then an attested
/// gate's beside it (same collateral and factory) with three attestor processes.
pub(super) async fn attested(
    w: &World,
    root: &Path,
    n: usize,
    tmp: &Path,
) -> Result<AttestedFigures> {
    let chain_id = w.deployment.chain_id;
    let keys: Vec<String> = (0..ATTESTOR_ACCOUNTS.len())
        .map(|i| w.attestor_key(i).map(str::to_string))
        .collect::<std::result::Result<_, _>>()?;
    let signers = crate::dev::world::attestor_signers(&w.anvil)?;
    let spec = GateSpec {
        params: w.params.clone(),
        trusted_resolvers: vec![w.maker_addr],
        trusted_creators: vec![w.maker_addr],
        collateral: Some(w.deployment.collateral),
        factory: Some(w.deployment.factory),
        keeper: w.keeper_addr,
        attestors: IRiskGate::Attestors {
            signers: signers.clone(),
            threshold: K,
            // anvil mines a block per transaction, so a read ages one block per submission sent
            // after it: with n answers in flight the last one lands up to n blocks after its read.
            // On a chain with timed blocks a few blocks suffice; here the window is sized to the
            // cycle so the figure is the keeper's speed, not anvil's block rule.
            maxReadAge: u32::try_from(2 * n).unwrap_or(u32::MAX),
            maxSlippageBps: 200,
        },
        verdict_source: Address::ZERO,
    };
    let d = deploy_all(&w.keeper_rpc, chain_id, &w.artifacts, &spec)
        .await
        .map_err(|e| check("attested gate", crate::error_chain(&e)))?;
    w.mint(w.deployment.gate, U256::from(1_000_000_000_000u64)).await?;
    w.mint(d.gate, U256::from(1_000_000_000_000u64)).await?;
    let markets = seed_mixed_markets(w, n, "markets for both keepers").await?;

    // The relayed keeper, builtin rules: BUY_UP at the 0.40 ask everywhere.
    let mut k = w
        .keeper(Some(tmp.join("relayed")))
        .model(Model::Builtin)
        .batch_window(super::BOT_WINDOW)
        .build()?;
    eprintln!("bench:   relayed keeper, one cycle over {n} markets");
    let (relayed_secs, _) = timed_cycle(&mut k, n, "relayed cycle").await?;

    let mut attestors = Vec::new();
    for key in &keys {
        attestors.push(w.start_attestor(root, d.gate, key, &["--model", "builtin"]).await?);
    }
    let urls: Vec<String> = attestors.iter().map(|a| a.url.clone()).collect();
    let panel = Panel::new(
        urls,
        chain_id,
        d.gate,
        signers,
        usize::from(K),
        std::time::Duration::from_secs(30),
    )
    .map_err(|e| check("panel", crate::error_chain(&e)))?;
    let gate = GateRef {
        chain_id,
        gate: d.gate,
        factory: w.deployment.factory,
        from_block: d.deploy_block,
    };
    let signer = crate::chain::dev_signer(w.anvil.dev_key(0)?)?;
    let mut ka = Engine::builder(w.keeper_rpc.clone(), gate)
        .signer(signer)
        .results(Some(tmp.join("attested")))
        .model(Model::Builtin)
        .panel(Some(panel))
        .build()?;
    eprintln!("bench:   attested keeper (3 attestors, k = 2), one cycle over the same {n} markets");
    let first = head(w).await?.number + 1;
    let (attested_secs, _) = timed_cycle(&mut ka, n, "attested cycle").await?;
    let last = head(w).await?.number;
    drop(attestors);

    use alloy::sol_types::SolEvent;
    let logs = crate::chain::reads::logs_in_ranges(
        &w.keeper_rpc,
        d.gate,
        vec![IRiskGate::Decision::SIGNATURE_HASH],
        first,
        last,
        10_000,
    )
    .await
    .map_err(|e| BenchError::Collect {
        what: "attested Decision logs".into(),
        source: Box::new(e),
    })?;
    let mut decided = Vec::new();
    // Each transaction's receipt gas and the decisions it carries.
    let mut receipts: std::collections::BTreeMap<alloy::primitives::B256, (u64, u64)> =
        Default::default();
    for log in &logs {
        let ev = IRiskGate::Decision::decode_log(&log.inner).map_err(BenchError::Decode)?;
        let vote = Vote::decode(&ev.vote)
            .map_err(|e| check("attested vote", e))?
            .ok_or_else(|| check("attested vote", "an attested decision without a vote".into()))?;
        let tx =
            log.transaction_hash.ok_or_else(|| check("attested", "a log without its tx".into()))?;
        match receipts.entry(tx) {
            std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().1 += 1,
            std::collections::btree_map::Entry::Vacant(e) => {
                let r = confirm(&w.keeper_rpc, "attested receipt", tx).await?;
                e.insert((r.gas_used, 1));
            }
        }
        decided.push((ev.reason, vote.entries.len(), tx));
    }
    if decided.len() != markets.len() {
        return Err(check("attested", format!("{} decisions for {} markets", decided.len(), n)));
    }
    let gas = decided
        .iter()
        .map(|(reason, answers, tx)| {
            let (used, count) = receipts.get(tx).copied().unwrap_or((0, 1));
            (*reason, *answers, used / count.max(1))
        })
        .collect();
    let total_gas = receipts.values().map(|(used, _)| used).sum();
    Ok(AttestedFigures {
        n,
        relayed_secs,
        attested_secs,
        gas,
        transactions: receipts.len(),
        total_gas,
    })
}

/// The report's section on the attested mode.
pub(super) fn write_attested(md: &mut String, a: &AttestedFigures) {
    let relayed = a.n as f64 / a.relayed_secs;
    let attested = a.n as f64 / a.attested_secs;
    let ratio = attested / relayed;
    let _ = writeln!(md, "## The attested mode ({} markets)\n", a.n);
    let _ = writeln!(md, "One chain, {} markets with the mixed book (one ask at 0.40): the relayed keeper decides each with the builtin rules, then an attested gate deployed beside it (same collateral and factory, 3 attestors, k = 2, reads at most {} blocks old: anvil mines a block per transaction) decides the same markets, its keeper asking three `keeper attest` processes on loopback (the builtin rules each, their own RPC connections) and submitting once two agree.\n", a.n, 2 * a.n);
    let _ =
        writeln!(md, "| run | decisions | seconds | decisions/s |\n| --- | ---: | ---: | ---: |");
    let _ = writeln!(
        md,
        "| relayed keeper, one cycle | {} | {:.3} | {relayed:.1} |",
        a.n, a.relayed_secs
    );
    let _ = writeln!(md, "| attested keeper (3 attestors asked at once, k = 2), one cycle | {} | {:.3} | {attested:.1} |", a.n, a.attested_secs);
    let _ = writeln!(
        md,
        "\nRatio attested/relayed: **{ratio:.2}** (target >= 0.5: {}).\n",
        verdict(ratio >= 0.5)
    );
    let mut groups: std::collections::BTreeMap<(u8, usize), Vec<u64>> = Default::default();
    for &(reason, answers, gas) in &a.gas {
        groups.entry((reason, answers)).or_default().push(gas);
    }
    let _ = writeln!(md, "Gas of the attested decisions, from their receipts: the keeper sent the {} decisions in {} `submitAttestedVerdicts` transactions, {} gas in all. Each decision's figure is its transaction's gas used divided by the decisions the transaction carries (the keeper submits the answers in hand once two agree, so a vote holds two or three):\n", a.gas.len(), a.transactions, a.total_gas);
    let _ = writeln!(md, "| reason | answers in the vote | decisions | gas per decision, its transaction's share (min / max) |\n| ---: | ---: | ---: | --- |");
    for ((reason, answers), g) in &groups {
        let (lo, hi) = (g.iter().min().copied().unwrap_or(0), g.iter().max().copied().unwrap_or(0));
        let _ = writeln!(md, "| {reason} | {answers} | {} | {lo} / {hi} |", g.len());
    }
    let _ = writeln!(md);
}
