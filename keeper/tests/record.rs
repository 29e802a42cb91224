//! The published record cannot be altered unseen, nor mixed with another gate's: `keeper report
//! --check` against a real demo record (a real anvil reloaded from the demo's saved state, the
//! contracts compiled from contracts/src), one test per kind of tampering, each asserting that
//! the check fails and names the row and field, or the line, that changed.
//!
//! The demo runs once per test binary; each test tampers with its own copy of the record.
// Each test runs on its own runtime; the std lock held across awaits is what serialises them.
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::primitives::Address;
use common::{decisions, offchain, root, serial};
use keeper::record::{
    feed::{self, FeedRow},
    RecordError, CHART_FILE, FEED_FILE, HEAD_FILE, RESULTS_FILE,
};
use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
};

/// The demo's chain id: anvil's default.
const ANVIL_CHAIN_ID: u64 = 31_337;

/// Runs the keeper binary from the project root; returns (exit code, stdout, stderr).
fn keeper(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_keeper"))
        .arg("--root")
        .arg(root())
        .args(args)
        .env_remove("KEEPER_RPC_URL")
        .env_remove("KEEPER_GATE")
        .env_remove("KEEPER_RESULTS")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// A fresh demo record (feed, head, chart, RESULTS.md, saved chain state), made once per test
/// binary in cargo's scratch folder for integration tests.
fn demo_record() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("record-demo");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (c, _, e) = keeper(&["demo", "--results", dir.to_str().unwrap()]);
        assert_eq!(c, 0, "the demo runs end to end: {e}");
        dir
    })
}

/// A private copy of the demo record to tamper with.
fn copy_of_demo() -> tempfile::TempDir {
    let src = demo_record();
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
        }
    }
    dir
}

/// `keeper report --check` on the record in `dir`, its folder found from the saved state.
fn check(dir: &Path) -> (i32, String, String) {
    let state = dir.join(keeper::commands::report::STATE_FILE);
    keeper(&["report", "--check", "--load-state", state.to_str().unwrap()])
}

fn lines(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(FEED_FILE)).unwrap();
    text.lines().map(str::to_string).collect()
}

fn write_lines(dir: &Path, lines: &[String]) {
    std::fs::write(dir.join(FEED_FILE), lines.iter().map(|l| format!("{l}\n")).collect::<String>())
        .unwrap();
}

fn rows(dir: &Path) -> Vec<FeedRow> {
    feed::read_feed(&dir.join(FEED_FILE)).unwrap()
}

/// Asserts that `--check` on `dir` fails and its error says every one of `needles`.
fn assert_caught(dir: &Path, needles: &[&str]) -> String {
    let (c, out, err) = check(dir);
    assert_ne!(c, 0, "the tampering is caught: {out}{err}");
    assert!(!err.contains("panicked"), "never a panic: {err}");
    for n in needles {
        assert!(err.contains(n), "the error says {n:?}: {err}");
    }
    err
}

#[test]
fn an_untouched_record_passes_and_says_what_it_verified_and_what_it_could_not() {
    let _g = serial();
    let dir = copy_of_demo();
    let (c, out, err) = check(dir.path());
    assert_eq!(c, 0, "report --check passes on the demo's output: {out}{err}");

    let rows = rows(dir.path());
    let ds = decisions(&rows);
    // Every reason code 0..=18 appears in the demo's feed, every row names the demo's chain.
    for code in 0..19u8 {
        assert!(ds.iter().any(|d| d.reason == code), "reason {code} reached");
    }
    assert!(rows.iter().all(|r| r.owner().0 == ANVIL_CHAIN_ID));
    // Answers longer than the 64 logged bytes are published whole (and checked by keccak).
    assert!(ds.iter().any(|d| d.raw_length > 64 && d.raw.is_some()));

    // The counts printed are the feed's own: every decision row, every published answer, every
    // off-chain row, every labelled row; and the head is the one in feed.head.
    let answers = ds.iter().filter(|d| d.raw.is_some()).count();
    let labelled = ds.iter().filter(|d| d.note != feed::Annotation::default()).count();
    let head = std::fs::read_to_string(dir.path().join(HEAD_FILE)).unwrap();
    let expected = [
        format!(
            "verified from chain: {} decision rows and {} rows closing their positions",
            ds.len(),
            rows.iter().filter(|r| !r.closes().is_empty()).count()
        ),
        "every field re-derived from its log".to_string(),
        format!("{answers} published answers (length, head and keccak256 as logged)"),
        format!("{RESULTS_FILE} ("),
        format!("{CHART_FILE} (re-rendered, byte for byte)"),
        "verified from chain: gate runtime code".to_string(),
        format!(
            "verified by hash chain only (not re-derivable from chain): {} off-chain rows",
            offchain(&rows).len()
        ),
        format!("labels (provider, model, strategy hash, scenario) of {labelled} decision rows"),
        format!("{} rows linked up to {HEAD_FILE} {}", rows.len(), head.trim()),
        format!("not verifiable here: that {HEAD_FILE} is the head the keeper published"),
    ];
    for e in &expected {
        assert!(out.contains(e.as_str()), "prints {e:?}: {out}");
    }
    assert!(!offchain(&rows).is_empty() && labelled > 0, "the demo has both kinds to protect");
}

