//! `keeper report --check-prompts` re-derives every published prompt from chain data alone, and
//! says so when it cannot: the real keeper binary, a real anvil reloaded from a copy of the
//! committed demo record (results/anvil-state.json and its companion), one test per input of a
//! prompt that is tampered with (the published `promptHash`, a market's question, the strategy
//! text), each asserting exactly which decisions then fail and why.
//!
//! Every expected value is read from the copied record itself (its feed.jsonl, its saved chain
//! state, its strategies/), never from the keeper's own parsers, so the count of decisions and
//! the names of the failing ones are an independent oracle. results/ itself is never written:
//! each test works on its own copy in a temp dir.
//!
//! How the saved state holds logs (anvil's dump format, as `keeper demo` wrote it): a JSON
//! object {accounts, best_block_number, block, blocks, historical_states, transactions}; each
//! `transactions[]` entry is {block_hash, block_number, info, receipt}, and the logs anvil
//! serves through `eth_getLogs` are `transactions[].receipt.logs[]` ({address, topics, data}).
//! `blocks[]` hold headers and signed transactions only. Anvil reloads edited receipts as they
//! are: it checks neither the receipt's nor the header's `logsBloom`, nor `receiptsRoot`, and
//! filters logs without the bloom, so one edited topic or data byte is what the report sees.

use alloy::{
    primitives::{keccak256, Address, Bytes, B256},
    sol_types::SolEvent,
};
use keeper::kit::bindings::{IMarketFactory, IRiskGate};
use serde_json::Value;
use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::Mutex,
};

/// The committed demo record (never written here).
fn committed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("results")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One report (one anvil holding the 5.6 MB state) at a time: light on a 2-core machine, and
/// no two anvils ever race for a free port.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const STATE: &str = "anvil-state.json";
const FEED: &str = "feed.jsonl";
const STRATEGIES: &str = "strategies";

/// The signatures as contracts/src/interfaces declares the events (an independent source for
/// the topic0 the tests look for; the keeper filters on its bindings' hashes).
const DECISION_SIG: &str = "Decision(address,bytes32,uint64,uint8,uint8,uint32,bytes,\
                            (uint256,uint256,uint256,uint256,uint256,uint256),bytes,uint256,bytes32,bytes)";
const MARKET_CREATED_SIG: &str =
    "MarketCreated(address,uint256,uint256,uint256,uint256,uint64,address,address,string)";

/// A private copy of the committed record: every top-level file and strategies/.
fn copy_of_record() -> tempfile::TempDir {
    let src = committed();
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&src).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
        }
    }
    std::fs::create_dir(dir.path().join(STRATEGIES)).unwrap();
    for entry in std::fs::read_dir(src.join(STRATEGIES)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(STRATEGIES).join(entry.file_name())).unwrap();
    }
    dir
}

/// One decision row of the feed, read as plain JSON.
#[derive(Debug, Clone)]
struct Row {
    /// 1-based position in chain order ((block, log index)), as the report numbers decisions.
    k: usize,
    block: u64,
    log: u64,
    tx: String,
    market: String,
    prompt_hash: String,
    strategy_hash: String,
}

impl Row {
    /// How the report names a decision.
    fn name(&self) -> String {
        format!("decision {} (block {}, tx {}, log {})", self.k, self.block, self.tx, self.log)
    }
}

/// The feed's decision rows: those with a `prompt_hash` and a `log_index` (off-chain rows have
/// a prompt hash but no log), in chain order.
fn decision_rows(dir: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(dir.join(FEED)).unwrap();
    let mut rows: Vec<Row> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["prompt_hash"].is_string() && v["log_index"].is_u64())
        .map(|v| Row {
            k: 0,
            block: v["block"].as_u64().unwrap(),
            log: v["log_index"].as_u64().unwrap(),
            tx: v["tx"].as_str().unwrap().to_string(),
            market: v["market"].as_str().unwrap().to_string(),
            prompt_hash: v["prompt_hash"].as_str().unwrap().to_string(),
            strategy_hash: v["strategy_hash"].as_str().unwrap().to_string(),
        })
        .collect();
    rows.sort_by_key(|r| (r.block, r.log));
    for (i, r) in rows.iter_mut().enumerate() {
        r.k = i + 1;
    }
    assert!(!rows.is_empty(), "the committed feed holds decision rows");
    rows
}

