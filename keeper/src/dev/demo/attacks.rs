//! The demo's adversary segment: issue 7's attacks 1-4 replayed against the gate by real
//! transactions, each labelled `attack ...` so RESULTS.md lists it with what it cost the gate and
//! the bound that held (computed from the chain record by `recorder::adversary`).
//!
//! It runs after the ordinary stretch has settled, so it never starves it, and keeps the gate's
//! position caps free between attacks: each attack leaves no open position behind, except the
//! drawdown attack (1b), which runs last.

use super::{play, replay, think, DemoError, Progress, Result};
use crate::{
    bindings::reason,
    dev::world::{Actor, World},
    recorder::adversary::ATTACK_PREFIX,
    runner::Keeper,
    strategy::Model,
};
use alloy::primitives::Address;
use tokio_util::sync::CancellationToken;

const ATTACK_1A: &str = "attack 1a: an outsider's markets, resolver not trusted";
const ATTACK_1B: &str = "attack 1b: a trusted resolver turned hostile";
const ATTACK_2: &str = "attack 2: sandwich between the read and the submission";
const ATTACK_3A: &str = "attack 3a: slot lock, expiry 2^64-1";
const ATTACK_3B: &str = "attack 3b: slot lock, a resolver that never acts";
const ATTACK_3C: &str = "attack 3c: slot lock, a dust ask one tick better";
const ATTACK_4: &str = "attack 4: both sides of one market";

/// Rounds of attack 1b at most; with the demo's bounds the drawdown stops it in about four.
const MAX_DRAIN_ROUNDS: usize = 8;

fn check(step: &str, ok: bool, what: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(DemoError::Check { step: step.to_string(), what: what() })
    }
}

/// Checks that `got` is exactly the reasons `want`, in order.
fn expect(step: &str, got: &[u8], want: &[u8]) -> Result<()> {
    check(step, got == want, || format!("published reasons {got:?}, expected {want:?}"))
}

pub(super) async fn run_all(
    w: &World,
    k: &mut Keeper,
    p: &Progress,
    cancel: &CancellationToken,
) -> Result<()> {
    debug_assert!(ATTACK_1A.starts_with(ATTACK_PREFIX));
    let builtin = Model::Builtin;
    let outsider = w.addr(Actor::Outsider);
    let maker = w.addr(Actor::Maker);
    // Every market's minimum size lets one IOC reach the minimum fill within the match cap, so
    // rule 20 refuses none of them; the smallest order anyone can rest is that size.
    let q = w.fillable_min_qty(100);

    // 1a. An outsider creates markets that expire soon, with itself as resolver and asks the
    // builtin model buys. The keeper does not ask about them (resolver not trusted); told to,
    // the gate refuses every one (rule 12) before touching the book.
    for round in 1..=2 {
        p.step(&format!("attack 1a, round {round}: three outsider markets, untrusted resolver"));
        let now = w.chain_time().await?;
        let mut markets = Vec::new();
        for _ in 0..3 {
            let m =
                w.create_market_as(Actor::Outsider, 10_000, 100, q, now + 1_800, outsider).await?;
            w.ask_as(Actor::Outsider, m, 450_000, 20_000_000).await?;
            markets.push(m);
        }
        let r = k.cycle(&builtin, Some(ATTACK_1A), cancel).await?;
        check(ATTACK_1A, r.asked == 0, || {
            format!("the keeper asked {} markets; untrusted resolvers must be skipped", r.asked)
        })?;
        let got = play(k, &markets, &builtin, ATTACK_1A, cancel).await?;
        expect(ATTACK_1A, &got, &[reason::RESOLVER_UNTRUSTED; 3])?;
    }

    // 2. Sandwich: the model is shown a 0.42 ask; before the answer lands, someone lifts it and
    // re-offers at 0.95. The quote (0.42 + 50 bps) refuses the moved book (rule 15).
    p.step("attack 2: sandwich, the 0.42 ask is lifted and re-offered at 0.95 before submission");
    let now = w.chain_time().await?;
    let m_sandwich = w.create_market(10_000, 100, q, now + 3_600).await?;
    w.ask(m_sandwich, 420_000, 20_000_000).await?;
    let (answers, _) = think(k, &[m_sandwich], &builtin, ATTACK_2, cancel).await?;
    w.approve_as(Actor::Outsider, m_sandwich).await?;
    w.buy_up_as(Actor::Outsider, m_sandwich, 420_000, 20_000_000).await?;
    w.ask_as(Actor::Outsider, m_sandwich, 950_000, 20_000_000).await?;
    let got: Vec<u8> = k.submit(answers).await?.iter().map(|d| d.reason).collect();
    expect(ATTACK_2, &got, &[reason::QUOTE_LIMIT])?;

    // 3a. A market naming a trusted resolver (anyone may name anyone) that never expires, with a
    // one-lot ask at 0.05: out of the gate's horizon (rule 13); the keeper skips it unasked.
    p.step("attack 3a: a market with expiry 2^64-1 naming the trusted maker as resolver");
    let m_far = w.create_market_as(Actor::Outsider, 10_000, 100, q, u64::MAX, maker).await?;
    w.ask_as(Actor::Outsider, m_far, 50_000, q).await?;
    let got = play(k, &[m_far], &builtin, ATTACK_3A, cancel).await?;
    expect(ATTACK_3A, &got, &[reason::HORIZON])?;

    // 3c. An honest book at 0.40, and an outsider's one-lot ask one tick better. The model sees
    // 0.39, the quote caps the order there, it fills one lot of 10 units' worth and the gate
    // undoes it (rule 18): no collateral moves and no slot is taken.
    p.step("attack 3c: a one-lot ask one tick better than an honest 0.40 book");
    let now = w.chain_time().await?;
    let m_dust = w.create_market(10_000, 100, q, now + 3_600).await?;
    w.ask(m_dust, 400_000, 20_000_000).await?;
    w.approve_as(Actor::Outsider, m_dust).await?;
    w.ask_as(Actor::Outsider, m_dust, 390_000, q).await?;
    let got = play(k, &[m_dust], &builtin, ATTACK_3C, cancel).await?;
    expect(ATTACK_3C, &got, &[reason::FILL_BELOW_MIN])?;

    // 4. Both sides of one market: UP at the 0.55 ask, then DOWN against the 0.45 bid (also
    // 0.55), a pair costing 1.10 that redeems for 1.00. Scripted answers, as from a compromised
    // model; the second is refused (rule 17).
    p.step("attack 4: BUY_UP at 0.55, then BUY_DOWN at 0.55 in the same market");
    let m_both = w.create_market(10_000, 100, q, now + 3_600).await?;
    w.ask(m_both, 550_000, 20_000_000).await?;
    w.bid(m_both, 450_000, 20_000_000).await?;
    let got = play(k, &[m_both], &replay("scripted", &["BUY_UP"]), ATTACK_4, cancel).await?;
    expect(ATTACK_4, &got, &[reason::PASS])?;
    let got = play(k, &[m_both], &replay("scripted", &["BUY_DOWN"]), ATTACK_4, cancel).await?;
    expect(ATTACK_4, &got, &[reason::OPPOSITE_SIDE])?;

    // 3b. A market naming the trusted maker, who never acts on it. The minimum fill makes the
    // attacker offer at least 25 % of an order (2.5 units at 0.05) to take a slot at all. After
    // expiry + writeOffGrace the keeper writes the position off, freeing the slot; when the
    // market does resolve later, the keeper still redeems it.
    p.step("attack 3b: a position in a market whose resolver never acts, then written off");
    let now = w.chain_time().await?;
    // v2.1: only a trusted creator's markets are traded (rule 19), so the maker creates it.
    let m_stuck = w.create_market(10_000, 100, q, now + 900).await?;
    w.approve_as(Actor::Outsider, m_stuck).await?;
    w.ask_as(Actor::Outsider, m_stuck, 50_000, 2_500_000).await?;
    let got = play(k, &[m_stuck], &builtin, ATTACK_3B, cancel).await?;
    expect(ATTACK_3B, &got, &[reason::PASS])?;
    let grace = u64::from(super::demo_params().writeOffGrace);
    // A minute past m_stuck's expiry + grace; the markets above, created earlier with an hour
    // to run, have expired too.
    w.advance(900 + grace + 60).await?;
    // The honest markets resolve; attack 4's holds UP and resolves DOWN (the worst case).
    w.resolve(m_sandwich, true).await?;
    w.resolve(m_dust, true).await?;
    w.resolve(m_both, false).await?;
    let r = k.cycle(&builtin, Some(ATTACK_3B), cancel).await?;
    check(ATTACK_3B, r.written_off == 1 && r.asked == 0, || {
        format!("{} written off and {} asked; expected 1 and 0", r.written_off, r.asked)
    })?;
    p.step("attack 3b: the resolver finally acts; the written-off claim is redeemed");
    w.resolve(m_stuck, false).await?;
    k.cycle(&builtin, Some(ATTACK_3B), cancel).await?;

    drain(w, k, p, cancel).await
}