/// A relative `--root` is resolved once, against the working directory: run from `keeper/` with
/// `--root ..`, the check compiles contracts/src with `../tools/solc` and passes (before, the
/// compiler was looked for at `../../tools/solc`, joined onto the root twice, and it failed).
#[test]
fn a_relative_root_is_resolved_once() {
    let _g = serial();
    let dir = copy_of_demo();
    let state = dir.path().join(keeper::commands::report::STATE_FILE);
    let keeper_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_keeper"))
        .current_dir(keeper_dir)
        .args(["--root", ".."])
        .args(["report", "--check", "--load-state", state.to_str().unwrap()])
        .env_remove("KEEPER_ROOT")
        .env_remove("KEEPER_RPC_URL")
        .env_remove("KEEPER_GATE")
        .env_remove("KEEPER_RESULTS")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "report --check with --root ..: {err}");
    assert!(!err.contains("tools/solc is missing"), "{err}");
}

#[test]
fn an_edited_answer_is_caught_by_its_logged_keccak() {
    let _g = serial();
    let dir = copy_of_demo();
    let mut ls = lines(dir.path());
    let i = ls.iter().position(|l| l.contains("\"raw\":\"ABSTAIN\"")).expect("an ABSTAIN row");
    ls[i] = ls[i].replacen("\"raw\":\"ABSTAIN\"", "\"raw\":\"BUY_UP\"", 1);
    write_lines(dir.path(), &ls);
    let row = format!("row {} (tx", i + 1);
    assert_caught(dir.path(), &[&row, "not the one its event logged", "field `raw`"]);
}

#[test]
fn a_changed_model_label_breaks_the_hash_chain_at_that_row() {
    let _g = serial();
    let dir = copy_of_demo();
    let mut ls = lines(dir.path());
    // A labelled decision row that is not the last (its successor's link is what catches it).
    let i = ls[..ls.len() - 1]
        .iter()
        .position(|l| l.contains("\"kind\":\"decision\"") && l.contains("\"model\":\""))
        .expect("a labelled decision row");
    let row: FeedRow = serde_json::from_str(&ls[i]).unwrap();
    let FeedRow::Decision(d) = row else { unreachable!() };
    let model = d.note.model.unwrap();
    ls[i] = ls[i].replacen(&format!("\"model\":\"{model}\""), "\"model\":\"gpt-5-pro\"", 1);
    write_lines(dir.path(), &ls);
    // Row i+1 (1-based) was edited; row i+2's `prev` is what no longer matches.
    let (edited, next) = (i + 1, i + 2);
    let says = format!(
        "row {next}: `prev` does not match row {edited} as written: row {edited} was edited"
    );
    // The hashes pin the row, not the field: --check names no chain-derived field of row
    // i+1 (they all still match its log), and says the edit is in one of its labels.
    let err =
        assert_caught(dir.path(), &[&says, "`provider`, `model`, `strategy_hash` or `scenario`"]);
    assert!(!err.contains(&format!("row {edited} (tx")), "no chain field of it differs: {err}");
    // The label is shown on the page, so the re-rendered page names the line as well.
    assert!(err.contains(&format!("{RESULTS_FILE} line")), "{err}");
}

