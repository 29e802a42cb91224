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

    /// What every ask of one cycle shares: owned, so an ask in flight holds no borrow of the
    /// keeper while the keeper submits the answers that have arrived.
    pub(super) fn ask_context(&self, model: &Model, scenario: Option<&str>) -> AskContext {
        AskContext {
            note: self.note(model, scenario),
            strategy: self.strategy_text.clone(),
            policy: self.quote,
        }
    }

    /// The moment a waiting ask is admitted: the chain's newest block and, if the chain moved
    /// since `head`, its market's book at that block, with the next block's chain time. The
    /// cycle calls it between submissions, never while one is being sent, so the block it
    /// names is not superseded by the keeper's own transactions before it is read. (A node
    /// that keeps no state but the newest, anvil with `--prune-history`, still refuses a block
    /// another sender superseded in between: the read is then tried again at the newer head.)
    pub(super) async fn admit(
        &self,
        st: MarketState,
        head: BlockRef,
    ) -> std::result::Result<(MarketState, BlockRef, u64), Unanswered> {
        const ATTEMPTS: usize = 5;
        let market = st.info.address;
        let fail = |e: RunError| Unanswered {
            market,
            prompt_hash: None,
            error: format!("book read before the ask failed: {}", crate::error_chain(&e)),
            detail: Default::default(),
            read_failed: true,
        };
        let mut attempt = 0;
        let (st, now) = loop {
            attempt += 1;
            let now = follower::head(&self.provider).await.map_err(|e| fail(e.into()))?;
            if now.number == head.number {
                break (st, now);
            }
            match collectors::read_market(&self.provider, &st.info, now.number).await {
                Ok(fresh) => break (fresh, now),
                Err(_) if attempt < ATTEMPTS => continue,
                Err(e) => return Err(fail(e.into())),
            }
        };
        let send_time = follower::next_block_time(&self.provider, &now).await;
        Ok((st, now, send_time))
    }

    /// Asks about every state, at most [`Keeper::ask_limit`] at once, handing each answer to
    /// `sink` the moment it arrives (submitted at once, or collected); a failure to answer is
    /// an off-chain row and a cancelled ask is nothing (a shutdown is not a failure).
    ///
    /// The first `ask_limit` asks are sent at once, from the books read at `head`. Every later
    /// one waited for a free slot, so it is admitted ([`Keeper::admit`]) only once an answer
    /// has been handled: it reads the chain's newest block again, and, if the chain moved, its
    /// market's book at that block. Its prompt, its `readBlock` and its quote's deadline are of
    /// the moment it is sent.
    ///
    /// Each quote's deadline counts from the chain time the next block will carry
    /// ([`follower::next_block_time`]; `send_time` for the first wave): on a chain that mines
    /// only on demand the last block may be minutes old, and a deadline counted from it would
    /// be past before the answer lands. Retries of a slow or rate-limited model stop once the
    /// answer could no longer arrive within the quote's life.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn ask_each(
        &mut self,
        states: Vec<MarketState>,
        model: &Model,
        head: BlockRef,
        send_time: u64,
        scenario: Option<&str>,
        cancel: &CancellationToken,
        sink: &mut Sink,
    ) -> Result<()> {
        let ctx = self.ask_context(model, scenario);
        let limit = self.ask_limit(model);
        let mut waiting = states.into_iter();
        let mut inflight = futures::stream::FuturesUnordered::new();
        for st in waiting.by_ref().take(limit) {
            inflight.push(ask_one(&ctx, st, head, send_time, model, cancel));
        }
        while let Some(r) = inflight.next().await {
            match r {
                Some(Ok(a)) => {
                    self.health.answered(a.market);
                    match sink {
                        Sink::Submit(ids) => {
                            if let Some(id) = self.submit_one(a).await? {
                                ids.push(id);
                            }
                        }
                        Sink::Collect(answers) => answers.push(a),
                    }
                }
                Some(Err(u)) => self.unanswered(head, send_time, model, scenario, u)?,
                None => {}
            }
            if let Some(st) = waiting.next() {
                if cancel.is_cancelled() {
                    continue;
                }
                match self.admit(st, head).await {
                    Ok((st, read, t)) => inflight.push(ask_one(&ctx, st, read, t, model, cancel)),
                    Err(u) => self.unanswered(head, send_time, model, scenario, u)?,
                }
            }
        }
        Ok(())
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
        let mut sink = Sink::Collect(Vec::new());
        self.ask_each(states, model, head, send_time, scenario, cancel, &mut sink).await?;
        let Sink::Collect(mut answers) = sink else { unreachable!("collected above") };
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

/// Where [`Keeper::ask_each`] hands each answer.
pub(super) enum Sink {
    /// Submitted the moment it arrives; the submissions' journal ids.
    Submit(Vec<u64>),
    /// Kept, to be submitted later (the demo's scripted steps).
    #[cfg_attr(
        not(feature = "dev"),
        expect(dead_code, reason = "only the demo's scripted steps collect")
    )]
    Collect(Vec<Answer>),
}

/// What the asks of one cycle share ([`Keeper::ask_context`]).
#[derive(Debug, Clone)]
pub(super) struct AskContext {
    note: Annotation,
    strategy: String,
    policy: QuotePolicy,
}

/// One ask: renders `st`'s prompt as read at `read`, asks `model`, quotes the answer against
/// the book it was shown with a deadline counted from `send_time`. None when cancelled.
async fn ask_one(
    ctx: &AskContext,
    st: MarketState,
    read: BlockRef,
    send_time: u64,
    model: &Model,
    cancel: &CancellationToken,
) -> Option<std::result::Result<Answer, Unanswered>> {
    let market = st.info.address;
    if st.finalized {
        return None;
    }
    let at = ReadAt { block: read.number, time: read.time };
    let prompt = match Prompt::render(&ctx.strategy, &st, at) {
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
    let until = Instant::now() + Duration::from_secs(ctx.policy.ttl_secs);
    let ans = tokio::select! {
        _ = cancel.cancelled() => return None,
        r = model.ask_until(&prompt, &st, Some(until)) => r,
    };
    Some(match ans {
        Ok(reply) => {
            let mut note = ctx.note.clone();
            model.annotate(&mut note, &reply);
            note.prompt = Some(prompt.user.clone());
            let raw = reply.text;
            Ok(Answer {
                market,
                quote: ctx.policy.quote(&raw, &st, send_time),
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
