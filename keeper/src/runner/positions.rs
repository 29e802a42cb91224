//! Stage 5, positions: redeem positions whose market is final, write off those whose market
//! never settled, each as the keeper's own transaction.

use super::*;
use alloy::{providers::Provider, sol_types::SolCall};

const REDEEM: &str = "redeem";
const WRITE_OFF: &str = "writeOff";

impl Keeper {
    /// Redeems every open position whose market is final. Returns how many were redeemed.
    pub async fn redeem_final(&mut self) -> Result<usize> {
        let open = self.record.open_positions(true);
        let mut redeemed = 0;
        for m in open {
            if self.own_pending.contains_key(&m) {
                continue; // followed at its own nonce by settle_own
            }
            let fin =
                crate::bindings::IBinaryMarket::new(m, &self.provider).finalized().call().await;
            if !matches!(fin, Ok(true)) {
                continue;
            }
            self.final_markets.insert(m);
            if self.dry_run {
                println!("{}", serde_json::json!({"dry_run": true, "would_redeem": m.to_string()}));
                continue;
            }
            let own =
                executor::redeem_calldata(&self.provider, self.gate, self.keeper_addr, m).await;
            let (input, gas) = match own {
                Ok(i) => i,
                Err(e) => {
                    warn!(market = %m, error = %crate::error_chain(&e), "redeem not sent: its estimate reverts");
                    continue;
                }
            };
            if self.own_call(m, REDEEM, input, gas).await? {
                redeemed += 1;
            }
        }
        Ok(redeemed)
    }

    /// Writes off the gate's positions whose market is still not final at `expiry +
    /// writeOffGrace` as of chain time `now_sec`. Returns how many were written off.
    pub async fn write_off_stale(&mut self, now_sec: u64) -> Result<usize> {
        let Some(grace) = self.facts.as_ref().map(|f| u64::from(f.bounds.writeOffGrace)) else {
            return Ok(0);
        };
        let expiry: HashMap<Address, u64> =
            self.follower.markets().map(|m| (m.address, m.expiry)).collect();
        // Strictly after: the next block's time is at least `now_sec + 1`, and the gate wants
        // `block.timestamp > expiry + writeOffGrace`.
        let stale: Vec<Address> = self
            .record
            .open_positions(false)
            .into_iter()
            .filter(|m| expiry.get(m).is_some_and(|&exp| now_sec >= exp.saturating_add(grace)))
            .collect();
        let mut written = 0;
        for m in stale {
            if self.own_pending.contains_key(&m) {
                continue; // followed at its own nonce by settle_own
            }
            let fin =
                crate::bindings::IBinaryMarket::new(m, &self.provider).finalized().call().await;
            match fin {
                Ok(false) => {}
                // Final: redeem_final closes it, unless the market cannot pay (its redeem
                // reverts): v2.1 writes such a position off like an unresolved one.
                Ok(true) => {
                    let input = crate::bindings::IRiskGate::redeemCall { market: m }.abi_encode();
                    let redeem = executor::estimate(
                        &self.provider,
                        REDEEM,
                        self.keeper_addr,
                        self.gate,
                        &input.into(),
                    )
                    .await;
                    // Redeemable, or already closed (redeemed this cycle): nothing to write off.
                    match redeem {
                        Err(ExecError::WouldRevert { revert, .. })
                            if !revert.starts_with("NoOpenPosition") => {}
                        _ => continue,
                    }
                }
                Err(_) => continue, // unreadable: try again next cycle
            }
            if self.dry_run {
                println!(
                    "{}",
                    serde_json::json!({"dry_run": true, "would_write_off": m.to_string()})
                );
                continue;
            }
            let own =
                executor::write_off_calldata(&self.provider, self.gate, self.keeper_addr, m).await;
            let (input, gas) = match own {
                Ok(i) => i,
                Err(e) => {
                    warn!(market = %m, error = %crate::error_chain(&e), "writeOff not sent: its estimate reverts");
                    continue;
                }
            };
            if self.own_call(m, WRITE_OFF, input, gas).await? {
                written += 1;
            }
        }
        Ok(written)
    }

    /// Sends one of the keeper's own calls at the next nonce and waits up to `--resend-after`
    /// for it. One not mined by then stays pending for its market and is followed by
    /// [`Keeper::settle_own`]: re-sent at the same nonce, never at a new one. Returns whether it
    /// was mined and succeeded (a failure is logged; the position is looked at again next cycle).
    pub(super) async fn own_call(
        &mut self,
        market: Address,
        what: &'static str,
        input: alloy::primitives::Bytes,
        gas: u64,
    ) -> Result<bool> {
        let gate = self.gate;
        let fees = executor::current_fees(&self.provider).await?;
        let sender = self.sender().await?;
        let nonce = sender.take_nonce();
        let signed = sender.sign(gate, input.clone(), gas, nonce, fees, U256::ZERO).await?;
        match sender.broadcast(&signed).await {
            Ok(()) => {}
            // The node may hold it: followed like one it accepted.
            Err(BroadcastError::Transport(e)) => {
                warn!(%market, nonce, error = %crate::error_chain(&*e), "{what}: send failed in transport; followed at its nonce");
            }
            Err(BroadcastError::Refused(r)) => {
                sender.give_back(nonce);
                warn!(%market, nonce, refusal = %r, "{what}: the node refused it; tried again next cycle");
                let floor = self.pending_nonce_floor();
                self.sender().await?.resync(floor).await?;
                return Ok(false);
            }
        }
        self.own_pending.insert(
            market,
            OwnPending {
                what,
                nonce,
                input: input.clone(),
                gas,
                attempts: vec![signed.attempt],
                sent: Instant::now(),
            },
        );
        let tx = signed.attempt.tx;
        match executor::wait_receipt(&self.provider, tx, self.resend_after).await {
            Ok(r) => {
                self.own_pending.remove(&market);
                if !r.status() {
                    self.own_reverted(market, what, &input, gas, &r).await?;
                }
                Ok(r.status())
            }
            Err(e) => {
                warn!(%market, nonce, error = %crate::error_chain(&e), "{what} not mined yet; re-sent at the same nonce if it stays stuck");
                Ok(false)
            }
        }
    }

