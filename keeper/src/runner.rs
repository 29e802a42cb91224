//! The bot. One cycle: discover the factory's markets, read every open market whose resolver the
//! gate trusts concurrently, render each prompt, ask the model, submit the raw answers with the
//! keeper's quote, wait for receipts, redeem final markets, write off positions whose market
//! never settled, and re-write the record. State that matters (when a market was last asked,
//! which positions are open) is re-derived from chain on every start, never from local files.

use crate::{
    bindings::IRiskGate::Quote,
    chain,
    cli::RunConfig,
    collectors::{self, MarketInfo, MarketState},
    executor,
    quote::QuotePolicy,
    recorder::{
        self,
        feed::{self, Annotation, ChainRecord, GateFacts, OffchainRow, RowNote},
        FEED_FILE,
    },
    strategy::{prompt::strategy_hash, Model, Prompt},
};
use alloy::{
    primitives::{Address, TxHash, B256},
    providers::DynProvider,
    rpc::types::Log,
    sol_types::SolEvent,
};
use futures::{stream, StreamExt};
use std::{
    collections::{BTreeMap, HashMap, HashSet},
    path::{Path, PathBuf},
    time::Duration,
};
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Chain(#[from] chain::ChainError),
    #[error(transparent)]
    Collect(#[from] collectors::CollectError),
    #[error(transparent)]
    Record(#[from] recorder::RecordError),
    #[error(transparent)]
    Inference(#[from] crate::strategy::InferenceError),
    #[error(transparent)]
    Exec(#[from] executor::ExecError),
    #[error("the node stayed unreachable for {0} attempts; giving up (is the RPC up?)")]
    NodeGone(u32),
}

pub type Result<T> = std::result::Result<T, RunError>;

/// A model answer ready to submit, with the keeper's quote for it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub market: Address,
    pub raw: String,
    pub prompt_hash: B256,
    pub quote: Quote,
    pub note: Annotation,
}

/// A market the model gave no answer about (inference failed): an off-chain row.
#[derive(Debug, Clone)]
struct Unanswered {
    market: Address,
    prompt_hash: B256,
    /// The failure with its whole cause chain, on one line.
    error: String,
    detail: feed::TransportDetail,
}

/// One submission that reached the chain: its `Decision`, decoded from the transaction's own
/// receipt, so the row keeps the identity it had from the read.
#[derive(Debug, Clone)]
pub struct Submitted {
    pub tx: TxHash,
    pub log_index: u64,
    pub reason: u8,
}

/// What one cycle did.
#[derive(Debug, Default, Clone)]
pub struct CycleReport {
    pub markets_known: usize,
    pub asked: usize,
    pub submitted: usize,
    pub offchain_failures: usize,
    pub redeemed: usize,
    pub written_off: usize,
    pub head: u64,
}

/// The keeper's working state.
pub struct Keeper {
    pub provider: DynProvider,
    pub chain_id: u64,
    pub gate: Address,
    pub factory: Address,
    pub keeper_addr: Address,
    pub from_block: u64,
    pub log_range: u64,
    pub concurrency: usize,
    pub reask_secs: u64,
    pub quote: QuotePolicy,
    pub dry_run: bool,
    pub strategy_text: String,
    pub results: Option<PathBuf>,
    pub receipt_timeout: Duration,
    markets: Vec<MarketInfo>,
    markets_scanned_to: Option<u64>,
    gate_logs: Vec<Log>,
    gate_scanned_to: Option<u64>,
    final_markets: HashSet<Address>,
    notes: BTreeMap<(String, u64), RowNote>,
    offchain: Vec<OffchainRow>,
    facts: Option<GateFacts>,
    pub record: ChainRecord,
}

impl Keeper {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        provider: DynProvider,
        chain_id: u64,
        gate: Address,
        factory: Address,
        keeper_addr: Address,
        from_block: u64,
        results: Option<PathBuf>,
    ) -> Self {
        Self {
            provider,
            chain_id,
            gate,
            factory,
            keeper_addr,
            from_block,
            log_range: 5_000,
            concurrency: 32,
            reask_secs: 3_600,
            quote: QuotePolicy::default(),
            dry_run: false,
            strategy_text: String::new(),
            results,
            receipt_timeout: Duration::from_secs(60),
            markets: Vec::new(),
            markets_scanned_to: None,
            gate_logs: Vec::new(),
            gate_scanned_to: None,
            final_markets: HashSet::new(),
            notes: BTreeMap::new(),
            offchain: Vec::new(),
            facts: None,
            record: ChainRecord::default(),
        }
    }

    /// Loads notes (annotations, whole answers) and off-chain rows from an existing feed, so a
    /// restart neither loses nor duplicates them (chain rows themselves always come from chain).
    pub fn load_existing_feed(&mut self) -> Result<()> {
        if let Some(dir) = &self.results {
            let rows = feed::read_feed_for(&dir.join(FEED_FILE), self.chain_id, self.gate)?;
            let (notes, off) = feed::split_feed(&rows);
            self.notes = notes;
            self.offchain = off;
        }
        Ok(())
    }

    pub fn markets(&self) -> &[MarketInfo] {
        &self.markets
    }

    /// Brings the market list and the gate's logs up to `head`.
    pub async fn sync(&mut self, head: u64) -> Result<()> {
        let from = self.markets_scanned_to.map_or(self.from_block, |b| b + 1);
        if from <= head {
            let found = collectors::discover_markets(
                &self.provider,
                self.factory,
                from,
                head,
                self.log_range,
            )
            .await?;
            self.markets.extend(found);
            self.markets_scanned_to = Some(head);
        }
        let from = self.gate_scanned_to.map_or(self.from_block, |b| b + 1);
        if from <= head {
            let logs =
                feed::gate_logs(&self.provider, self.gate, from, head, self.log_range).await?;
            self.gate_logs.extend(logs);
            self.gate_scanned_to = Some(head);
        }
        if self.facts.is_none() {
            self.facts = Some(
                feed::gate_facts(
                    &self.provider,
                    self.gate,
                    self.chain_id,
                    self.from_block,
                    head,
                    self.log_range,
                )
                .await?,
            );
        }
        // Times already attached to decoded rows are reused; only new blocks are fetched.
        let known = self.record.decisions.iter().map(|d| (d.block, d.time)).collect();
        let times = feed::block_times(&self.provider, &self.gate_logs, known).await?;
        let labels = self.facts.as_ref().map_or(&[][..], |f| &f.labels[..]);
        self.record =
            feed::decode_logs(&self.gate_logs, self.chain_id, self.gate, labels, &times)?;
        Ok(())
    }

    /// Chain time of the latest decision per market, from the gate's own events.
    pub fn last_decision_times(&self) -> HashMap<String, u64> {
        let mut out = HashMap::new();
        for d in &self.record.decisions {
            let e = out.entry(d.market.clone()).or_insert(0);
            *e = (*e).max(d.time);
        }
        out
    }

    /// Whether the gate trusts `market`'s resolver: the predicate of its `isTrustedResolver`,
    /// applied to the gate's immutable `trustedResolvers()` read once with its facts, so that
    /// markets naming any number of distinct resolvers cost no RPC call each. False until the
    /// facts are read by `sync`.
    pub fn resolver_trusted(&self, market: &MarketInfo) -> bool {
        self.facts.as_ref().is_some_and(|f| f.trusted_resolvers.contains(&market.resolver))
    }

    /// Markets worth asking about now: open (not known final, not expired), resolved by a
    /// resolver the gate trusts (any other is refused by rule 12 whatever the model says),
    /// within the gate's horizon (rule 13), and due for a new ask.
    pub fn due_markets(&self, now_sec: u64) -> Vec<MarketInfo> {
        let last = self.last_decision_times();
        let horizon = self.facts.as_ref().map_or(u64::MAX, |f| u64::from(f.bounds.maxHorizon));
        self.markets
            .iter()
            .filter(|m| !self.final_markets.contains(&m.address) && m.expiry > now_sec)
            .filter(|m| self.resolver_trusted(m) && m.expiry - now_sec <= horizon)
            .filter(|m| match last.get(&m.address.to_checksum(None)) {
                Some(t) => now_sec.saturating_sub(*t) >= self.reask_secs,
                None => true,
            })
            .cloned()
            .collect()
    }

    /// The annotation every row answered by `provider` carries.
    pub fn note(&self, provider: &Model, scenario: Option<&str>) -> Annotation {
        Annotation {
            provider: Some(provider.name().to_string()),
            model: Some(provider.model()),
            strategy_hash: Some(strategy_hash(&self.strategy_text).to_string()),
            scenario: scenario.map(str::to_string),
        }
    }

    fn offchain_row(
        &self,
        head: (u64, u64),
        market: Address,
        prompt_hash: Option<B256>,
        error: String,
        note: Annotation,
    ) -> OffchainRow {
        OffchainRow {
            chain_id: self.chain_id,
            gate: self.gate.to_checksum(None),
            block: head.0,
            time: head.1,
            market: market.to_checksum(None),
            prompt_hash: prompt_hash.map(|h| h.to_string()),
            error,
            transport: feed::TransportDetail::default(),
            note,
        }
    }

    /// Asks the model about every state concurrently and quotes each answer against the book
    /// the model was shown, as of the read at `head`. Failures become off-chain rows.
    pub async fn ask_all(
        &mut self,
        states: Vec<MarketState>,
        provider: &Model,
        head: (u64, u64),
        scenario: Option<&str>,
        cancel: &CancellationToken,
    ) -> Vec<Answer> {
        let note = self.note(provider, scenario);
        let strategy = self.strategy_text.clone();
        let policy = self.quote;
        let results: Vec<std::result::Result<Answer, Unanswered>> = stream::iter(states)
            .map(|st| {
                let (strategy, note) = (&strategy, &note);
                async move {
                    let prompt = Prompt::render(strategy, &st, head.1);
                    let prompt_hash = prompt.hash();
                    let market = st.info.address;
                    let ans = tokio::select! {
                        _ = cancel.cancelled() => Err((
                            "cancelled before an answer".to_string(),
                            feed::TransportDetail::default(),
                        )),
                        r = provider.ask(&prompt, &st) => {
                            r.map_err(|e| (crate::error_chain(&e), e.detail()))
                        }
                    };
                    match ans {
                        Ok(raw) => Ok(Answer {
                            market,
                            quote: policy.quote(&raw, &st, head.1),
                            raw,
                            prompt_hash,
                            note: note.clone(),
                        }),
                        Err((error, detail)) => {
                            Err(Unanswered { market, prompt_hash, error, detail })
                        }
                    }
                }
            })
            .buffered(self.concurrency)
            .collect()
            .await;
        let mut answers = Vec::new();
        for r in results {
            match r {
                Ok(a) => answers.push(a),
                Err(u) => {
                    eprintln!("keeper: market {}: {}; nothing submitted", u.market, u.error);
                    let mut row = self.offchain_row(
                        head,
                        u.market,
                        Some(u.prompt_hash),
                        u.error,
                        note.clone(),
                    );
                    row.transport = u.detail;
                    self.offchain.push(row);
                }
            }
        }
        answers
    }

    /// Submits answers (all sent first, then all receipts awaited). Returns the decisions the
    /// submissions published, decoded from their receipts. A failure is an off-chain row; it
    /// never stops the others.
    pub async fn submit(&mut self, answers: Vec<Answer>, head: (u64, u64)) -> Vec<Submitted> {
        if answers.is_empty() {
            return Vec::new();
        }
        if self.dry_run {
            for a in &answers {
                let sim = executor::simulate_submit(
                    &self.provider,
                    self.gate,
                    self.keeper_addr,
                    a.market,
                    &a.raw,
                    a.prompt_hash,
                    &a.quote,
                )
                .await;
                let line = serde_json::json!({
                    "dry_run": true,
                    "market": a.market.to_checksum(None),
                    "raw": a.raw,
                    "prompt_hash": a.prompt_hash.to_string(),
                    "quote": {
                        "max_price_paid": a.quote.maxPricePaid.to_string(),
                        "deadline": a.quote.deadline,
                    },
                    "would_publish_reason": sim.as_ref().ok(),
                    "would_revert": sim.as_ref().err().map(|e| e.to_string()),
                });
                println!("{line}");
            }
            return Vec::new();
        }
        let fees = match executor::current_fees(&self.provider).await {
            Ok(f) => f,
            Err(e) => {
                for a in answers {
                    let row = self.offchain_row(
                        head,
                        a.market,
                        Some(a.prompt_hash),
                        format!("not sent: {e}"),
                        a.note,
                    );
                    self.offchain.push(row);
                }
                return Vec::new();
            }
        };
        let mut sent = Vec::new();
        for a in answers {
            let send = executor::send_submit(
                &self.provider,
                self.gate,
                a.market,
                &a.raw,
                a.prompt_hash,
                &a.quote,
                fees,
            );
            match send.await {
                Ok(tx) => sent.push((tx, a)),
                Err(e) => {
                    eprintln!("keeper: market {}: {e}", a.market);
                    let row = self.offchain_row(
                        head,
                        a.market,
                        Some(a.prompt_hash),
                        e.to_string(),
                        a.note,
                    );
                    self.offchain.push(row);
                }
            }
        }
        let provider = self.provider.clone();
        let timeout = self.receipt_timeout;
        let receipts: Vec<_> = stream::iter(sent)
            .map(|(tx, a)| {
                let provider = provider.clone();
                async move { (tx, a, executor::wait_receipt(&provider, tx, timeout).await) }
            })
            .buffered(self.concurrency.max(8))
            .collect()
            .await;
        let mut ok = Vec::new();
        for (tx, a, r) in receipts {
            match r {
                Ok(rcpt) if rcpt.status() => {
                    let decision = rcpt.inner.logs().iter().find_map(|l| {
                        let ev = crate::bindings::IRiskGate::Decision::decode_log(&l.inner).ok()?;
                        Some(Submitted {
                            tx,
                            log_index: l.log_index.unwrap_or_default(),
                            reason: ev.data.reason,
                        })
                    });
                    if let Some(d) = decision {
                        let note = RowNote { note: a.note, raw: Some(a.raw) };
                        self.notes.insert((tx.to_string(), d.log_index), note);
                        ok.push(d);
                    }
                }
                Ok(_) => {
                    let why = executor::simulate_submit(
                        &self.provider,
                        self.gate,
                        self.keeper_addr,
                        a.market,
                        &a.raw,
                        a.prompt_hash,
                        &a.quote,
                    )
                    .await
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "reverted on chain".to_string());
                    let row = self.offchain_row(
                        head,
                        a.market,
                        Some(a.prompt_hash),
                        format!("tx {tx} reverted: {why}"),
                        a.note,
                    );
                    self.offchain.push(row);
                }
                Err(e) => {
                    let row = self.offchain_row(
                        head,
                        a.market,
                        Some(a.prompt_hash),
                        format!("tx {tx}: {e}"),
                        a.note,
                    );
                    self.offchain.push(row);
                }
            }
        }
        ok
    }

    /// Redeems every open position whose market is final. Returns how many were redeemed.
    pub async fn redeem_final(&mut self) -> usize {
        // Markets where the gate bought something that no `Settled` event has closed yet.
        let mut open: Vec<Address> = Vec::new();
        for d in &self.record.decisions {
            if d.filled != "0" && d.settlement.is_none() {
                if let Ok(a) = d.market.parse::<Address>() {
                    if !open.contains(&a) {
                        open.push(a);
                    }
                }
            }
        }
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
            match executor::send_redeem(&self.provider, self.gate, m).await {
                Ok(tx) => {
                    if executor::wait_receipt(&self.provider, tx, self.receipt_timeout)
                        .await
                        .is_ok()
                    {
                        redeemed += 1;
                    }
                }
                Err(e) => eprintln!("keeper: redeem {m}: {e}"),
            }
        }
        redeemed
    }

    /// Writes off the gate's positions whose market is still not final at `expiry +
    /// writeOffGrace` as of chain time `now_sec`, freeing their slots (a later resolution is
    /// still redeemed by `redeem_final`). Returns how many were written off.
    pub async fn write_off_stale(&mut self, now_sec: u64) -> usize {
        let Some(grace) = self.facts.as_ref().map(|f| u64::from(f.bounds.writeOffGrace)) else {
            return 0;
        };
        let mut stale: Vec<Address> = Vec::new();
        for d in &self.record.decisions {
            if d.filled == "0" || d.settlement.is_some() || d.write_off.is_some() {
                continue;
            }
            let Ok(market) = d.market.parse::<Address>() else { continue };
            let Some(info) = self.markets.iter().find(|m| m.address == market) else { continue };
            // Strictly after: the next block's time is at least `now_sec + 1`, and the gate
            // wants `block.timestamp > expiry + writeOffGrace`.
            if now_sec >= info.expiry.saturating_add(grace) && !stale.contains(&market) {
                stale.push(market);
            }
        }
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
            match executor::send_write_off(&self.provider, self.gate, m).await {
                Ok(tx) => {
                    match executor::wait_receipt(&self.provider, tx, self.receipt_timeout).await {
                        Ok(r) if r.status() => written += 1,
                        Ok(_) => eprintln!("keeper: writeOff {m}: tx {tx} reverted"),
                        Err(e) => eprintln!("keeper: writeOff {m}: {e}"),
                    }
                }
                Err(e) => eprintln!("keeper: writeOff {m}: {e}"),
            }
        }
        written
    }

    /// Reads markets, dropping final ones (remembered) and recording read failures.
    pub async fn read_open(&mut self, due: &[MarketInfo], head: (u64, u64)) -> Vec<MarketState> {
        let reads = collectors::read_markets(&self.provider, due, self.concurrency).await;
        let mut states = Vec::new();
        for (info, r) in reads {
            match r {
                Ok(st) if st.finalized => {
                    self.final_markets.insert(info.address);
                }
                Ok(st) => states.push(st),
                Err(e) => {
                    let e = crate::error_chain(&e);
                    eprintln!("keeper: {e}; skipping this market this cycle");
                    let row = self.offchain_row(
                        head,
                        info.address,
                        None,
                        format!("book read failed: {e}"),
                        Annotation::default(),
                    );
                    self.offchain.push(row);
                }
            }
        }
        states
    }

    /// One full cycle with `provider`.
    pub async fn cycle(
        &mut self,
        provider: &Model,
        scenario: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<CycleReport> {
        let head = collectors::head(&self.provider).await?;
        self.sync(head.0).await?;
        let due = self.due_markets(head.1);
        // Counted before the book reads: a market whose read fails is an off-chain row too.
        let before_off = self.offchain.len();
        let states = self.read_open(&due, head).await;
        let asked = states.len();
        let answers = self.ask_all(states, provider, head, scenario, cancel).await;
        let submitted = self.submit(answers, head).await.len();
        // Positions as synced at the start of the cycle: one filled just now sits in a market
        // that was open when read, so it is redeemed by a later cycle.
        let redeemed = self.redeem_final().await;
        let written_off = self.write_off_stale(head.1).await;
        let head_after = collectors::head(&self.provider).await?;
        self.sync(head_after.0).await?;
        if !self.dry_run {
            self.write_results()?;
        }
        Ok(CycleReport {
            markets_known: self.markets.len(),
            asked,
            submitted,
            offchain_failures: self.offchain.len() - before_off,
            redeemed,
            written_off,
            head: head_after.0,
        })
    }

    /// All feed rows: chain rows with annotations, plus off-chain rows.
    pub fn rows(&self) -> Vec<feed::FeedRow> {
        feed::merge(&self.record, &self.notes, &self.offchain)
    }

    pub fn facts(&self) -> Option<&GateFacts> {
        self.facts.as_ref()
    }

    /// Writes feed.jsonl, RESULTS.md and the chart atomically.
    pub fn write_results(&self) -> Result<()> {
        let (Some(dir), Some(facts)) = (&self.results, &self.facts) else { return Ok(()) };
        write_record(dir, facts, &self.record, &self.rows())
    }
}

