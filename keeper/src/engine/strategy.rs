//! The strategy: what the model is asked and when. It owns the model, the strategy text, the
//! quote policy,
//! the re-ask interval, how many asks go out at once, and the inference health (a backoff per
//! market and a breaker over the model). It turns books into answers, each quoted against the
//! book the model was shown, and failures into [`Unanswered`] values. It never sends.

use super::{
    collector::Book,
    health::{self, InferenceHealth},
};
use crate::{
    chain::reads::{MarketInfo, MarketState},
    domain::config::QuotePolicy,
    domain::decision::{
        Annotation, Answer, Attestations, BlockRef, Failure, Unanswered, WhyUnanswered,
    },
    inference::{
        attestors::{Outcome, Panel},
        prompt::{strategy_hash, ReadAt},
        Model, Prompt,
    },
};
use alloy::primitives::Address;
use futures::{future::BoxFuture, stream::FuturesUnordered, StreamExt};
use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

pub struct Strategy {
    /// Who answers: shared with the asks in flight, so the strategy stays free while they run.
    model: Arc<Model>,
    text: String,
    policy: QuotePolicy,
    reask_secs: u64,
    /// `--concurrency`: asks in flight at most (also capped by the server's slots).
    concurrency: usize,
    health: InferenceHealth,
    /// On an attested gate: its attestors, asked instead of the model.
    panel: Option<Arc<Panel>>,
}

/// Which markets are asked this cycle, and why the others are not.
#[derive(Debug, Clone, Default)]
pub struct Due {
    pub ask: Vec<MarketInfo>,
    /// Due markets still in their backoff after failed asks.
    pub backing_off: usize,
    /// Due markets held back by the inference breaker.
    pub held: usize,
}

/// One ask's end: an answer, a failure to answer (a shutdown while the model was asked included,
/// so the dropped ask leaves a row), or None for a market found final before its prompt.
pub type Asked = Option<Result<Answer, Unanswered>>;

impl Strategy {
    pub fn new(
        model: Model,
        text: String,
        policy: QuotePolicy,
        reask_secs: u64,
        concurrency: usize,
    ) -> Self {
        let health = InferenceHealth::default();
        Self { model: Arc::new(model), text, policy, reask_secs, concurrency, health, panel: None }
    }

    /// Asks the attestors of an attested gate instead of the model: each answer is then the
    /// set of signed answers they gave ([`Panel::ask`]).
    pub fn set_panel(&mut self, panel: Panel) {
        self.panel = Some(Arc::new(panel));
    }

    pub fn panel(&self) -> Option<&Panel> {
        self.panel.as_deref()
    }