/// What one `keeper report --check-prompts` run said.
struct Outcome {
    code: i32,
    /// stdout then stderr.
    text: String,
    /// N and M of "N of M decisions' prompts re-render to their published promptHash".
    matched: usize,
    checked: usize,
}

impl Outcome {
    /// The rows the output names as failing.
    fn named<'a>(&self, rows: &'a [Row]) -> Vec<&'a Row> {
        rows.iter().filter(|r| self.text.contains(&format!("{}: ", r.name()))).collect()
    }
}

/// `keeper report --check-prompts --load-state <dir>/anvil-state.json`, the record's folder
/// found from the state (the flag's default), with no inherited KEEPER_* settings.
fn check_prompts(dir: &Path) -> Outcome {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_keeper"));
    cmd.arg("--root").arg(root());
    for (k, _) in std::env::vars() {
        if k.starts_with("KEEPER_") || k == "RUST_LOG" {
            cmd.env_remove(k);
        }
    }
    let state = dir.join(STATE);
    let out = cmd
        .args(["report", "--check-prompts", "--load-state", state.to_str().unwrap()])
        .output()
        .expect("the keeper binary runs");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("panicked"), "never a panic: {text}");
    let (matched, checked) = counts(&text);
    Outcome { code: out.status.code().unwrap_or(-1), text, matched, checked }
}

/// N and M of the report's "prompts re-derived from chain: N of M decisions' ..." line.
fn counts(text: &str) -> (usize, usize) {
    const LEAD: &str = "prompts re-derived from chain: ";
    let at = text.find(LEAD).unwrap_or_else(|| panic!("prints {LEAD:?}: {text}")) + LEAD.len();
    let mut words = text[at..].split(' ');
    let n = words.next().unwrap().parse().unwrap();
    assert_eq!(words.next(), Some("of"), "{text}");
    let m = words.next().unwrap().parse().unwrap();
    assert_eq!(words.next(), Some("decisions'"), "{text}");
    (n, m)
}

/// Rewrites the saved state after `edit`, and asserts that exactly `changed` bytes of the file
/// differ: the edit is what the test says and nothing else moved (the demo saved the state in
/// serde_json's canonical form, so re-serialising an untouched state is byte-identical).
fn edit_state(dir: &Path, changed: usize, edit: impl FnOnce(&mut Value)) {
    let path = dir.join(STATE);
    let before = std::fs::read_to_string(&path).unwrap();
    let mut state: Value = serde_json::from_str(&before).unwrap();
    edit(&mut state);
    let after = serde_json::to_string(&state).unwrap();
    assert_eq!(after.len(), before.len(), "the edit keeps every length");
    let differ = before.bytes().zip(after.bytes()).filter(|(a, b)| a != b).count();
    assert_eq!(differ, changed, "the state differs only where it was edited");
    std::fs::write(&path, after).unwrap();
}

/// Every receipt log in the saved state (where anvil's `eth_getLogs` answers from), with the
/// hash of the transaction that emitted it.
fn receipt_logs(state: &mut Value) -> impl Iterator<Item = (String, &mut Value)> {
    state["transactions"].as_array_mut().expect("state.transactions is a list").iter_mut().flat_map(
        |t| {
            let tx = t["info"]["transaction_hash"].as_str().unwrap().to_string();
            t["receipt"]["logs"]
                .as_array_mut()
                .expect("each receipt has logs")
                .iter_mut()
                .map(move |l| (tx.clone(), l))
        },
    )
}

