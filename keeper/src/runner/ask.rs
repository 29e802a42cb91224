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

    /// Asks about every state concurrently; yields each answer (or failure) as it arrives. A
    /// cancelled ask yields nothing: a shutdown is not a failure.
    ///
    /// Each quote's deadline counts from `send_time`, the chain time the next block will carry
    /// ([`follower::next_block_time`]): on a chain that mines only on demand the last block may
    /// be minutes old, and a deadline counted from it would be past before the answer lands.
    /// Retries of a slow or rate-limited model stop once the answer could no longer arrive
    /// within the quote's life.
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
        stream::iter(states)
            .map(move |st| {
                let (strategy, note) = (strategy.clone(), note.clone());
                async move {
                    let prompt = Prompt::render(&strategy, &st, head.time);
                    let prompt_hash = prompt.hash();
                    let market = st.info.address;
                    let until = Instant::now() + life;
                    let ans = tokio::select! {
                        _ = cancel.cancelled() => return None,
                        r = model.ask_until(&prompt, &st, Some(until)) => r,
                    };
                    Some(match ans {
                        Ok(reply) => {
                            let mut note = note;
                            model.annotate(&mut note, &reply);
                            let raw = reply.text;
                            Ok(Answer {
                                market,
                                quote: policy.quote(&raw, &st, send_time),
                                raw,
                                prompt_hash,
                                note,
                                read: head,
                            })
                        }
                        Err(e) => Err(Unanswered {
                            market,
                            prompt_hash,
                            error: crate::error_chain(&e),
                            detail: e.detail(),
                        }),
                    })
                }
            })
            .buffer_unordered(self.concurrency.max(1))
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
        if let Some(t) = self.health.failed(u.market, now) {
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
        let mut row = self.offchain_row(head, u.market, Some(u.prompt_hash), u.error, note);
        row.transport = u.detail;
        self.journal.append(Entry::Offchain(row))?;
        Ok(())
    }
}