/// A feed an older keeper wrote (no `gas`, no settlement `time`, linked as that keeper linked
/// it) still checks: the missing fields are said, not taken for edits. Removing them from one
/// row without re-linking is still caught by the hash chain.
#[test]
fn a_feed_from_before_gas_and_settlement_time_checks_and_says_so() {
    use alloy::primitives::keccak256;
    let _g = serial();
    let dir = copy_of_demo();
    let ls = lines(dir.path());
    let FeedRow::Decision(first) =
        rows(dir.path()).into_iter().find(|r| matches!(r, FeedRow::Decision(_))).unwrap()
    else {
        unreachable!()
    };
    let gate: Address = first.gate.parse().unwrap();
    // Strip both fields from every row, then link the lines again as the older keeper did.
    let mut prev = feed::genesis_hash(ANVIL_CHAIN_ID, gate);
    let (mut older, mut out) = (0, Vec::new());
    for l in &ls {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        let o = v.as_object_mut().unwrap();
        let mut touched = o.remove("gas").is_some();
        if let Some(st) = o.get_mut("settlement").and_then(|s| s.as_object_mut()) {
            touched |= st.remove("time").is_some();
        }
        older += usize::from(touched);
        o.insert("prev".into(), prev.to_string().into());
        let line = v.to_string();
        prev = keccak256(line.as_bytes());
        out.push(line);
    }
    // Every decision row has a receipt, so every one of them was touched.
    assert_eq!(older, decisions(&rows(dir.path())).len());
    write_lines(dir.path(), &out);
    std::fs::write(dir.path().join(HEAD_FILE), format!("{prev}\n")).unwrap();
    let (c, stdout, err) = check(dir.path());
    assert_eq!(c, 0, "an older feed is not an edited one: {stdout}{err}");
    let says = format!("not in {FEED_FILE}: the gas, or a settlement's time, of {older} rows");
    assert!(stdout.contains(&says), "says {says:?}: {stdout}");

    // The same stripping of one row, not linked again: the row after it names it.
    let dir = copy_of_demo();
    let mut ls = lines(dir.path());
    let i = ls[..ls.len() - 1].iter().position(|l| l.contains("\"gas\":")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&ls[i]).unwrap();
    v.as_object_mut().unwrap().remove("gas");
    ls[i] = v.to_string();
    write_lines(dir.path(), &ls);
    let says = format!("row {}: `prev` does not match row {} as written", i + 2, i + 1);
    assert_caught(dir.path(), &[&says]);
}

#[test]
fn a_deleted_offchain_row_breaks_the_hash_chain_where_it_was() {
    let _g = serial();
    let dir = copy_of_demo();
    let mut ls = lines(dir.path());
    let i = ls.iter().position(|l| l.contains("\"kind\":\"offchain\"")).expect("an off-chain row");
    ls.remove(i);
    write_lines(dir.path(), &ls);
    // Row i+1 (1-based) is gone: what was row i+2 is now row i+1, and its `prev` names the
    // deleted line, which is no row of the file. (Were it the last row, feed.head would
    // name it instead.)
    let says = if i < ls.len() {
        format!(
            "row {}: `prev` does not match row {i} as written: row {i} was edited, or a row was \
             removed or inserted here",
            i + 1
        )
    } else {
        format!("{HEAD_FILE} does not match the last row (row {i})")
    };
    // The page counts off-chain failures, so its re-rendering differs too.
    assert_caught(dir.path(), &[&says, "off-chain failures (nothing submitted)"]);
}

#[test]
fn an_edited_chart_is_caught_byte_for_byte() {
    let _g = serial();
    let dir = copy_of_demo();
    let path = dir.path().join(CHART_FILE);
    let svg = std::fs::read_to_string(&path).unwrap();
    let title = "Decisions by reason (code";
    let at = svg.find(title).expect("the chart has its title");
    std::fs::write(&path, svg.replacen(title, "Decisions by reason (kode", 1)).unwrap();
    // "kode" differs from "code" at its first letter: 21 bytes into the title.
    let byte = at + "Decisions by reason (".len();
    let line = svg[..byte].matches('\n').count() + 1;
    let says = format!(
        "{CHART_FILE} differs from the chart re-rendered from chain at byte {byte} (line {line};"
    );
    assert_caught(dir.path(), &[&says]);
}

#[test]
fn an_edited_results_line_is_named_with_both_texts() {
    let _g = serial();
    let dir = copy_of_demo();
    let path = dir.path().join(RESULTS_FILE);
    let page = std::fs::read_to_string(&path).unwrap();
    let prefix = "- passed (orders placed): ";
    let (n, line) = page.lines().enumerate().find(|(_, l)| l.starts_with(prefix)).unwrap();
    let passes: u64 = line[prefix.len()..].parse().unwrap();
    let edited = format!("{prefix}{}", passes + 1);
    let tampered: Vec<&str> =
        page.lines().map(|l| if l == line { edited.as_str() } else { l }).collect();
    std::fs::write(&path, format!("{}\n", tampered.join("\n"))).unwrap();
    let says =
        format!("{RESULTS_FILE} line {}: file has `{edited}`, re-rendered has `{line}`", n + 1);
    assert_caught(dir.path(), &[&says]);
}

#[test]
fn an_edited_chain_field_is_named_with_both_values() {
    let _g = serial();
    let dir = copy_of_demo();
    let mut ls = lines(dir.path());
    let rs = rows(dir.path());
    // The first decision row refused for insufficient collateral (reason 10): claim reason 4.
    let (i, d) = rs
        .iter()
        .enumerate()
        .find_map(|(i, r)| match r {
            FeedRow::Decision(d) if d.reason == 10 => Some((i, d)),
            _ => None,
        })
        .expect("a reason-10 row");
    ls[i] = ls[i].replacen("\"reason\":10,", "\"reason\":4,", 1);
    write_lines(dir.path(), &ls);
    let says = format!(
        "row {} (tx {}, log {}): field `reason`: file has 4, chain has 10",
        i + 1,
        d.tx,
        d.log_index
    );
    assert_caught(dir.path(), &[&says]);
}