/// 1b. A trusted resolver turned hostile: each round it lists three markets that expire in 15
/// minutes with asks the builtin model buys, the honest keeper's ordinary cycle buys them, and
/// it resolves them against the gate and closes the positions itself to free the slots. The
/// drawdown bound stops the losses (rule 14); the demo stops after the first round with no
/// purchase.
async fn drain(w: &World, k: &mut Keeper, p: &Progress, cancel: &CancellationToken) -> Result<()> {
    let hostile = w.addr(Actor::Hostile);
    let builtin = Model::Builtin;
    let mut refused = 0;
    for round in 1..=MAX_DRAIN_ROUNDS {
        p.step(&format!(
            "attack 1b, round {round}: three markets from a trusted resolver turned hostile"
        ));
        let now = w.chain_time().await?;
        let mut markets: Vec<Address> = Vec::new();
        for _ in 0..3 {
            let q = w.fillable_min_qty(100);
            let m = w.create_market_as(Actor::Hostile, 10_000, 100, q, now + 900, hostile).await?;
            w.ask_as(Actor::Hostile, m, 450_000, 20_000_000).await?;
            markets.push(m);
        }
        let before = k.record.decided.len();
        let r = k.cycle(&builtin, Some(ATTACK_1B), cancel).await?;
        check(ATTACK_1B, r.asked == 3, || format!("the keeper asked {} markets, not 3", r.asked))?;
        let reasons: Vec<u8> = k.record.decided[before..].iter().map(|d| d.reason).collect();
        refused += reasons.iter().filter(|r| **r == reason::DRAWDOWN).count();
        w.advance(901).await?;
        for m in &markets {
            w.resolve_as(Actor::Hostile, *m, false).await?;
            w.redeem_gate_as(Actor::Hostile, *m).await?;
        }
        if !reasons.contains(&reason::PASS) {
            break;
        }
    }
    check(ATTACK_1B, refused > 0, || {
        format!("maxDrawdown never reached in {MAX_DRAIN_ROUNDS} rounds")
    })?;
    // Syncs past the hostile redeems and writes the record.
    k.cycle(&builtin, Some(ATTACK_1B), cancel).await?;
    Ok(())
}