    /// The model asked from the next cycle on.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Asks `model` from the next cycle on (the demo and the tests switch models between
    /// cycles). Asks already in flight keep the model they started with.
    pub fn set_model(&mut self, model: Model) {
        self.model = Arc::new(model);
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn policy(&self) -> QuotePolicy {
        self.policy
    }

    /// A new quote policy for the asks that follow (the demo widens the deadline for one step).
    pub fn set_policy(&mut self, policy: QuotePolicy) {
        self.policy = policy;
    }

    pub fn reask_secs(&self) -> u64 {
        self.reask_secs
    }

    /// The annotation every row answered by the strategy's model carries.
    pub fn note(&self, scenario: Option<&str>) -> Annotation {
        let model = &self.model;
        if self.panel.is_some() {
            // The attestors' own models are named per answer ([`ask_attested`]).
            return Annotation {
                provider: Some(ATTESTORS.to_string()),
                strategy_hash: Some(strategy_hash(&self.text).to_string()),
                scenario: scenario.map(str::to_string),
                ..Annotation::default()
            };
        }
        Annotation {
            provider: Some(model.name().to_string()),
            model: Some(model.model()),
            strategy_hash: Some(strategy_hash(&self.text).to_string()),
            scenario: scenario.map(str::to_string),
            ..Annotation::default()
        }
    }

    /// How many asks may be in flight with `model`: `--concurrency`, capped at the slots the
    /// server says it decodes at once (an ask beyond them only queues at the server, where its
    /// inference timeout runs while it waits). The builtin rules and a replay answer in this
    /// process at once: every ask goes in the first wave, none waits for a slot, and none reads
    /// its book again (issue 37's profile: re-reading the head for each of 968 asks waiting
    /// behind 32 was most of a 1,000-market cycle's ask step).
    pub fn ask_limit(&self) -> usize {
        if self.panel.is_some() {
            // Each attestor bounds its own model; the keeper only holds connections open.
            return self.concurrency.max(1);
        }
        if matches!(*self.model, Model::Builtin | Model::Replay(_)) {
            return usize::MAX;
        }
        self.concurrency.max(1).min(self.model.slots().unwrap_or(usize::MAX))
    }

    /// Of the `open` markets, those due now (chain time `now`): no pending submission, not
    /// decided within the re-ask interval (`last` holds the chain time of each market's latest
    /// decision), and admitted by the inference health at `send_time`, the next block's chain
    /// time.
    pub fn due(
        &mut self,
        open: Vec<MarketInfo>,
        last: &HashMap<Address, u64>,
        pending: &HashSet<Address>,
        now: u64,
        send_time: u64,
    ) -> Due {
        let due: Vec<MarketInfo> = open
            .into_iter()
            .filter(|m| !pending.contains(&m.address))
            .filter(|m| match last.get(&m.address) {
                Some(t) => now.saturating_sub(*t) >= self.reask_secs,
                None => true,
            })
            .collect();
        let admitted = self.health.admit(due, send_time, |m| m.address);
        if admitted.held > 0 {
            match admitted.breaker {
                health::Breaker::Open { until } => info!(
                    held = admitted.held,
                    until, "inference breaker open: no market is asked before chain time {until}"
                ),
                _ => info!(held = admitted.held, "inference breaker probing: one market is asked"),
            }
        }
        Due { ask: admitted.ask, backing_off: admitted.backing_off, held: admitted.held }
    }

    /// The asks of one cycle with `model`, at most [`Strategy::ask_limit`] in flight. The
    /// handle owns what the asks share, so the strategy stays free while they run.
    pub fn asks<'a>(&self, scenario: Option<&str>, cancel: &'a CancellationToken) -> Asks<'a> {
        Asks {
            note: self.note(scenario),
            text: self.text.clone(),
            policy: self.policy,
            limit: self.ask_limit(),
            model: Arc::clone(&self.model),
            panel: self.panel.clone(),
            cancel,
            waiting: Vec::new().into_iter(),
            inflight: FuturesUnordered::new(),
        }
    }

    /// The inference health to save with the record ([`health::HealthState`]).
    pub fn health_state(&self) -> health::HealthState {
        self.health.state()
    }

    /// Takes up the inference health a previous run saved.
    pub fn restore_health(&mut self, saved: health::HealthState) {
        self.health.restore(saved);
    }

    /// An answer arrived for `market` (whatever it says): its backoff is cleared.
    pub fn answered(&mut self, market: Address) {
        self.health.answered(market);
    }

    /// No answer about `u.market`: the market backs off (the breaker opens after enough
    /// failures in a row), timed by `now`, the next block's chain time; the failure to journal,
    /// of the block `head`, under the asks' annotation `note`.
    pub fn unanswered(
        &mut self,
        u: Unanswered,
        head: BlockRef,
        now: u64,
        note: Annotation,
    ) -> Failure {
        // Only the model's own failures count: a failed read or a shutdown says nothing of it.
        let tripped = match u.cause {
            WhyUnanswered::Model | WhyUnanswered::Read => {
                warn!(market = %u.market, error = %u.error, "no answer; nothing submitted");
                (u.cause == WhyUnanswered::Model)
                    .then(|| self.health.failed(u.market, now))
                    .flatten()
            }
            WhyUnanswered::Shutdown => {
                info!(market = %u.market, "stopping: the ask in flight is dropped, with a row");
                None
            }
        };
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
        let mut f = Failure::new(u.market, Some(head), u.error).about(u.prompt_hash, note);
        f.transport = u.detail;
        f
    }
}