    /// Follows the keeper's own calls still pending: one whose attempt is mined is done; one
    /// whose nonce another transaction used is dropped (its position is looked at afresh); one
    /// not mined after `--resend-after` is re-signed at its own nonce with bumped fees. Returns
    /// how many redeems and write-offs were mined and succeeded.
    pub(super) async fn settle_own(&mut self) -> Result<(usize, usize)> {
        let mut done = (0, 0);
        if self.own_pending.is_empty() {
            return Ok(done);
        }
        // The key's mined nonce count, read once and BEFORE the receipts: a nonce it shows used
        // by a block whose receipt of ours is then not found was used by another transaction.
        let used_below = self
            .provider
            .get_transaction_count(self.keeper_addr)
            .await
            .map_err(|e| ExecError::Rpc(Box::new(e)))?;
        let markets: Vec<Address> = self.own_pending.keys().copied().collect();
        for market in markets {
            let Some(own) = self.own_pending.get(&market) else { continue };
            let (what, nonce) = (own.what, own.nonce);
            let mut mined = None;
            for a in &own.attempts {
                if let Some(r) = self
                    .provider
                    .get_transaction_receipt(a.tx)
                    .await
                    .map_err(|e| ExecError::Rpc(Box::new(e)))?
                {
                    mined = Some(r);
                    break;
                }
            }
            if let Some(r) = mined {
                let Some(own) = self.own_pending.remove(&market) else { continue };
                if r.status() {
                    if what == REDEEM {
                        done.0 += 1;
                    } else {
                        done.1 += 1;
                    }
                } else {
                    self.own_reverted(market, what, &own.input, own.gas, &r).await?;
                }
                continue;
            }
            if used_below > nonce {
                // Mined nonces include ours, but none of our attempts: another transaction of
                // this key took it. Nothing of ours can be mined at it any more.
                warn!(%market, nonce, "{what}: its nonce was used by another transaction; looked at afresh");
                self.own_pending.remove(&market);
                continue;
            }
            let own = &self.own_pending[&market];
            if own.sent.elapsed() < self.resend_after {
                continue;
            }
            let last = *own.attempts.last().expect("an own call has an attempt");
            let (input, gas) = (own.input.clone(), own.gas);
            let gate = self.gate;
            let sender = self.sender().await?;
            let signed = sender.sign_replacement(gate, input, gas, nonce, last).await?;
            let sent = sender.broadcast(&signed).await;
            let own = self.own_pending.get_mut(&market).expect("still pending");
            own.sent = Instant::now();
            match sent {
                Ok(()) => {
                    own.attempts.push(signed.attempt);
                    info!(%market, nonce, tx = %signed.attempt.tx, max_fee = signed.attempt.max_fee_per_gas, "{what} re-sent at the same nonce with bumped fees");
                }
                Err(BroadcastError::Transport(e)) => {
                    // It may have reached the node: followed like the others.
                    own.attempts.push(signed.attempt);
                    warn!(%market, nonce, error = %crate::error_chain(&*e), "{what}: re-send failed in transport");
                }
                // NonceTooLow: an attempt was mined (seen next time) or another tx took it.
                Err(BroadcastError::Refused(r)) => {
                    warn!(%market, nonce, refusal = %r, "{what}: replacement refused");
                }
            }
        }
        Ok(done)
    }
}

impl Keeper {
    /// One of the keeper's own calls was mined and reverted (status 0): an off-chain row with
    /// the revert, replayed with the call's own gas limit on its block's state and decoded. The
    /// position is looked at again next cycle.
    async fn own_reverted(
        &mut self,
        market: Address,
        what: &'static str,
        input: &alloy::primitives::Bytes,
        gas: u64,
        r: &alloy::rpc::types::TransactionReceipt,
    ) -> Result<()> {
        let block = r.block_number.unwrap_or_default();
        let why = executor::replay_revert(
            &self.provider,
            self.keeper_addr,
            self.gate,
            input,
            gas,
            block,
            r.gas_used,
        )
        .await;
        let tx = r.transaction_hash;
        warn!(%market, %tx, block, gas_used = r.gas_used, revert = %why, "{what} reverted on chain");
        self.offchain(
            market,
            None,
            format!("{what} tx {tx} reverted in block {block}: {why}"),
            Annotation::default(),
        )
    }
}

/// One of the keeper's own calls (redeem, writeOff) sent and not yet seen mined.
pub(super) struct OwnPending {
    what: &'static str,
    pub(super) nonce: u64,
    input: alloy::primitives::Bytes,
    gas: u64,
    /// Every signed version, first to last: at most one of them can be mined.
    attempts: Vec<crate::journal::Attempt>,
    /// When it was last sent by this process.
    sent: Instant,
}