fn topic(log: &Value, i: usize) -> B256 {
    log["topics"][i].as_str().unwrap().parse().unwrap()
}

/// One hex digit of `h` changed: its last one, to 0 (or to 1 when it is 0).
fn one_digit_off(h: &str) -> String {
    let last = if h.ends_with('0') { '1' } else { '0' };
    format!("{}{last}", &h[..h.len() - 1])
}

#[test]
fn an_untouched_record_re_renders_every_prompt() {
    let _g = serial();
    let dir = copy_of_record();
    let rows = decision_rows(dir.path());
    let out = check_prompts(dir.path());
    assert_eq!(out.code, 0, "the committed record passes: {}", out.text);
    // Every decision row of the feed was re-rendered and every one matched.
    assert_eq!(out.checked, rows.len(), "{}", out.text);
    assert_eq!(out.matched, rows.len(), "{}", out.text);
    assert!(out.named(&rows).is_empty(), "no decision is named: {}", out.text);
}

#[test]
fn a_changed_prompt_hash_names_that_decision_only() {
    // The topic0 the test looks for is the declared signature's.
    assert_eq!(keccak256(DECISION_SIG), IRiskGate::Decision::SIGNATURE_HASH);
    let _g = serial();
    let dir = copy_of_record();
    let rows = decision_rows(dir.path());
    // A decision from the middle of the record; others of its market (and block) still match.
    let target = rows[rows.len() / 2].clone();
    let tampered = one_digit_off(&target.prompt_hash);
    edit_state(dir.path(), 1, |state| {
        let mut hit = 0;
        for (tx, log) in receipt_logs(state) {
            // Its Decision log: emitted by its transaction, topic[2] (promptHash) as the feed
            // recorded it.
            if tx == target.tx
                && topic(log, 0) == IRiskGate::Decision::SIGNATURE_HASH
                && log["topics"][2] == target.prompt_hash.as_str()
            {
                log["topics"][2] = Value::String(tampered.clone());
                hit += 1;
            }
        }
        assert_eq!(hit, 1, "one Decision log of tx {} publishes {}", target.tx, target.prompt_hash);
    });

    let out = check_prompts(dir.path());
    assert_ne!(out.code, 0, "the changed hash is caught: {}", out.text);
    // All decisions re-rendered, all but the one whose published hash changed matched.
    assert_eq!(out.checked, rows.len(), "{}", out.text);
    assert_eq!(out.matched, rows.len() - 1, "{}", out.text);
    let named: Vec<String> = out.named(&rows).iter().map(|r| r.name()).collect();
    assert_eq!(named, vec![target.name()], "only that decision is named: {}", out.text);
    assert!(out.text.contains(&target.tx), "{}", out.text);
    // Its prompt re-renders to what the keeper sent (the hash the feed kept), which is not the
    // hash the chain now says the gate published.
    let said =
        format!("its prompt re-renders to {}, the gate published {tampered}", target.prompt_hash);
    assert!(out.text.contains(&said), "says {said:?}: {}", out.text);
}

