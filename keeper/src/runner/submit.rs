//! Stage 4, submit (executor): each answer signed at the keeper's own nonce, journalled to
//! disk, then sent; the cycle's transactions awaited and their decisions decoded from their own
//! receipts.

use super::*;

impl Keeper {
    /// An answer that was never signed: an off-chain row with the whole cause, asked again
    /// when due.
    fn not_sent(
        &mut self,
        a: Answer,
        cause: &(dyn std::error::Error + 'static),
    ) -> Result<Option<u64>> {
        self.offchain_at(
            a.read,
            a.market,
            Some(a.prompt_hash),
            format!("not sent: {}", crate::error_chain(cause)),
            a.note,
        )?;
        Ok(None)
    }

    /// Executor stage for one answer: signs it at the next nonce, journals it, then sends it.
    /// Returns the submission id when it is in flight (a refusal is an off-chain row). A dry
    /// run prints what the gate would publish instead.
    pub async fn submit_one(&mut self, a: Answer) -> Result<Option<u64>> {
        if self.dry_run {
            let sim = executor::simulate_submit(
                &self.provider,
                self.gate,
                self.keeper_addr,
                a.market,
                &a.raw,
                a.prompt_hash,
                a.read.number,
                &a.quote,
            )
            .await;
            let line = serde_json::json!({
                "dry_run": true,
                "market": a.market.to_checksum(None),
                "raw": a.raw,
                "prompt_hash": a.prompt_hash.to_string(),
                "read_block": a.read.number,
                "quote": {
                    "max_price_paid": a.quote.maxPricePaid.to_string(),
                    "deadline": a.quote.deadline,
                },
                "would_publish_reason": sim.as_ref().ok(),
                "would_revert": sim.as_ref().err().map(|e| crate::error_chain(e)),
            });
            println!("{line}");
            return Ok(None);
        }
        // An answer the chain would refuse as expired is never sent: an off-chain row says so,
        // and the market is asked again when due. (An ABSTAIN or an unparseable answer carries
        // no deadline; the gate publishes it whenever it lands.)
        if a.quote.deadline != 0 {
            if let Ok(head) = follower::head(&self.provider).await {
                let next = follower::next_block_time(&self.provider, &head).await;
                if next > a.quote.deadline {
                    let why = format!(
                        "not sent: expired before it could be sent: the next block's chain time \
                         {next} is past the quote's deadline {} (read at block {}, {} s earlier); \
                         the gate would refuse it (reason 16)",
                        a.quote.deadline,
                        a.read.number,
                        next.saturating_sub(a.read.time)
                    );
                    warn!(market = %a.market, deadline = a.quote.deadline, next, "answer expired before sending; not sent");
                    self.offchain_at(a.read, a.market, Some(a.prompt_hash), why, a.note)?;
                    return Ok(None);
                }
            }
        }
        let fees = match self.fees {
            Some(f) => Ok(f),
            None => executor::current_fees(&self.provider).await,
        };
        let fees = match fees {
            Ok(f) => {
                self.fees = Some(f);
                f
            }
            Err(e) => return self.not_sent(a, &e),
        };
        let input =
            executor::submit_calldata(a.market, &a.raw, a.prompt_hash, a.read.number, &a.quote);
        let gate = self.gate;
        // Gas from the pending state's estimate plus the margin, capped at the worst case of one
        // IOC at the match cap. A call the estimate shows reverting is never signed: it is an
        // off-chain row with the decoded revert, and the market is asked again when due.
        let cap = executor::submit_gas_cap(&a.raw);
        let gas = match executor::gas_for(
            &self.provider,
            "submitVerdict",
            self.keeper_addr,
            gate,
            &input,
            cap,
        )
        .await
        {
            Ok(g) => g,
            Err(e) => {
                warn!(market = %a.market, error = %crate::error_chain(&e), "submission not sent");
                return self.not_sent(a, &e);
            }
        };
        let id = self.journal.next_id();
        for retry in 0..2 {
            let sender = self.sender().await?;
            let nonce = sender.take_nonce();
            let signed = sender.sign(gate, input.clone(), gas, nonce, fees, U256::ZERO).await?;
            let sub = Submission {
                id,
                market: a.market,
                nonce,
                prompt_hash: a.prompt_hash,
                raw: a.raw.clone(),
                quote: QuoteSent {
                    max_price_paid: a.quote.maxPricePaid,
                    deadline: a.quote.deadline,
                },
                gas,
                first: signed.attempt,
                read_block: a.read.number,
                read_time: a.read.time,
                note: a.note.clone(),
            };
            // On disk before it is sent: a crash from here on leaves a pending submission that
            // a restart follows, never a decision the keeper does not know it made.
            self.journal.append(Entry::Submit(sub))?;
            self.last_sent.insert(id, Instant::now());
            let sender = self.sender().await?;
            match sender.broadcast(&signed).await {
                Ok(()) => return Ok(Some(id)),
                // The node may hold it: pending, followed by settle like any other.
                Err(BroadcastError::Transport(e)) => {
                    warn!(market = %a.market, nonce, error = %crate::error_chain(&*e), "send failed in transport; the submission stays pending and is followed");
                    return Ok(Some(id));
                }
                Err(BroadcastError::Refused(r)) => {
                    sender.give_back(nonce);
                    self.journal.append(Entry::Done { id, outcome: Outcome::NotSent, tx: None })?;
                    if r == Refusal::NonceTooLow && retry == 0 {
                        // Our view of the nonce was stale: resynchronise and sign again.
                        let floor = self.pending_nonce_floor();
                        self.sender().await?.resync(floor).await?;
                        continue;
                    }
                    warn!(market = %a.market, nonce, refusal = %r, "node refused the submission; nothing is in flight");
                    self.offchain_at(
                        a.read,
                        a.market,
                        Some(a.prompt_hash),
                        format!("not sent: the node refused it: {r}"),
                        a.note.clone(),
                    )?;
                    if !matches!(r, Refusal::NonceTooLow) {
                        let floor = self.pending_nonce_floor();
                        self.sender().await?.resync(floor).await?;
                    }
                    return Ok(None);
                }
            }
        }
        Ok(None)
    }

    /// Waits up to `resend_after` for the transactions of `ids` to be mined, and returns the
    /// decisions they published, decoded from their own receipts.
    pub async fn await_mined(&mut self, ids: &[u64]) -> Result<Vec<Submitted>> {
        let deadline = Instant::now() + self.resend_after;
        let mut out = Vec::new();
        let mut delay = Duration::from_millis(10);
        let mut left: Vec<journal::Tracked> =
            ids.iter().filter_map(|id| self.journal.get(*id).cloned()).collect();
        let (rpc, gate) = (&self.provider, self.gate);
        while !left.is_empty() {
            // Every pending one polled at once (bounded), latest attempt first.
            let polled: Vec<(journal::Tracked, Result<Option<Mined>>)> = stream::iter(left)
                .map(|t| async move {
                    let mined = super::follow::mined(rpc, gate, &t).await;
                    (t, mined)
                })
                .buffer_unordered(self.concurrency.max(1))
                .collect()
                .await;
            let mut still = Vec::new();
            for (t, r) in polled {
                match r? {
                    Some(Mined::Decision(d)) => {
                        out.push(Submitted { id: t.sub.id, decision: d.id, reason: d.event.reason })
                    }
                    Some(_) => {}
                    None => still.push(t),
                }
            }
            left = still;
            if left.is_empty() || Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_millis(250));
        }
        out.sort_by_key(|s| s.id);
        Ok(out)
    }

    #[cfg(feature = "dev")]
    /// Submits answers one by one, waits for them to be mined, follows the chain so the
    /// record holds them, and returns the decisions they published (the demo's scripted steps).
    pub async fn submit(&mut self, answers: Vec<Answer>) -> Result<Vec<Submitted>> {
        let mut ids = Vec::new();
        self.fees = None;
        for a in answers {
            if let Some(id) = self.submit_one(a).await? {
                ids.push(id);
            }
        }
        let done = self.await_mined(&ids).await?;
        self.follow().await?;
        self.settle_with(false).await?;
        Ok(done)
    }
}
