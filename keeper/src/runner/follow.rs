//! Stage 1, follow (collector): one follower step (reorg check, scan of confirmed blocks),
//! the record re-derived from it, and the journal's pending submissions settled against the
//! chain: confirmed, re-sent at the same nonce with bumped fees, replaced, reverted or reopened.

use super::*;

impl Keeper {
    /// Collector stage: follows the chain one step (reorg check, scan of confirmed blocks),
    /// re-derives the record, and settles pending submissions against it.
    pub async fn follow(&mut self) -> Result<follower::Step> {
        let step = self.follower.step(&self.provider).await?;
        if let Some(fork) = step.rewound_to {
            warn!(
                fork_block = fork,
                "chain reorganised: blocks after {fork} were replaced; rescanned"
            );
            self.times.retain(|&b, _| b <= fork);
        }
        if self.facts.is_none() {
            self.facts = Some(
                collectors::gate_facts(
                    &self.provider,
                    self.gate,
                    self.chain_id,
                    self.from_block,
                    step.head.number,
                    self.follower.log_range,
                )
                .await?,
            );
        }
        let logs = self.follower.gate_logs();
        let known = std::mem::take(&mut self.times);
        self.times = collectors::block_times(&self.provider, logs, known).await?;
        let labels = self.facts.as_ref().map_or(&[][..], |f| &f.labels[..]);
        self.record = feed::decode_logs(logs, self.chain_id, self.gate, labels, &self.times)?;
        self.last_step = step.clone();
        Ok(step)
    }

    /// Settles the journal against the chain as of the last follow step:
    /// - a submission whose `Decision` is in a confirmed block is confirmed;
    /// - one whose confirmed decision a reorg removed is reopened, and abandoned if the node no
    ///   longer knows any of its transactions (its market is then due again);
    /// - one mined and reverted is an off-chain row;
    /// - one whose nonce another transaction used (as of the confirmed block) is replaced;
    /// - one still unmined after `resend_after`, or unknown to the node, is re-sent at the same
    ///   nonce with bumped fees; a nonce gap below pending submissions is filled.
    pub async fn settle(&mut self) -> Result<Settled> {
        self.settle_with(true).await
    }

    /// [`Keeper::settle`]; with `resend` false, stuck transactions are left as they are (the end
    /// of a cycle that has just waited for its own transactions re-sends nothing: the next
    /// cycle's settle does, so one re-send happens per cycle at most).
    pub(super) async fn settle_with(&mut self, resend: bool) -> Result<Settled> {
        let mut out = Settled::default();
        if self.dry_run || self.signer.is_none() {
            return Ok(out);
        }
        let step = self.last_step.clone();
        let recorded = self.record.txs();
        if step.rewound_to.is_some() {
            let gone: Vec<u64> = self
                .journal
                .submissions()
                .filter(|t| matches!(t.outcome, Some((Outcome::Confirmed, _))))
                .filter(|t| !t.attempts.iter().any(|a| recorded.contains(&a.tx)))
                .map(|t| t.sub.id)
                .collect();
            for id in gone {
                self.journal.append(Entry::Reopened { id })?;
                self.last_sent.remove(&id);
                out.reorged += 1;
            }
        }
        let pending: Vec<journal::Tracked> = self.journal.pending().cloned().collect();
        if pending.is_empty() {
            return Ok(out);
        }
        // Nonces used as of the newest confirmed block: a submission whose nonce another
        // transaction used there is provably replaced. A node that keeps no state that far back
        // (a pruned one) cannot say: nothing is declared replaced until it can.
        let nonce_used_at_safe = match self.sender().await?.nonce_at(step.safe.number).await {
            Ok(n) => n,
            Err(e) => {
                tracing::debug!(error = %crate::error_chain(&e), "nonce at the confirmed block unavailable");
                0
            }
        };
        // Receipts of every pending submission not yet in the record, polled at once (bounded).
        let (rpc, gate, seen) = (&self.provider, self.gate, &recorded);
        let polled: Vec<(journal::Tracked, Result<Option<Mined>>)> = stream::iter(pending)
            .map(|t| async move {
                if t.attempts.iter().any(|a| seen.contains(&a.tx)) {
                    return (t, Ok(None));
                }
                let mined = mined(rpc, gate, &t).await;
                (t, mined)
            })
            .buffered(self.concurrency.max(1))
            .collect()
            .await;
        let mut stuck = Vec::new();
        for (t, mined) in polled {
            let mined = mined?;
            let id = t.sub.id;
            if let Some(a) = t.attempts.iter().find(|a| recorded.contains(&a.tx)) {
                self.journal.append(Entry::Done {
                    id,
                    outcome: Outcome::Confirmed,
                    tx: Some(a.tx),
                })?;
                self.last_sent.remove(&id);
                out.confirmed += 1;
                continue;
            }
            match mined {
                Some(m) if m.block() > step.safe.number => out.awaiting_confirmations += 1,
                Some(Mined::Reverted { tx, block, gas_used }) => {
                    let why = self.revert_reason(&t.sub, block, gas_used).await;
                    warn!(market = %t.sub.market, %tx, block, gas_used, revert = %why, "submission reverted on chain");
                    self.offchain(
                        t.sub.market,
                        Some(t.sub.prompt_hash),
                        format!("tx {tx} (nonce {}) reverted in block {block}: {why}", t.sub.nonce),
                        t.sub.note.clone(),
                    )?;
                    self.journal.append(Entry::Done {
                        id,
                        outcome: Outcome::Reverted,
                        tx: Some(tx),
                    })?;
                    out.reverted += 1;
                }
                // Mined in a confirmed block but its log is not in the record yet (the scan
                // stops at the safe block read before this receipt): confirmed next step.
                Some(_) => out.awaiting_confirmations += 1,
                None if nonce_used_at_safe > t.sub.nonce => {
                    // Re-read once: a receipt that appeared since is ours after all.
                    let mut ours = false;
                    for a in &t.attempts {
                        ours |= executor::receipt(&self.provider, a.tx).await?.is_some();
                    }
                    if ours {
                        out.awaiting_confirmations += 1;
                        continue;
                    }
                    warn!(market = %t.sub.market, nonce = t.sub.nonce, "submission replaced: another transaction used its nonce");
                    self.offchain(
                        t.sub.market,
                        Some(t.sub.prompt_hash),
                        format!(
                            "not published: nonce {} was used by a transaction that is not this submission's",
                            t.sub.nonce
                        ),
                        t.sub.note.clone(),
                    )?;
                    self.journal.append(Entry::Done {
                        id,
                        outcome: Outcome::Replaced,
                        tx: None,
                    })?;
                    out.replaced += 1;
                }
                None => stuck.push(t),
            }
        }
        for t in stuck {
            let id = t.sub.id;
            let known = {
                let mut k = false;
                for a in &t.attempts {
                    k |= executor::known(&self.provider, a.tx).await?;
                }
                k
            };
            let reopened = t.reopened;
            if reopened && !known {
                // Its decision left the chain with a reorg and no node holds it: the market is
                // asked again with a fresh read, and its nonce is free for that.
                self.journal.append(Entry::Done { id, outcome: Outcome::NotSent, tx: None })?;
                continue;
            }
            if !resend {
                continue;
            }
            let due = match self.last_sent.get(&id) {
                Some(at) => at.elapsed() >= self.resend_after || !known,
                None => true,
            };
            if due && self.resend(&t).await? {
                out.resent += 1;
            }
        }
        out.gaps_filled = self.fill_gaps().await?;
        if out.reorged > 0 {
            let floor = self.pending_nonce_floor();
            self.sender().await?.resync(floor).await?;
        }
        Ok(out)
    }

