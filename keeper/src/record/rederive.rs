//! Re-deriving every published prompt from chain logs alone (`keeper report --check-prompts`).
//!
//! A prompt is a pure function of the strategy text, the market (`MarketCreated`: address,
//! question, grids), the market's book at the decision's `readBlock` and that block's timestamp
//! ([`crate::inference::prompt`]). Every input comes from logs and headers, so no archive node
//! is needed: the book at any block is rebuilt by replaying the venue's own events up to it
//! ([`Book`]), and the strategy text is the published `strategies/<strategyHash>.txt`. A
//! prompt that re-renders to its published `promptHash` matched; any other is named, with the
//! first line where the re-rendered prompt and the published one differ.

use crate::{
    chain::reads::{self, CollectError, MarketInfo, MarketState, Question, BOOK_DEPTH},
    inference::prompt::{Prompt, ReadAt},
    kit::bindings::{IBinaryMarket, IMarketFactory},
    record::{
        self,
        feed::{ChainRecord, DecisionRow, FeedRow},
    },
};
use alloy::{
    primitives::{keccak256, Address, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::{Filter, Log},
    sol_types::SolEvent,
};
use futures::{stream, StreamExt, TryStreamExt};
use std::{
    collections::{BTreeMap, HashMap, HashSet},
    path::Path,
};

/// A value shown in a difference is cut to this many characters (prompts hold market
/// questions and strategy text, written by others).
const SHOWN_CHARS: usize = 160;

/// What the check found.
#[derive(Debug, Clone, Default)]
pub struct PromptCheck {
    /// Decisions whose prompt was re-rendered.
    pub checked: usize,
    /// Of those, the ones whose re-rendered prompt hashes to the published `promptHash`.
    pub matched: usize,
    /// One line per decision that did not match or could not be re-rendered, naming it.
    pub problems: Vec<String>,
    /// Decisions not in the published feed yet whose labels (the strategy hash) neither the
    /// feed nor the keeper's journal holds: not published, so not checked and not a problem.
    pub unpublished: usize,
}

/// One market's book, rebuilt from its `OrderPlaced`, `Fill` and `OrderCancelled` logs: every
/// resting order with what is left of it. (The venue changes a book only through those three:
/// a maker remainder below the minimum is cancelled with `OrderCancelled`.)
#[derive(Debug, Clone, Default)]
pub struct Book {
    orders: HashMap<U256, (bool, U256, U256)>,
    finalized: bool,
}

impl Book {
    /// Applies one venue log, in chain order. A log that contradicts the book (a fill or a
    /// cancel of an order it does not hold, a fill above what rests) is an error.
    pub fn apply(&mut self, log: &Log) -> Result<(), String> {
        let topic = log.topic0().copied().unwrap_or_default();
        if topic == IBinaryMarket::OrderPlaced::SIGNATURE_HASH {
            let ev =
                IBinaryMarket::OrderPlaced::decode_log(&log.inner).map_err(|e| e.to_string())?;
            self.orders.insert(ev.orderId, (ev.isBid, ev.price, ev.quantity));
        } else if topic == IBinaryMarket::Fill::SIGNATURE_HASH {
            let ev = IBinaryMarket::Fill::decode_log(&log.inner).map_err(|e| e.to_string())?;
            let Some(o) = self.orders.get_mut(&ev.orderId) else {
                return Err(format!("Fill of order {} that is not resting", ev.orderId));
            };
            o.2 = o.2.checked_sub(ev.quantity).ok_or_else(|| {
                format!("Fill of {} units of order {} that has {}", ev.quantity, ev.orderId, o.2)
            })?;
            if o.2.is_zero() {
                self.orders.remove(&ev.orderId);
            }
        } else if topic == IBinaryMarket::OrderCancelled::SIGNATURE_HASH {
            let ev =
                IBinaryMarket::OrderCancelled::decode_log(&log.inner).map_err(|e| e.to_string())?;
            if self.orders.remove(&ev.orderId).is_none() {
                return Err(format!("OrderCancelled of order {} that is not resting", ev.orderId));
            }
        } else if topic == IBinaryMarket::Resolved::SIGNATURE_HASH {
            self.finalized = true;
        }
        Ok(())
    }

    /// The best `depth` levels of one side (price, total quantity), best first: bids highest
    /// first, asks lowest first, as `getBookLevels` returns them.
    pub fn levels(&self, bids: bool, depth: usize) -> Vec<(U256, U256)> {
        let mut by_price: BTreeMap<U256, U256> = BTreeMap::new();
        for (is_bid, price, left) in self.orders.values() {
            if *is_bid == bids {
                *by_price.entry(*price).or_default() += *left;
            }
        }
        let levels: Vec<(U256, U256)> = if bids {
            by_price.into_iter().rev().take(depth).collect()
        } else {
            by_price.into_iter().take(depth).collect()
        };
        levels
    }

    /// The state `reads::read_market` would have returned for `info` at this point.
    pub fn state(&self, info: &MarketInfo) -> MarketState {
        let depth = BOOK_DEPTH as usize;
        let (bids, asks) = (self.levels(true, depth), self.levels(false, depth));
        MarketState {
            info: info.clone(),
            best_bid: bids.first().map_or(U256::ZERO, |l| l.0),
            best_ask: asks.first().map_or(U256::ZERO, |l| l.0),
            finalized: self.finalized,
            bids,
            asks,
        }
    }
}

/// The venue events that change what a prompt shows.
pub fn venue_topics() -> Vec<B256> {
    vec![
        IBinaryMarket::OrderPlaced::SIGNATURE_HASH,
        IBinaryMarket::Fill::SIGNATURE_HASH,
        IBinaryMarket::OrderCancelled::SIGNATURE_HASH,
        IBinaryMarket::Resolved::SIGNATURE_HASH,
    ]
}

/// The book of a market at the end of block `at`, from its venue logs sorted in chain order.
pub fn book_at(logs: &[Log], at: u64) -> Result<Book, String> {
    let mut book = Book::default();
    for log in logs.iter().take_while(|l| l.block_number.is_some_and(|b| b <= at)) {
        book.apply(log).map_err(|e| {
            format!(
                "block {} log {}: {e}",
                log.block_number.unwrap_or(0),
                log.log_index.unwrap_or(0)
            )
        })?;
    }
    Ok(book)
}

/// A consensus gate's prompts (issue 36): its verdict source's system text, which stands in
/// for a strategy, and each request's user part and prompt hash as the source's `Asked` logged
/// them, by market and read block ([`crate::record::consensus::SourceLogs::prompts`]). Every
/// row is checked, labelled or not: nothing of it comes from the keeper.
#[derive(Debug, Clone, Default)]
pub struct SourcePrompts {
    pub system: String,
    pub asked: HashMap<(Address, u64), (B256, String)>,
}

/// Re-renders the prompt of every decision in `record` from the chain behind `provider` and
/// the strategy texts published in `results`, and compares each with its published hash
/// (`labelled` supplies each row's strategy hash and, where the keeper kept it, the prompt text
/// it sent, to name the first differing line: the rows as `record::assemble` labels them, from
/// the feed and, for rows still waiting to enter it, from the keeper's journal). A decision
/// with no labels that is not in the published feed (`published`) yet is counted as
/// unpublished, not as a problem: a live gate checks at any moment. On a consensus gate
/// (`source`), each prompt is rendered after the source's system text and must equal, user
/// part and hash, what the source's `Asked` logged.
#[allow(clippy::too_many_arguments)]
pub async fn check(
    provider: &DynProvider,
    factory: Address,
    record: &ChainRecord,
    labelled: &[FeedRow],
    published: &[FeedRow],
    results: &Path,
    source: Option<&SourcePrompts>,
    head: u64,
    range: u64,
) -> Result<PromptCheck, CollectError> {
    let mut out = PromptCheck::default();
    let decisions = &record.decisions;
    if decisions.is_empty() {
        return Ok(out);
    }
    let notes: HashMap<(String, u64), &DecisionRow> = labelled
        .iter()
        .filter_map(|r| match r {
            FeedRow::Decision(d) => Some(((d.tx.clone(), d.log_index), d)),
            _ => None,
        })
        .collect();
    let in_feed: HashSet<(&str, u64)> = published
        .iter()
        .filter_map(|r| match r {
            FeedRow::Decision(d) => Some((d.tx.as_str(), d.log_index)),
            _ => None,
        })
        .collect();
    let markets: HashSet<Address> =
        decisions.iter().filter_map(|d| d.market.parse::<Address>().ok()).collect();
    let infos = created(provider, factory, &markets, head, range).await?;
    let first = infos.values().map(|(_, b)| *b).min().unwrap_or(0);
    let mut venue = venue_logs(provider, &markets, first, head, range).await?;
    for logs in venue.values_mut() {
        logs.sort_by_key(|l| (l.block_number, l.log_index));
    }
    let reads: Vec<u64> = {
        let mut v: Vec<u64> = decisions.iter().map(|d| d.read_block).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let times: HashMap<u64, u64> = stream::iter(reads)
        .map(|n| async move {
            let b = provider
                .get_block_by_number(n.into())
                .await
                .map_err(|source| CollectError::Block { number: n, source: Box::new(source) })?
                .ok_or(CollectError::MissingBlock(n))?;
            Ok::<_, CollectError>((n, b.header.timestamp))
        })
        .buffer_unordered(16)
        .try_collect()
        .await?;
    let mut texts: HashMap<String, Result<String, String>> = HashMap::new();
    for (i, d) in decisions.iter().enumerate() {
        let note = notes.get(&(d.tx.clone(), d.log_index)).copied();
        let labels = note.is_some_and(|n| n.note.strategy_hash.is_some());
        if source.is_none() && !labels && !in_feed.contains(&(d.tx.as_str(), d.log_index)) {
            out.unpublished += 1;
            continue;
        }
        out.checked += 1;
        let name =
            format!("decision {} (block {}, tx {}, log {})", i + 1, d.block, d.tx, d.log_index);
        if let Some(source) = source {
            match render_asked(d, source, &infos, &venue, &times) {
                Ok(()) => out.matched += 1,
                Err(why) => out.problems.push(format!("{name}: {why}")),
            }
            continue;
        }
        match render(d, note, &infos, &venue, &times, results, &mut texts) {
            Err(why) => out.problems.push(format!("{name}: {why}")),
            Ok(p) if p.hash().to_string() == d.prompt_hash => out.matched += 1,
            Ok(p) => out.problems.push(format!(
                "{name}: its prompt re-renders to {}, the gate published {}; {}",
                p.hash(),
                d.prompt_hash,
                first_difference(&p, d, note)
            )),
        }
    }
    Ok(out)
}

/// `market`'s `MarketCreated` (its question checked against `questionHash()`) and the block it
/// was created in, from the factory's logs over `[from, to]`: what [`prompt_at`] renders a
/// prompt of. Immutable, so a caller keeps it.
pub async fn market_created(
    provider: &DynProvider,
    factory: Address,
    market: Address,
    from: u64,
    to: u64,
    range: u64,
) -> Result<(MarketInfo, u64), String> {
    let markets = HashSet::from([market]);
    created_from(provider, factory, &markets, from, to, range)
        .await
        .map_err(|e| crate::error_chain(&e))?
        .remove(&market)
        .ok_or_else(|| format!("the factory created no market {market} in blocks {from}..={to}"))
}

/// One market's prompt at the end of block `read_block`, rendered from chain data alone as
/// [`check`] re-renders published ones: the question and grids from its `MarketCreated` log
/// (`created`, from [`market_created`]), the book rebuilt from its venue logs up to
/// `read.block` (those at least [`VenueLogCache`]'s depth behind `head` read once and kept,
/// the rest read again), and that block's timestamp, `read.time`. What an attestor signs
/// (`keeper attest`); the state it returns carries the best bid and ask it shows.
#[allow(clippy::too_many_arguments)]
pub async fn prompt_at(
    provider: &DynProvider,
    market: Address,
    created: &(MarketInfo, u64),
    read: ReadAt,
    strategy: &str,
    range: u64,
    cache: &VenueLogCache,
    head: u64,
) -> Result<(Prompt, MarketState), String> {
    let read_block = read.block;
    let (info, created_in) = created;
    if let Question::Unreadable(why) = &info.question {
        return Err(format!("market {market}'s question: {why}"));
    }
    if *created_in > read_block {
        return Err(format!(
            "market {market} was created in block {created_in}, after {read_block}"
        ));
    }
    let logs = cache
        .logs(provider, market, *created_in, read_block, head, range)
        .await
        .map_err(|e| crate::error_chain(&e))?;
    let book = book_at(&logs, read_block).map_err(|e| format!("market {market}'s logs: {e}"))?;
    let state = book.state(info);
    let prompt = Prompt::render(strategy, &state, read).map_err(|e| e.to_string())?;
    Ok((prompt, state))
}

/// Venue logs already read, per market, up to a block `depth` behind the head when they were
/// read (deep enough that no reorg reaches it), so a process asked about one market again and
/// again (an attestor, once per cycle) reads only the blocks since, not the market's whole
/// history. Bounded: at most `markets` markets are kept, the one read longest ago dropped first.
pub struct VenueLogCache {
    depth: u64,
    markets: usize,
    kept: std::sync::Mutex<(HashMap<Address, KeptLogs>, std::collections::VecDeque<Address>)>,
}

#[derive(Clone, Default)]
struct KeptLogs {
    /// Every venue log of the market from its creation block through this block.
    through: u64,
    logs: Vec<Log>,
}

impl VenueLogCache {
    /// Logs deeper than `depth` blocks behind the head are kept, for at most `markets` markets.
    pub fn new(depth: u64, markets: usize) -> Self {
        Self { depth, markets: markets.max(1), kept: Default::default() }
    }

    /// How many markets' logs are kept now.
    pub fn len(&self) -> usize {
        self.kept.lock().map_or(0, |k| k.0.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `market`'s venue logs from `created_in` through `to`, in chain order: the kept part,
    /// then only the blocks after it read from the node (the settled ones among them kept).
    pub async fn logs(
        &self,
        provider: &DynProvider,
        market: Address,
        created_in: u64,
        to: u64,
        head: u64,
        range: u64,
    ) -> Result<Vec<Log>, CollectError> {
        let kept = self
            .kept
            .lock()
            .ok()
            .and_then(|k| k.0.get(&market).cloned())
            .filter(|k| k.through >= created_in);
        let (mut logs, from) = match kept {
            Some(k) => (k.logs, k.through + 1),
            None => (Vec::new(), created_in),
        };
        if from <= to {
            let markets = HashSet::from([market]);
            let mut new = venue_logs(provider, &markets, from, to, range)
                .await?
                .remove(&market)
                .unwrap_or_default();
            new.sort_by_key(|l| (l.block_number, l.log_index));
            logs.extend(new);
        }
        // Keep what no reorg can change any more: the logs through `settled`.
        let settled = head.saturating_sub(self.depth).min(to);
        if settled >= from && from <= to {
            let keep: Vec<Log> = logs
                .iter()
                .take_while(|l| l.block_number.is_some_and(|b| b <= settled))
                .cloned()
                .collect();
            if let Ok(mut k) = self.kept.lock() {
                let (map, order) = &mut *k;
                if !map.contains_key(&market) {
                    order.push_back(market);
                    while order.len() > self.markets {
                        if let Some(old) = order.pop_front() {
                            map.remove(&old);
                        }
                    }
                }
                map.insert(market, KeptLogs { through: settled, logs: keep });
            }
        }
        // A read older than the kept part: only its own blocks.
        logs.retain(|l| l.block_number.is_some_and(|b| b <= to));
        Ok(logs)
    }
}

/// The book of `d`'s market at its read block and that block's timestamp, from chain data.
fn read_of(
    d: &DecisionRow,
    infos: &HashMap<Address, (MarketInfo, u64)>,
    venue: &HashMap<Address, Vec<Log>>,
    times: &HashMap<u64, u64>,
) -> Result<(MarketState, ReadAt), String> {
    let market: Address = d.market.parse().map_err(|e| format!("market {}: {e}", d.market))?;
    let (info, _) =
        infos.get(&market).ok_or_else(|| format!("no MarketCreated log names market {market}"))?;
    if let Question::Unreadable(why) = &info.question {
        return Err(format!("market {market}'s question: {why}"));
    }
    let logs = venue.get(&market).map(Vec::as_slice).unwrap_or_default();
    let book = book_at(logs, d.read_block).map_err(|e| format!("market {market}'s logs: {e}"))?;
    let time = *times.get(&d.read_block).ok_or_else(|| format!("no block {}", d.read_block))?;
    Ok((book.state(info), ReadAt { block: d.read_block, time }))
}

/// A consensus row's prompt, re-rendered from chain data after the source's system text: its
/// user part must be the one the source's `Asked` logged, and its hash the row's and the log's.
fn render_asked(
    d: &DecisionRow,
    source: &SourcePrompts,
    infos: &HashMap<Address, (MarketInfo, u64)>,
    venue: &HashMap<Address, Vec<Log>>,
    times: &HashMap<u64, u64>,
) -> Result<(), String> {
    let market: Address = d.market.parse().map_err(|e| format!("market {}: {e}", d.market))?;
    let (logged_hash, logged) = source.asked.get(&(market, d.read_block)).ok_or_else(|| {
        format!("the verdict source logged no Asked for market {market} at block {}", d.read_block)
    })?;
    let (state, read) = read_of(d, infos, venue, times)?;
    let p = Prompt::with_system(source.system.clone(), &state, read).map_err(|e| e.to_string())?;
    if p.user != *logged {
        return Err(format!(
            "the prompt the source built on chain differs from the one re-rendered: {}",
            line_difference(logged, &p.user)
        ));
    }
    if p.hash() != *logged_hash || p.hash().to_string() != d.prompt_hash {
        return Err(format!(
            "its prompt re-renders to {}, the source logged {logged_hash} and the gate published {}",
            p.hash(),
            d.prompt_hash
        ));
    }
    Ok(())
}

/// The prompt of decision `d`, re-rendered from chain data and the published strategy text.
fn render(
    d: &DecisionRow,
    note: Option<&DecisionRow>,
    infos: &HashMap<Address, (MarketInfo, u64)>,
    venue: &HashMap<Address, Vec<Log>>,
    times: &HashMap<u64, u64>,
    results: &Path,
    texts: &mut HashMap<String, Result<String, String>>,
) -> Result<Prompt, String> {
    let (state, read) = read_of(d, infos, venue, times)?;
    let hash = note
        .and_then(|n| n.note.strategy_hash.clone())
        .ok_or("the feed records no strategy hash for it")?;
    let strategy =
        texts.entry(hash.clone()).or_insert_with(|| strategy_text(results, &hash)).clone()?;
    Prompt::render(&strategy, &state, read).map_err(|e| e.to_string())
}

/// The published text of strategy `hash`, checked against it.
fn strategy_text(results: &Path, hash: &str) -> Result<String, String> {
    let h: B256 = hash.parse().map_err(|e| format!("strategy hash {hash}: {e}"))?;
    let path = record::strategy_path(results, h);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            // A reader re-checking a record published elsewhere: say where the texts are.
            format!(
                "strategy text {} is not here: a record publishes the strategy texts its \
                 prompts were made with in the strategies/ folder beside its feed.jsonl; pass \
                 that record's folder with --results DIR, or copy its strategies/ into {}",
                path.display(),
                results.display()
            )
        } else {
            format!("strategy text {}: {e}", path.display())
        }
    })?;
    let got = keccak256(text.as_bytes());
    if got != h {
        return Err(format!("{} hashes to {got}, not {h}", path.display()));
    }
    Ok(text)
}

/// Where the re-rendered prompt first differs from the one the keeper sent (its user part is
/// kept in the row; its system part is the fixed text and the strategy, already checked
/// against its hash), or why that cannot be shown.
fn first_difference(p: &Prompt, d: &DecisionRow, note: Option<&DecisionRow>) -> String {
    let Some(sent) = note.and_then(|n| n.note.prompt.as_deref()) else {
        return "the feed keeps no prompt text for it to compare".to_string();
    };
    if sent != p.user {
        return line_difference(sent, &p.user);
    }
    format!(
        "the re-rendered prompt is the one the keeper sent, line for line, so the promptHash \
         on chain ({}) is not the hash of the prompt it was sent with",
        d.prompt_hash
    )
}

/// The first line where the user part `sent` and the `again` re-rendered one differ.
fn line_difference(sent: &str, again: &str) -> String {
    let (again, sent) = (again.lines().collect::<Vec<_>>(), sent.lines().collect::<Vec<_>>());
    for k in 0..again.len().max(sent.len()) {
        let (a, b) = (again.get(k).copied(), sent.get(k).copied());
        if a != b {
            return format!(
                "first differing line {} of the user part: sent {}, re-rendered {}",
                k + 1,
                shown(b),
                shown(a)
            );
        }
    }
    "the two differ only in line endings".to_string()
}

fn shown(line: Option<&str>) -> String {
    match line {
        None => "(no line)".to_string(),
        Some(l) => {
            let cut: String = l.chars().take(SHOWN_CHARS).collect();
            let more = if cut.len() < l.len() { "…" } else { "" };
            format!("{:?}{more}", cut)
        }
    }
}

/// `MarketCreated` of each of `markets` (found by its indexed address), with its question
/// checked against the market's `questionHash()`, and the block it was created in.
pub(crate) async fn created(
    provider: &DynProvider,
    factory: Address,
    markets: &HashSet<Address>,
    head: u64,
    range: u64,
) -> Result<HashMap<Address, (MarketInfo, u64)>, CollectError> {
    created_from(provider, factory, markets, 0, head, range).await
}

async fn created_from(
    provider: &DynProvider,
    factory: Address,
    markets: &HashSet<Address>,
    from: u64,
    head: u64,
    range: u64,
) -> Result<HashMap<Address, (MarketInfo, u64)>, CollectError> {
    let topics: Vec<B256> = markets.iter().map(|m| m.into_word()).collect();
    let mut out = HashMap::new();
    for log in
        reads::filtered_logs(provider, &factory_filter(factory, topics), from, head, range).await?
    {
        let Some(market) = log.topics().get(1).map(|t| Address::from_word(*t)) else { continue };
        let block = log.block_number.unwrap_or_default();
        let hash = IBinaryMarket::new(market, provider)
            .questionHash()
            .call()
            .await
            .map_err(|source| CollectError::Market { market, source: Box::new(source) })?;
        let Ok(ev) = IMarketFactory::MarketCreated::decode_log(&log.inner) else {
            continue;
        };
        let info =
            MarketInfo::from_created(&ev.data, Question::check(ev.data.question.clone(), hash));
        out.insert(market, (info, block));
    }
    Ok(out)
}

fn factory_filter(factory: Address, markets: Vec<B256>) -> Filter {
    Filter::new()
        .address(factory)
        .event_signature(IMarketFactory::MarketCreated::SIGNATURE_HASH)
        .topic1(markets)
}

/// Every venue log of `markets` over `[from, to]`, by market.
async fn venue_logs(
    provider: &DynProvider,
    markets: &HashSet<Address>,
    from: u64,
    to: u64,
    range: u64,
) -> Result<HashMap<Address, Vec<Log>>, CollectError> {
    let filter = Filter::new()
        .address(markets.iter().copied().collect::<Vec<_>>())
        .event_signature(venue_topics());
    let mut out: HashMap<Address, Vec<Log>> = HashMap::new();
    for log in reads::filtered_logs(provider, &filter, from, to, range).await? {
        out.entry(log.address()).or_default().push(log);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::LogData;

    fn log(block: u64, index: u64, data: LogData) -> Log {
        Log {
            inner: alloy::primitives::Log { address: Address::repeat_byte(1), data },
            block_number: Some(block),
            log_index: Some(index),
            ..Log::default()
        }
    }

    fn placed(block: u64, id: u64, is_bid: bool, price: u64, qty: u64) -> Log {
        let ev = IBinaryMarket::OrderPlaced {
            orderId: U256::from(id),
            owner: Address::repeat_byte(2),
            isBid: is_bid,
            price: U256::from(price),
            quantity: U256::from(qty),
        };
        log(block, id, ev.encode_log_data())
    }

    fn fill(block: u64, id: u64, price: u64, qty: u64) -> Log {
        let ev = IBinaryMarket::Fill {
            orderId: U256::from(id),
            upBuyer: Address::repeat_byte(3),
            downBuyer: Address::repeat_byte(4),
            price: U256::from(price),
            quantity: U256::from(qty),
        };
        log(block, 100 + id, ev.encode_log_data())
    }

    fn cancelled(block: u64, id: u64) -> Log {
        let ev = IBinaryMarket::OrderCancelled {
            orderId: U256::from(id),
            owner: Address::repeat_byte(2),
            refund: U256::from(1),
        };
        log(block, 200 + id, ev.encode_log_data())
    }

    fn lv(levels: &[(u64, u64)]) -> Vec<(U256, U256)> {
        levels.iter().map(|(p, q)| (U256::from(*p), U256::from(*q))).collect()
    }

    #[test]
    fn the_book_at_a_block_counts_only_logs_up_to_it() {
        let logs = vec![
            placed(1, 1, true, 400_000, 100),
            placed(1, 2, true, 400_000, 50),
            placed(2, 3, false, 600_000, 70),
            placed(2, 4, true, 300_000, 10),
            fill(3, 1, 400_000, 30),
            cancelled(4, 4),
            fill(5, 3, 600_000, 70),
        ];
        // Block 2: bids 400_000 x (100 + 50) and 300_000 x 10; one ask.
        let b = book_at(&logs, 2).unwrap();
        assert_eq!(b.levels(true, 3), lv(&[(400_000, 150), (300_000, 10)]));
        assert_eq!(b.levels(false, 3), lv(&[(600_000, 70)]));
        // Block 4: 30 of order 1 filled (150 - 30 = 120), order 4 cancelled.
        let b = book_at(&logs, 4).unwrap();
        assert_eq!(b.levels(true, 3), lv(&[(400_000, 120)]));
        // Block 5: the ask filled whole, so the ask side is empty and best_ask is 0.
        let b = book_at(&logs, 5).unwrap();
        assert!(b.levels(false, 3).is_empty());
    }

    #[test]
    fn levels_are_best_first_and_cut_at_the_depth() {
        let logs: Vec<Log> = (0..5)
            .flat_map(|k| {
                [
                    placed(1, 2 * k + 1, true, 100_000 + 10_000 * k, 1),
                    placed(1, 2 * k + 2, false, 600_000 + 10_000 * k, 1),
                ]
            })
            .collect();
        let b = book_at(&logs, 1).unwrap();
        assert_eq!(b.levels(true, 3), lv(&[(140_000, 1), (130_000, 1), (120_000, 1)]));
        assert_eq!(b.levels(false, 3), lv(&[(600_000, 1), (610_000, 1), (620_000, 1)]));
    }

    #[test]
    fn a_log_that_contradicts_the_book_is_an_error() {
        let e = book_at(&[fill(1, 9, 400_000, 1)], 1).unwrap_err();
        assert!(e.contains("order 9 that is not resting"), "{e}");
        let e = book_at(&[placed(1, 1, true, 1, 5), fill(2, 1, 1, 6)], 2).unwrap_err();
        assert!(e.contains("Fill of 6 units of order 1 that has 5"), "{e}");
    }
}