/// The asks of one cycle in flight ([`Strategy::asks`]).
///
/// The first `ask_limit` books are sent at once ([`Asks::send`]). Every later one waits for a
/// free slot: [`Asks::waiting`] hands it back to be read again at the chain's newest block
/// once an answer has been handled, and [`Asks::send_one`] sends it then. Its prompt, its
/// `readBlock` and its quote's deadline are of the moment it is sent.
///
/// Each quote's deadline counts from the chain time the next block will carry: on a chain that
/// mines only on demand the last block may be minutes old, and a deadline counted from it
/// would be past before the answer lands. Retries of a slow or rate-limited model stop once
/// the answer could no longer arrive within the quote's life.
pub struct Asks<'a> {
    note: Annotation,
    text: String,
    policy: QuotePolicy,
    limit: usize,
    model: Arc<Model>,
    panel: Option<Arc<Panel>>,
    cancel: &'a CancellationToken,
    waiting: std::vec::IntoIter<MarketState>,
    inflight: FuturesUnordered<BoxFuture<'a, Asked>>,
}

impl<'a> Asks<'a> {
    /// Sends the first wave of `states`, read at `read` (next block at `send_time`); the rest
    /// wait for a slot.
    pub fn send(&mut self, states: Vec<MarketState>, read: BlockRef, send_time: u64) {
        let mut states = states.into_iter();
        for st in states.by_ref().take(self.limit) {
            self.send_one(Book { state: st, read, send_time });
        }
        self.waiting = states.collect::<Vec<_>>().into_iter();
    }

    /// Sends one ask about `book`.
    pub fn send_one(&mut self, book: Book) {
        let (note, text, policy) = (self.note.clone(), self.text.clone(), self.policy);
        let (model, cancel) = (Arc::clone(&self.model), self.cancel);
        match &self.panel {
            Some(panel) => {
                let panel = Arc::clone(panel);
                self.inflight.push(Box::pin(ask_attested(note, text, policy, book, panel, cancel)))
            }
            None => self.inflight.push(Box::pin(ask_one(note, text, policy, book, model, cancel))),
        }
    }

    /// The annotation of every row these asks write, failures included.
    pub fn note(&self) -> Annotation {
        self.note.clone()
    }

    /// The next ask to end, or None once none is in flight.
    pub async fn next(&mut self) -> Option<Asked> {
        self.inflight.next().await
    }

    /// The next market waiting for a slot, to be read again and sent; none once a shutdown
    /// began (the rest are simply not asked).
    pub fn waiting(&mut self) -> Option<MarketState> {
        let st = self.waiting.next()?;
        (!self.cancel.is_cancelled()).then_some(st)
    }
}

/// The off-chain row's error for an ask the keeper stopped waiting for when it was told to stop.
pub const SHUTDOWN_DROPPED: &str = "not answered: the keeper was stopped (SIGTERM or Ctrl-C) \
    while the model was being asked, and dropped the ask; nothing was submitted, and the market \
    is due again after a restart";

/// An ask about `market` dropped by a shutdown: a row saying so.
fn dropped(market: Address, prompt_hash: Option<alloy::primitives::B256>) -> Asked {
    Some(Err(Unanswered {
        market,
        prompt_hash,
        error: SHUTDOWN_DROPPED.to_string(),
        detail: Default::default(),
        cause: WhyUnanswered::Shutdown,
    }))
}

/// One ask: renders the prompt of `book` as read, asks `model`, quotes the answer against the
/// book it was shown with a deadline counted from the book's send time. None when cancelled.
async fn ask_one(
    note: Annotation,
    text: String,
    policy: QuotePolicy,
    book: Book,
    model: Arc<Model>,
    cancel: &CancellationToken,
) -> Asked {
    let Book { state: st, read, send_time } = book;
    let market = st.info.address;
    if st.finalized {
        return None;
    }
    let at = ReadAt { block: read.number, time: read.time };
    let prompt = match Prompt::render(&text, &st, at) {
        Ok(p) => p,
        Err(e) => {
            return Some(Err(Unanswered {
                market,
                prompt_hash: None,
                error: e.to_string(),
                detail: Default::default(),
                cause: WhyUnanswered::Read,
            }))
        }
    };
    let prompt_hash = prompt.hash();
    let until = Instant::now() + Duration::from_secs(policy.ttl_secs);
    let ans = tokio::select! {
        _ = cancel.cancelled() => return dropped(market, Some(prompt_hash)),
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
                attested: None,
            })
        }
        Err(e) => Err(Unanswered {
            market,
            prompt_hash: Some(prompt_hash),
            error: crate::error_chain(&e),
            detail: e.detail(),
            cause: WhyUnanswered::Model,
        }),
    })
}

