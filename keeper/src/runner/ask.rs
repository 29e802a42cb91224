//! Stage 3, ask (strategy): the model is asked about every market concurrently; each answer
//! is quoted against the book the model was shown and handed on the moment it arrives. A
//! failure to answer is an off-chain row; a cancelled ask is nothing.

use super::*;

impl Keeper {
    /// The annotation every row answered by `model` carries.
    pub fn note(&self, model: &Model, scenario: Option<&str>) -> Annotation {
        Annotation {
            provider: Some(model.name().to_string()),
            model: Some(model.model()),
            strategy_hash: Some(strategy_hash(&self.strategy_text).to_string()),
            scenario: scenario.map(str::to_string),
            ..Annotation::default()
        }
    }

    /// How many asks may be in flight with `model`: `--concurrency`, capped at the slots the
    /// server says it decodes at once (an ask beyond them only queues at the server, where its
    /// inference timeout runs while it waits).
    pub fn ask_limit(&self, model: &Model) -> usize {
        self.concurrency.max(1).min(model.slots().unwrap_or(usize::MAX))
    }

    /// Asks about every state, at most [`Keeper::ask_limit`] at once; yields each answer (or
    /// failure) as it arrives. A cancelled ask yields nothing: a shutdown is not a failure.
    ///
    /// The first `ask_limit` asks are sent at once, from the books read at `head`. Every later
    /// one waited for a free slot, so when it is sent it reads the chain's newest block again,
    /// and, if the chain moved, its market's book at that block: the prompt, its `readBlock`
    /// and the quote's deadline are always of the moment it is sent.
    ///
    /// Each quote's deadline counts from the chain time the next block will carry
    /// ([`follower::next_block_time`]; `send_time` for the first wave): on a chain that mines
    /// only on demand the last block may be minutes old, and a deadline counted from it would
    /// be past before the answer lands. Retries of a slow or rate-limited model stop once the
    /// answer could no longer arrive within the quote's life.
    pub(super) fn asks<'a>(
        &self,
        states: Vec<MarketState>,
        model: &'a Model,
        head: BlockRef,
        send_time: u64,
        scenario: Option<&str>,
        cancel: &'a CancellationToken,
    ) -> impl futures::Stream<Item = std::result::Result<Answer, Unanswered>> + 'a {
        let note = self.note(model, scenario);
        let strategy = self.strategy_text.clone();
        let policy = self.quote;
        let life = Duration::from_secs(policy.ttl_secs);
        let limit = self.ask_limit(model);
        let provider = self.provider.clone();
        stream::iter(states.into_iter().enumerate())
            .map(move |(i, st)| {
                let (strategy, note, provider) = (strategy.clone(), note.clone(), provider.clone());
                async move {
                    let market = st.info.address;
                    let fresh = if i < limit {
                        Ok((st, head, send_time))
                    } else {
                        tokio::select! {
                            _ = cancel.cancelled() => return None,
                            r = reread(&provider, st, head) => r,
                        }
                    };
                    let (st, read, send_time) = match fresh {
                        Ok(f) => f,
                        Err(e) => {
                            return Some(Err(Unanswered {
                                market,
                                prompt_hash: None,
                                error: format!(
                                    "book read before the ask failed: {}",
                                    crate::error_chain(&e)
                                ),
                                detail: Default::default(),
                                read_failed: true,
                            }))
                        }
                    };
                    if st.finalized {
                        return None;
                    }
                    let at = ReadAt { block: read.number, time: read.time };
                    let prompt = match Prompt::render(&strategy, &st, at) {
                        Ok(p) => p,
                        Err(e) => {
                            return Some(Err(Unanswered {
                                market,
                                prompt_hash: None,
                                error: e.to_string(),
                                detail: Default::default(),
                                read_failed: true,
                            }))
                        }
                    };
                    let prompt_hash = prompt.hash();
                    let until = Instant::now() + life;
                    let ans = tokio::select! {
                        _ = cancel.cancelled() => return None,
                        r = model.ask_until(&prompt, &st, Some(until)) => r,
                    };
                    Some(match ans {
                        Ok(reply) => {
                            let mut note = note;
                            model.annotate(&mut note, &reply);
                            note.prompt = Some(prompt.user.clone());
                            let raw = reply.text;
                            Ok(Answer {
                                market,
                                quote: policy.quote(&raw, &st, send_time),
                                raw,
                                prompt_hash,
                                note,
                                read,
                            })
                        }
                        Err(e) => Err(Unanswered {
                            market,
                            prompt_hash: Some(prompt_hash),
                            error: crate::error_chain(&e),
                            detail: e.detail(),
                            read_failed: false,
                        }),
                    })
                }
            })
            .buffer_unordered(limit)
            .filter_map(futures::future::ready)
    }

    #[cfg(feature = "dev")]
    /// Asks about every state and collects the answers (the demo's scripted steps, which act
    /// between asking and submitting). Failures are off-chain rows.
    pub async fn ask_all(
        &mut self,
        states: Vec<MarketState>,
        model: &Model,
        head: BlockRef,
        scenario: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Vec<Answer>> {
        let send_time = follower::next_block_time(&self.provider, &head).await;
        let results: Vec<_> =
            self.asks(states, model, head, send_time, scenario, cancel).collect().await;
        let mut answers = Vec::new();
        for r in results {
            match r {
                Ok(a) => {
                    self.health.answered(a.market);
                    answers.push(a)
                }
                Err(u) => self.unanswered(head, send_time, model, scenario, u)?,
            }
        }
        // In market order, so a scripted run submits in a fixed order.
        answers.sort_by_key(|a| a.market);
        Ok(answers)
    }

    /// No answer about `u.market`: an off-chain row, and the market backs off (the breaker
    /// opens after enough failures in a row), timed by `now`, the next block's chain time.
    pub(super) fn unanswered(
        &mut self,
        head: BlockRef,
        now: u64,
        model: &Model,
        scenario: Option<&str>,
        u: Unanswered,
    ) -> Result<()> {
        warn!(market = %u.market, error = %u.error, "no answer; nothing submitted");
        // A read that failed before the ask says nothing about the model.
        let tripped = if u.read_failed { None } else { self.health.failed(u.market, now) };
        if let Some(t) = tripped {
            warn!(
                failures = t.failures,
                until = t.until,
                pause_secs = t.cool,
                "inference breaker open: {} asks failed in a row with no answer; no market is \
                 asked for {} s (until chain time {}), then one as a probe",
                t.failures,
                t.cool,
                t.until
            );
        }
        let note = self.note(model, scenario);
        let mut row = self.offchain_row(head, u.market, u.prompt_hash, u.error, note);
        row.transport = u.detail;
        self.journal.append(Entry::Offchain(row))?;
        Ok(())
    }
}

/// `st` as of the chain's newest block, for an ask that waited for a slot: the same read when
/// the chain has not moved since `head`, else the market's book read again at the new head.
/// Returns the state, the block it is of, and the next block's chain time. A node that keeps
/// no state but the newest (anvil with `--prune-history`) refuses a read at a block that was
/// superseded between the two calls; the read is then tried again at the newer head.
async fn reread(
    provider: &DynProvider,
    st: MarketState,
    head: BlockRef,
) -> std::result::Result<(MarketState, BlockRef, u64), RunError> {
    const ATTEMPTS: usize = 3;
    let mut attempt = 0;
    let (st, now) = loop {
        attempt += 1;
        let now = follower::head(provider).await?;
        if now.number == head.number {
            break (st, now);
        }
        match collectors::read_market(provider, &st.info, now.number).await {
            Ok(fresh) => break (fresh, now),
            Err(_) if attempt < ATTEMPTS && follower::head(provider).await?.number > now.number => {
                continue
            }
            Err(e) => return Err(e.into()),
        }
    };
    let send_time = follower::next_block_time(provider, &now).await;
    Ok((st, now, send_time))
}