/// Writes a record's files (see `recorder::write_record`).
pub fn write_record(
    dir: &Path,
    facts: &GateFacts,
    record: &ChainRecord,
    rows: &[feed::FeedRow],
) -> Result<()> {
    Ok(recorder::write_record(dir, facts, record, rows)?)
}

/// Deploy block saved by `keeper deploy`, if any.
pub fn saved_deploy_block(root: &Path, chain_id: u64, gate: Address) -> Option<u64> {
    let text =
        std::fs::read_to_string(root.join("deployments").join(format!("{chain_id}.json"))).ok()?;
    let saved: crate::deploy::Deployment = serde_json::from_str(&text).ok()?;
    (saved.gate == gate).then_some(saved.deploy_block)
}

/// The default results folder of a gate: `results/<chain-id>/<gate>/` under the project root,
/// so two gates or two chains never share a record (`results/` itself is the demo's).
pub fn default_results_dir(root: &Path, chain_id: u64, gate: Address) -> PathBuf {
    root.join("results").join(chain_id.to_string()).join(gate.to_checksum(None))
}

/// The gate saved by `keeper deploy` in deployments/<chain-id>.json.
pub fn saved_gate(root: &Path, chain_id: u64) -> std::result::Result<Address, chain::ChainError> {
    let path = root.join("deployments").join(format!("{chain_id}.json"));
    let text = std::fs::read_to_string(&path).map_err(|_| chain::ChainError::NoSavedGate {
        chain_id,
        path: path.display().to_string(),
    })?;
    let saved: crate::deploy::Deployment = serde_json::from_str(&text).map_err(|e| {
        chain::ChainError::BadSavedGate { path: path.display().to_string(), reason: e.to_string() }
    })?;
    Ok(saved.gate)
}