#[test]
fn a_feed_naming_another_gate_or_none_is_refused() {
    let _g = serial();
    let dir = copy_of_demo();
    let rs = rows(dir.path());
    let gate: Address = rs[0].owner().1.parse().unwrap();
    let other = Address::repeat_byte(0xab);
    let feed_path = dir.path().join(FEED_FILE);

    // Read for another gate, or another chain: refused at row 1, naming both owners.
    for (chain_id, g) in [(ANVIL_CHAIN_ID, other), (1, gate)] {
        match feed::read_feed_for(&feed_path, chain_id, g) {
            Err(RecordError::ForeignFeed { row, found, expected, .. }) => {
                assert_eq!(row, 1);
                assert_eq!(found, format!("chain {ANVIL_CHAIN_ID} gate {gate}"));
                assert_eq!(expected, format!("chain {chain_id} gate {g}"));
            }
            r => panic!("another gate's feed must be refused, got {r:?}"),
        }
    }
    assert_eq!(feed::read_feed_for(&feed_path, ANVIL_CHAIN_ID, gate).unwrap().len(), rs.len());

    // One row of another gate in this gate's folder: the report refuses the whole feed.
    let mut ls = lines(dir.path());
    let third = 2;
    ls[third] =
        ls[third].replacen(&format!("\"gate\":\"{gate}\""), &format!("\"gate\":\"{other}\""), 1);
    write_lines(dir.path(), &ls);
    let says = format!(
        "row 3 belongs to chain {ANVIL_CHAIN_ID} gate {other}, not chain {ANVIL_CHAIN_ID} gate \
         {gate}: point --results at this gate's folder"
    );
    assert_caught(dir.path(), &[&says]);

    // A row of a feed written before rows named their gate is not taken as this gate's.
    let mut ls = lines(copy_of_demo().path());
    ls[0] = ls[0].replacen(&format!("\"gate\":\"{gate}\","), "", 1);
    write_lines(dir.path(), &ls);
    assert_caught(dir.path(), &["row 1 belongs to chain 31337 and no gate"]);
}

/// Issue 32: a feed written before the feed was an event log (v1: a bought row held back until
/// its position settled, carrying the settlement inside it; `tests/fixtures/feed-v1.*` is the
/// demo's v1 feed of this same chain, as committed before the change) is refused by `--check`
/// with a message that says what it is and what to do, and rewritten once as v2 by `keeper
/// report`, keeping its labels and whole answers: the result is the demo's own v2 feed, byte
/// for byte, which then checks.
#[test]
fn a_v1_feed_is_named_and_migrated_once_keeping_its_labels() {
    let _g = serial();
    let dir = copy_of_demo();
    let v2 = std::fs::read(dir.path().join(FEED_FILE)).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    std::fs::copy(fixtures.join("feed-v1.jsonl"), dir.path().join(FEED_FILE)).unwrap();
    std::fs::copy(fixtures.join("feed-v1.head"), dir.path().join(HEAD_FILE)).unwrap();
    // The v1 feed holds every row of this chain, each bought one with its settlement inside.
    let old = rows(dir.path());
    assert!(decisions(&old).iter().any(|d| d.settlement.is_some()), "a v1 row carries one");
    assert!(old.iter().all(|r| r.closes().is_empty()), "and v1 has no closing rows");
    assert_caught(dir.path(), &["v1 shape", "rewrites it once as a v2 event log"]);

    let state = dir.path().join(keeper::commands::report::STATE_FILE);
    let (c, out, err) = keeper(&["report", "--load-state", state.to_str().unwrap()]);
    assert_eq!(c, 0, "the rewrite runs: {out}{err}");
    assert!(out.contains("rewritten once as a v2 event log"), "and says so: {out}");
    let now = std::fs::read(dir.path().join(FEED_FILE)).unwrap();
    assert!(now == v2, "the rewritten feed is the keeper's own v2 feed, labels and all");
    let (c, out, err) = check(dir.path());
    assert_eq!(c, 0, "the migrated record checks: {out}{err}");
    // Once: a second rewrite changes nothing.
    let (c, out, _) = keeper(&["report", "--load-state", state.to_str().unwrap()]);
    assert_eq!(c, 0);
    assert!(!out.contains("v1 shape"), "{out}");
    assert!(std::fs::read(dir.path().join(FEED_FILE)).unwrap() == v2);
}