/// The provider an attested row names: its answers came from the gate's attestors.
pub const ATTESTORS: &str = "attestors";

/// One attested ask: every attestor asked about `book`'s market at its read block
/// ([`Panel::ask`]). With `k` usable answers, the answer submitted carries all of them, the
/// one the gate will show as `raw`, the attested prompt hash, and the keeper's quote (the
/// price it read at the same block plus its slippage; the gate tightens it further to the
/// attested price plus its own) with the deadline the attestors signed. With fewer, no answer:
/// a row naming each attestor left out and why. None when the market is final; a shutdown
/// while the attestors are asked drops the ask, with a row.
async fn ask_attested(
    note: Annotation,
    text: String,
    policy: QuotePolicy,
    book: Book,
    panel: Arc<Panel>,
    cancel: &CancellationToken,
) -> Asked {
    let Book { state: st, read, send_time } = book;
    let market = st.info.address;
    if st.finalized {
        return None;
    }
    let asked = tokio::select! {
        _ = cancel.cancelled() => return dropped(market, None),
        o = panel.ask(market, read.number, send_time) => o,
    };
    let k = panel.threshold();
    let g = match asked {
        Outcome::Ready(g) => g,
        Outcome::Short(g) => {
            let error = format!(
                "not submitted: {} usable attested answer(s) over one read, {k} needed; not \
                 answered: {}",
                g.answers.len(),
                g.missing_line()
            );
            return Some(Err(Unanswered {
                market,
                prompt_hash: g.read().map(|(r, _)| r.prompt_hash),
                error,
                detail: Default::default(),
                cause: WhyUnanswered::Model,
            }));
        }
    };
    let ((signed, deadline), shown) = match (g.read(), g.shown(k)) {
        (Some(r), Some(a)) => (r, a.raw.clone()),
        _ => unreachable!("a ready gathering holds k >= 1 answers"),
    };
    let mut quote = policy.quote(&shown, &st, send_time);
    quote.deadline = deadline;
    let mut note = note;
    let models: Vec<String> = g.answers.iter().map(|a| a.model.clone()).collect();
    let mut named: Vec<&str> = Vec::new();
    for m in &models {
        if !named.contains(&m.as_str()) {
            named.push(m);
        }
    }
    note.model = Some(named.join(", "));
    // The prompt the attestors signed, shown when the keeper renders the same bytes from its
    // own read of the same block (its strategy text the same as theirs).
    let at = ReadAt { block: read.number, time: read.time };
    if let Ok(p) = Prompt::render(&text, &st, at) {
        if p.hash() == signed.prompt_hash {
            note.prompt = Some(p.user.clone());
        } else {
            warn!(%market, attested = %signed.prompt_hash, own = %p.hash(), "the attestors signed another prompt than this keeper renders: its strategy text differs from theirs");
        }
    }
    if !g.missing.is_empty() {
        info!(%market, missing = %g.missing_line(), "submitting k attested answers; some attestors did not answer");
    }
    let attested = Attestations {
        best_bid: signed.best_bid,
        best_ask: signed.best_ask,
        signers: g.answers.iter().map(|a| a.signer).collect(),
        raws: g.answers.iter().map(|a| a.raw.clone()).collect(),
        sigs: g.answers.iter().map(|a| a.signature.clone()).collect(),
        models,
    };
    Some(Ok(Answer {
        market,
        raw: shown,
        prompt_hash: signed.prompt_hash,
        quote,
        note,
        read,
        attested: Some(attested),
    }))
}