/// `keeper run`.
pub async fn run(cfg: RunConfig, root: &Path, cancel: CancellationToken) -> Result<()> {
    let (reader, chain_id) = chain::connect_checked(&cfg.chain).await?;
    let gate = match cfg.gate {
        Some(g) => g,
        None => saved_gate(root, chain_id)?,
    };
    let mut cfg = cfg;
    cfg.gate = Some(gate);
    let results = cfg.results.clone().unwrap_or_else(|| default_results_dir(root, chain_id, gate));
    chain::check_gate(&reader, gate, chain_id).await?;
    let factory = collectors::gate_factory(&reader, gate).await?;
    let (provider, keeper_addr) = if cfg.dry_run {
        let k = crate::bindings::IRiskGate::new(gate, &reader)
            .keeper()
            .call()
            .await
            .map_err(|e| chain::ChainError::Call(Box::new(e)))?;
        (reader.clone(), k)
    } else {
        let signer = chain::load_signer(cfg.keystore.as_deref())?;
        let addr = signer.address();
        (chain::signing_provider(&cfg.chain.rpc_url, signer)?, addr)
    };
    let from_block =
        cfg.from_block.or_else(|| saved_deploy_block(root, chain_id, gate)).unwrap_or(0);
    let model = Model::from_config(&cfg.model, cfg.inference_timeout)?;
    let mut keeper =
        Keeper::new(provider, chain_id, gate, factory, keeper_addr, from_block, Some(results));
    keeper.log_range = cfg.log_range;
    keeper.concurrency = cfg.concurrency;
    keeper.reask_secs = cfg.reask_secs;
    keeper.quote = cfg.quote;
    keeper.dry_run = cfg.dry_run;
    keeper.strategy_text = cfg.strategy_text.clone();
    keeper.load_existing_feed()?;
    eprintln!(
        "keeper: chain {chain_id}, gate {}, keeper {keeper_addr}, model {} / {}{}",
        gate,
        model.name(),
        model.model(),
        if cfg.dry_run { " (dry run: nothing is sent)" } else { "" }
    );
    const MAX_FAILURES: u32 = 8;
    let mut failures = 0u32;
    let mut backoff = Duration::from_millis(500);
    loop {
        if cancel.is_cancelled() {
            eprintln!("keeper: stopping (signal)");
            return Ok(());
        }
        match keeper.cycle(&model, None, &cancel).await {
            Ok(r) => {
                failures = 0;
                backoff = Duration::from_millis(500);
                eprintln!(
                    "keeper: cycle at block {}: {} markets known, {} asked, {} submitted, {} failed off-chain, {} redeemed, {} written off",
                    r.head, r.markets_known, r.asked, r.submitted, r.offchain_failures, r.redeemed, r.written_off
                );
                if cfg.once {
                    return Ok(());
                }
                tokio::select! {
                    _ = cancel.cancelled() => {}
                    _ = tokio::time::sleep(cfg.interval) => {}
                }
            }
            Err(e) => {
                failures += 1;
                let e = crate::error_chain(&e);
                eprintln!("keeper: cycle failed: {e}; retrying in {backoff:?} ({failures}/{MAX_FAILURES})");
                if failures >= MAX_FAILURES {
                    return Err(RunError::NodeGone(failures));
                }
                tokio::select! {
                    _ = cancel.cancelled() => {}
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(8));
            }
        }
    }
}

/// Cancels `token` on SIGINT or SIGTERM.
pub fn spawn_signal_handler(token: CancellationToken) {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let Ok(mut term) = signal(SignalKind::terminate()) else { return };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        token.cancel();
    });
}
