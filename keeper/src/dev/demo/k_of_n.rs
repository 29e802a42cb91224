//! The attested demo gate (issue 35), on its own chain with its own record in
//! `results/attested/`: three `keeper attest` processes on loopback (k = 2), each asking the
//! bundled language model through its own llama.cpp server. Two sample at temperature 0; the
//! third at another temperature and seed, so it sometimes answers differently. The keeper asks
//! all three about fresh markets and submits their signed answers; then a compromised keeper
//! (the same key, its own call data) forges an answer, replays a signature set, and drops
//! answers, and the gate refuses each by real transactions (reasons 21 and 22).
//!
//! The keeper waits for every attestor before submitting ([`Panel::waiting_for_all`]), so a
//! vote holds all three answers whichever server was quicker, and the record is the same run
//! to run: the answers are a function of the prompts, which the pinned chain clock fixes.

use super::{think, DemoError, Progress, Result};
use crate::{
    dev::steps,
    dev::world::{attestor_address, attestor_signers, AttestorChild, World, ATTESTOR_ACCOUNTS},
    domain::decision::{gate_verdict, Answer, Attestations},
    engine::Engine,
    inference::{attestors::Panel, Model},
    kit::bindings::{reason, verdict, IRiskGate},
};
use alloy::primitives::{Address, U256};
use std::{collections::BTreeSet, path::Path, time::Duration};
use tokio_util::sync::CancellationToken;

/// The attested demo's record, under the demo's results folder.
pub const ATTESTED_DIR: &str = "attested";
/// Agreeing answers a verdict needs, of the three.
const K: u8 = 2;
/// Blocks a read may be behind the block that includes it. The demo submits one answer per
/// block, at most [`MARKETS`] after their common read.
const MAX_READ_AGE: u32 = 12;
/// Slippage over the attested best price the gate allows.
const MAX_SLIPPAGE_BPS: u16 = 200;
/// Fresh markets the honest keeper is asked about.
const MARKETS: usize = 8;
/// The third attestor's sampling: another temperature and seed than the other two.
const ODD_TEMPERATURE: &str = "1.5";
const ODD_SEED: &str = "7";

const HONEST: &str = "attested: three attestors, the bundled model, k = 2";
const FORGE: &str = "attack 8: a keeper rewrites an attestor's answer";
const REPLAY: &str = "attack 9: a keeper replays a signature set";
const SHORT: &str = "attack 10: a keeper sends one answer of three";
const SPLIT: &str = "attack 11: a keeper drops an attestor's answer to split the vote";

/// The attested gate's bounds: the demo's, with room for eight positions, 60 units at risk and a
/// drawdown of 100, so the honest keeper's answers are decided by the vote and the book more than
/// by the caps.
pub fn params() -> IRiskGate::Params {
    IRiskGate::Params {
        maxConcurrent: 8,
        maxNotional: U256::from(60_000_000u64),
        maxDrawdown: U256::from(100_000_000u64),
        ..super::demo_params()
    }
}

/// The gate's attested setting: the three attestors' addresses (ascending), k, read age and
/// slippage.
pub fn setting(anvil: &crate::kit::anvil::Anvil) -> Result<IRiskGate::Attestors> {
    Ok(IRiskGate::Attestors {
        signers: attestor_signers(anvil)?,
        threshold: K,
        maxReadAge: MAX_READ_AGE,
        maxSlippageBps: MAX_SLIPPAGE_BPS,
    })
}

fn check(step: &str, ok: bool, what: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(DemoError::Check { step: step.to_string(), what: what() })
    }
}