#[test]
fn a_changed_question_names_every_decision_of_that_market() {
    assert_eq!(keccak256(MARKET_CREATED_SIG), IMarketFactory::MarketCreated::SIGNATURE_HASH);
    let _g = serial();
    let dir = copy_of_record();
    let rows = decision_rows(dir.path());
    let of = |m: Address| -> Vec<Row> {
        rows.iter().filter(|r| r.market.parse::<Address>().unwrap() == m).cloned().collect()
    };
    let mut target: Option<(Address, String, String)> = None;
    edit_state(dir.path(), 1, |state| {
        // The factory's MarketCreated logs, decoded as the ABI says; the market asking about
        // ETH with the most decisions (the first such in chain order on a tie).
        let mut best: Option<(usize, Address)> = None;
        let mut logs: Vec<&mut Value> = receipt_logs(state)
            .map(|(_, l)| l)
            .filter(|l| topic(l, 0) == IMarketFactory::MarketCreated::SIGNATURE_HASH)
            .collect();
        let decode = |l: &Value| {
            let topics: Vec<B256> = (0..4).map(|i| topic(l, i)).collect();
            let data: Bytes = l["data"].as_str().unwrap().parse().unwrap();
            IMarketFactory::MarketCreated::decode_raw_log(topics, &data).unwrap()
        };
        for l in logs.iter() {
            let ev = decode(l);
            let n = of(ev.market).len();
            if ev.question.contains("ETH") && best.is_none_or(|(b, _)| n > b) {
                best = Some((n, ev.market));
            }
        }
        let (n, market) = best.expect("a market asks about ETH");
        assert!(n > 0, "it has decisions");
        let log = logs.iter_mut().find(|l| decode(l).market == market).unwrap();
        let mut ev = decode(log);
        // One letter flipped, the length kept: "ETH" becomes "ETG" (0x48 -> 0x47, one digit).
        let original = ev.question.clone();
        ev.question = original.replacen("ETH", "ETG", 1);
        log["data"] = Value::String(Bytes::from(ev.encode_data()).to_string());
        target = Some((market, original, ev.question));
    });
    let (market, original, changed) = target.unwrap();
    let expected = of(market);
    assert!(expected.len() < rows.len(), "other markets' decisions remain to match");

    let out = check_prompts(dir.path());
    assert_ne!(out.code, 0, "the changed question is caught: {}", out.text);
    // Every decision of that market fails, every other one still matches.
    assert_eq!(out.checked, rows.len(), "{}", out.text);
    assert_eq!(out.matched, rows.len() - expected.len(), "{}", out.text);
    let named: Vec<String> = out.named(&rows).iter().map(|r| r.name()).collect();
    let want: Vec<String> = expected.iter().map(Row::name).collect();
    assert_eq!(named, want, "every decision of {market} and no other: {}", out.text);
    // Each is named with why: the published question no longer hashes to the market's
    // questionHash() (which is keccak256 of the original text).
    let why = format!(
        "market {market}'s question: the question MarketCreated published hashes to {}, the \
         market's questionHash() is {}",
        keccak256(&changed),
        keccak256(&original)
    );
    for r in &expected {
        let said = format!("{}: {why}", r.name());
        assert!(out.text.contains(&said), "says {said:?}: {}", out.text);
    }
}

#[test]
fn a_changed_strategy_text_no_longer_hashes_to_its_name() {
    let _g = serial();
    let dir = copy_of_record();
    let rows = decision_rows(dir.path());
    // The strategy the first decision was made under; every decision under it fails.
    let hash = rows[0].strategy_hash.clone();
    let expected: Vec<&Row> = rows.iter().filter(|r| r.strategy_hash == hash).collect();
    let path = dir.path().join(STRATEGIES).join(format!("{hash}.txt"));
    let mut text = std::fs::read(&path).unwrap();
    assert_eq!(format!("{}", keccak256(&text)), hash, "the copied text hashes to its name");
    text.push(b'x');
    std::fs::write(&path, &text).unwrap();

    let out = check_prompts(dir.path());
    assert_ne!(out.code, 0, "the changed strategy text is caught: {}", out.text);
    assert_eq!(out.checked, rows.len(), "{}", out.text);
    assert_eq!(out.matched, rows.len() - expected.len(), "{}", out.text);
    let named: Vec<String> = out.named(&rows).iter().map(|r| r.name()).collect();
    let want: Vec<String> = expected.iter().map(|r| r.name()).collect();
    assert_eq!(named, want, "every decision under strategy {hash}: {}", out.text);
    // Each is named with why: the published text now hashes to keccak256(text + "x"), not to
    // the hash that names it.
    let why = format!("{} hashes to {}, not {hash}", path.display(), keccak256(&text));
    for r in &expected {
        let said = format!("{}: {why}", r.name());
        assert!(out.text.contains(&said), "says {said:?}: {}", out.text);
    }
}
