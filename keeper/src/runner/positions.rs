//! Stage 5, positions: redeem positions whose market is final, write off those whose market
//! never settled, each as the keeper's own transaction.

use super::*;

impl Keeper {
    /// Redeems every open position whose market is final. Returns how many were redeemed.
    pub async fn redeem_final(&mut self) -> Result<usize> {
        let open = self.record.open_positions(true);
        let mut redeemed = 0;
        for m in open {
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
            let input = match executor::redeem_calldata(&self.provider, self.gate, m).await {
                Ok(i) => i,
                Err(e) => {
                    warn!(market = %m, error = %crate::error_chain(&e), "redeem refused in simulation");
                    continue;
                }
            };
            if self.own_call(m, "redeem", input, executor::REDEEM_GAS).await? {
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
            let fin =
                crate::bindings::IBinaryMarket::new(m, &self.provider).finalized().call().await;
            if !matches!(fin, Ok(false)) {
                continue; // final: redeem_final closes it; unreadable: try again next cycle
            }
            if self.dry_run {
                println!(
                    "{}",
                    serde_json::json!({"dry_run": true, "would_write_off": m.to_string()})
                );
                continue;
            }
            let input = match executor::write_off_calldata(&self.provider, self.gate, m).await {
                Ok(i) => i,
                Err(e) => {
                    warn!(market = %m, error = %crate::error_chain(&e), "writeOff refused in simulation");
                    continue;
                }
            };
            if self.own_call(m, "writeOff", input, executor::WRITE_OFF_GAS).await? {
                written += 1;
            }
        }
        Ok(written)
    }

    /// Sends one of the keeper's own calls and waits for it; a failure is logged (the position
    /// is looked at again next cycle).
    pub(super) async fn own_call(
        &mut self,
        market: Address,
        what: &str,
        input: alloy::primitives::Bytes,
        gas: u64,
    ) -> Result<bool> {
        let gate = self.gate;
        let wait = self.resend_after;
        match self.sender().await?.call_and_wait(gate, input, gas, wait).await {
            Ok(r) if r.status() => Ok(true),
            Ok(r) => {
                warn!(%market, tx = %r.transaction_hash, "{what} reverted");
                Ok(false)
            }
            Err(e) => {
                warn!(%market, error = %crate::error_chain(&e), "{what} not confirmed; tried again next cycle");
                let floor = self.pending_nonce_floor();
                self.sender().await?.resync(floor).await?;
                Ok(false)
            }
        }
    }
}