    /// Re-signs a pending submission at its own nonce with bumped fees and sends it; the new
    /// transaction is journalled first. Returns whether it was sent.
    pub(super) async fn resend(&mut self, t: &journal::Tracked) -> Result<bool> {
        let quote =
            Quote { maxPricePaid: t.sub.quote.max_price_paid, deadline: t.sub.quote.deadline };
        let input = executor::submit_calldata(
            t.sub.market,
            &t.sub.raw,
            t.sub.prompt_hash,
            t.sub.read_block,
            &quote,
        );
        let gate = self.gate;
        let signed = self
            .sender()
            .await?
            .sign_replacement(gate, input, t.sub.gas, t.sub.nonce, t.latest())
            .await?;
        self.journal.append(Entry::Resend { id: t.sub.id, attempt: signed.attempt })?;
        self.last_sent.insert(t.sub.id, Instant::now());
        match self.sender().await?.broadcast(&signed).await {
            Ok(()) => {
                info!(market = %t.sub.market, nonce = t.sub.nonce, tx = %signed.attempt.tx, max_fee = signed.attempt.max_fee_per_gas, "re-sent at the same nonce with bumped fees");
                Ok(true)
            }
            Err(BroadcastError::Refused(r)) => {
                // NonceTooLow: an attempt was mined (or another tx used the nonce): settled
                // next step. Underpriced: bumped again next time. Either way, still pending.
                warn!(market = %t.sub.market, nonce = t.sub.nonce, refusal = %r, "replacement refused");
                Ok(false)
            }
            Err(BroadcastError::Transport(e)) => Err(ExecError::Rpc(e).into()),
        }
    }

    /// Fills nonce gaps: when the node's pending nonce is below a pending submission's and no
    /// submission uses it, a transaction the node dropped (or a refused send) left a hole that
    /// holds every later transaction back.
    pub(super) async fn fill_gaps(&mut self) -> Result<usize> {
        let mut filled = 0;
        loop {
            let nonces: HashSet<u64> = self.journal.pending().map(|t| t.sub.nonce).collect();
            let Some(&top) = nonces.iter().max() else { return Ok(filled) };
            let sender = self.sender().await?;
            let next = sender.pending_nonce().await?;
            if next >= top || nonces.contains(&next) || filled >= nonces.len() {
                return Ok(filled);
            }
            let fees = executor::current_fees(sender.rpc()).await?;
            let tx = sender.fill_gap(next, fees).await?;
            warn!(nonce = next, %tx, "filled a nonce gap below pending submissions");
            filled += 1;
        }
    }

    /// Why a submission mined in `block` reverted: replayed with its own gas limit on that
    /// block's state, decoded ([`executor::replay_revert`]).
    pub(super) async fn revert_reason(
        &self,
        sub: &Submission,
        block: u64,
        gas_used: u64,
    ) -> String {
        let quote = Quote { maxPricePaid: sub.quote.max_price_paid, deadline: sub.quote.deadline };
        let input = executor::submit_calldata(
            sub.market,
            &sub.raw,
            sub.prompt_hash,
            sub.read_block,
            &quote,
        );
        executor::replay_revert(
            &self.provider,
            self.keeper_addr,
            self.gate,
            &input,
            sub.gas,
            block,
            gas_used,
        )
        .await
    }
}

/// The receipt of whichever of a submission's transactions was mined (latest attempt first),
/// decoded; `None` while none is.
pub(super) async fn mined(
    rpc: &DynProvider,
    gate: Address,
    t: &journal::Tracked,
) -> Result<Option<Mined>> {
    for a in t.attempts.iter().rev() {
        if let Some(r) = executor::receipt(rpc, a.tx).await? {
            return Ok(Some(executor::decode_receipt(gate, &r)));
        }
    }
    Ok(None)
}