/// The model flags of attestor `i`: the bundled model at the demo's settings, the last one at
/// another temperature and seed.
fn model_flags(i: usize) -> Vec<String> {
    let odd = i + 1 == ATTESTOR_ACCOUNTS.len();
    let seed = crate::domain::config::BUNDLED_SEED.to_string();
    let (temperature, seed) = if odd { (ODD_TEMPERATURE, ODD_SEED) } else { ("0", seed.as_str()) };
    [
        "--model",
        "bundled",
        "--max-tokens",
        "48",
        "--response-format",
        "object",
        "--inference-timeout-secs",
        "300",
        // Three servers on the machine: one thread each, so none spins waiting for a core.
        "--model-threads",
        "1",
        "--temperature",
        temperature,
        "--seed",
        seed,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The attested gate's scenarios; returns the reasons its record holds.
pub(super) async fn scenarios(
    w: &World,
    root: &Path,
    results: &Path,
    p: &Progress,
    cancel: &CancellationToken,
) -> Result<BTreeSet<u8>> {
    let gate = w.deployment.gate;
    w.mint(gate, U256::from(100_000_000u64)).await?;
    let setting = setting(&w.anvil)?;
    p.step("attested gate: starting three keeper attest processes, each with its own bundled model server");
    let mut children: Vec<AttestorChild> = Vec::new();
    for i in 0..ATTESTOR_ACCOUNTS.len() {
        let flags = model_flags(i);
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        children.push(w.start_attestor(root, gate, w.attestor_key(i)?, &flags).await?);
    }
    let urls = children.iter().map(|c| c.url.clone()).collect();
    let panel = Panel::new(
        urls,
        w.deployment.chain_id,
        gate,
        setting.signers.clone(),
        usize::from(K),
        Duration::from_secs(600),
    )
    .map_err(|e| DemoError::Check { step: "attestors".into(), what: crate::error_chain(&e) })?
    .with_max_read_age(u64::from(MAX_READ_AGE))
    .waiting_for_all();
    let mut k = w
        .keeper(Some(results.to_path_buf()))
        .reask_secs(900)
        .one_at_a_time(true)
        .panel(Some(panel))
        .build()?;
    // The odd attestor (the last, see `model_flags`).
    let odd = attestor_address(&w.anvil, ATTESTOR_ACCOUNTS.len() - 1)?;

    // The honest keeper: fresh markets, books from 0.15/0.10 to 0.85/0.80, all three asked.
    let now = w.chain_time().await?;
    let q = w.fillable_min_qty(100);
    let mut markets = Vec::new();
    for i in 0..MARKETS as u64 {
        let ask = 150_000 + 100_000 * (i % 8);
        let m = w.create_market(10_000, 100, q, now + 7_200).await?;
        w.ask(m, ask, 20_000_000).await?;
        w.bid(m, ask - 50_000, 20_000_000).await?;
        markets.push(m);
    }
    p.step(&format!("attested gate: {MARKETS} markets, three attestors asked about each"));
    let (answers, _) = think(&mut k, &markets, Model::Builtin, HONEST, cancel).await?;
    check(HONEST, answers.len() == MARKETS, || {
        format!("{} answers for {MARKETS} markets (every attestor must answer)", answers.len())
    })?;
    for a in &answers {
        let n = a.attested.as_ref().map_or(0, |at| at.signers.len());
        check(HONEST, n == ATTESTOR_ACCOUNTS.len(), || {
            format!("market {}: {n} answers in the vote, expected all three", a.market)
        })?;
    }
    let last = answers.last().cloned();
    steps::submit(&mut k, answers).await?;

    // A compromised keeper replays the last signature set: the same market and read block
    // again, within maxReadAge, refused as reused (21).
    p.step("attested gate: attack 9, the last signature set sent again");
    if let Some(mut a) = last {
        a.note.scenario = Some(REPLAY.into());
        let got = reasons(&mut k, vec![a]).await?;
        check(REPLAY, got == [reason::NOT_ATTESTED], || {
            format!("published {got:?}, expected [21]")
        })?;
    }

    // Fresh markets for the other attacks, asked honestly; what is sent is altered.
    let now = w.chain_time().await?;
    let mut fresh = Vec::new();
    for i in 0..4u64 {
        let ask = 250_000 + 150_000 * i;
        let m = w.create_market(10_000, 100, q, now + 7_200).await?;
        w.ask(m, ask, 20_000_000).await?;
        w.bid(m, ask - 50_000, 20_000_000).await?;
        fresh.push(m);
    }
    p.step("attested gate: attacks 8, 10 and 11 on four fresh markets");
    let (answers, _) = think(&mut k, &fresh, Model::Builtin, HONEST, cancel).await?;
    check(HONEST, answers.len() == fresh.len(), || {
        format!("{} answers for {} markets", answers.len(), fresh.len())
    })?;
    // Attack 11 needs a vote the odd attestor split: two agree, it answered otherwise.
    let split_at = answers.iter().position(|a| split_by(a, odd));
    let Some(split_at) = split_at else {
        let votes: Vec<Vec<&str>> = answers
            .iter()
            .map(|a| a.attested.as_ref().map(|at| at.raws.iter().map(String::as_str).collect()))
            .map(Option::unwrap_or_default)
            .collect();
        return Err(DemoError::Check {
            step: SPLIT.into(),
            what: format!(
                "no vote the third attestor split (temperature {ODD_TEMPERATURE}, seed \
                 {ODD_SEED}): {votes:?}"
            ),
        });
    };
    let mut sent = Vec::new();
    let mut want = Vec::new();
    let mut honest = Vec::new();
    let mut others = (0..answers.len()).filter(|&i| i != split_at);
    let (forge_at, short_at) = (others.next(), others.next());
    for (i, mut a) in answers.into_iter().enumerate() {
        let Some(at) = a.attested.as_mut() else {
            return Err(DemoError::Check {
                step: HONEST.into(),
                what: format!("market {}: an answer without its vote", a.market),
            });
        };
        if i == split_at {
            // Drop one of the two agreeing answers: one each way, none reaches k (22).
            let Some(agreeing) = at.signers.iter().position(|s| *s != odd) else { continue };
            remove(at, agreeing);
            a.note.scenario = Some(SPLIT.into());
            want.push(reason::ATTESTORS_DISAGREE);
        } else if Some(i) == forge_at {
            // Rewrite the first answer to another verdict, keeping its signature: it recovers
            // to an address outside the set (21).
            let forged =
                if gate_verdict(&at.raws[0]) == verdict::BUY_UP { "BUY_DOWN" } else { "BUY_UP" };
            at.raws[0] = forged.to_string();
            a.note.scenario = Some(FORGE.into());
            want.push(reason::NOT_ATTESTED);
        } else if Some(i) == short_at {
            // One answer of three: fewer than k signatures (21).
            while at.signers.len() > 1 {
                remove(at, 1);
            }
            a.note.scenario = Some(SHORT.into());
            want.push(reason::NOT_ATTESTED);
        } else {
            honest.push(a);
            continue;
        }
        sent.push(a);
    }
    steps::submit(&mut k, honest).await?;
    let got = reasons(&mut k, sent).await?;
    check("attacks 8, 10, 11", got == want, || format!("published {got:?}, expected {want:?}"))?;
    drop(children);

    p.step("attested gate: settling (time past expiry, resolve, redeem)");
    w.advance(7_300).await?;
    for (i, m) in markets.iter().chain(&fresh).enumerate() {
        w.resolve(*m, i % 2 == 0).await?;
    }
    k.cycle(Some(HONEST), cancel).await?;
    let codes: BTreeSet<u8> = k.record()?.decided.iter().map(|d| d.reason).collect();
    for c in [reason::NOT_ATTESTED, reason::ATTESTORS_DISAGREE] {
        check("attested coverage", codes.contains(&c), || {
            format!("reason {c} never published (reached: {codes:?})")
        })?;
    }
    Ok(codes)
}

/// Whether `a`'s vote is two agreeing answers and the odd attestor's other one.
fn split_by(a: &Answer, odd: Address) -> bool {
    let Some(at) = a.attested.as_ref() else { return false };
    let verdicts: Vec<(Address, u8)> =
        at.signers.iter().zip(&at.raws).map(|(s, r)| (*s, gate_verdict(r))).collect();
    let others: Vec<u8> = verdicts.iter().filter(|(s, _)| *s != odd).map(|(_, v)| *v).collect();
    let theirs = verdicts.iter().find(|(s, _)| *s == odd).map(|(_, v)| *v);
    verdicts.len() == 3
        && others.len() == 2
        && others[0] == others[1]
        && others[0] != verdict::INVALID
        && theirs.is_some_and(|v| v != others[0])
}

/// Removes answer `j` from a vote.
fn remove(at: &mut Attestations, j: usize) {
    at.signers.remove(j);
    at.raws.remove(j);
    at.sigs.remove(j);
    if j < at.models.len() {
        at.models.remove(j);
    }
}

async fn reasons(k: &mut Engine, answers: Vec<Answer>) -> Result<Vec<u8>> {
    Ok(steps::submit(k, answers).await?.iter().map(|d| d.reason).collect())
}
