//! The floor (`keeper serve`) in a real browser: Debian's headless Chromium driven over
//! WebDriver, against the `keeper serve` binary following a real anvil.
//!
//! - The demo's saved chain: the page and the API show what the record holds (the feed that
//!   `make test-record` re-derives from the same state), reason by reason; filters narrow the
//!   feed and paging walks it; every route carries the CSP; bad queries are 400s.
//! - A hostile model and a hostile market creator: script tags, an event handler, a
//!   `javascript:` URL, an RTL override and a 100 KB answer are shown as text and no script
//!   runs (each payload would set `window.__pwned`); then a decision made while the page is
//!   open appears on it without a reload.
//!
//! Screenshots go to `$FLOOR_SHOTS` (default target/floor/); `make screenshots` writes them to
//! results/.

#![allow(clippy::await_holding_lock)]

mod common;

use common::{root, serial, world, Drained};
use keeper::{
    dev::{browser::Browser, world::Actor},
    inference::{replay::Replay, Model},
    record::feed,
};
use serde_json::{json, Value};
use std::{
    collections::BTreeMap,
    path::PathBuf,
    time::{Duration, Instant},
};

/// How long a page or the floor may take to come up on a loaded two-core machine. Nothing is
/// decided by it: it only bounds a hang.
const HANG: Duration = Duration::from_secs(120);

/// `keeper serve`'s arguments to follow `w`'s gate beside the keeper whose folder is `results`.
fn over_keeper(w: &keeper::dev::world::World, results: &std::path::Path) -> Vec<String> {
    let d = &w.deployment;
    [
        "--rpc-url",
        w.anvil.url.as_str(),
        "--gate",
        &d.gate.to_string(),
        "--from-block",
        &d.deploy_block.to_string(),
        "--results",
        &results.display().to_string(),
        "--poll-ms",
        "100",
    ]
    .map(str::to_string)
    .to_vec()
}

/// A running `keeper serve`.
struct Floor {
    child: tokio::process::Child,
    url: String,
    log: Drained,
}

impl Floor {
    async fn start(args: &[String]) -> Self {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_keeper"));
        cmd.arg("--root").arg(root()).arg("serve").args(args).args(["--listen", "127.0.0.1:0"]);
        let (child, url, log) = common::spawn_listening(cmd, "keeper serve: ").await;
        Self { child, url, log }
    }

    /// SIGTERM, so it stops cleanly: a `--load-state` floor stops its own anvil (SIGKILL would
    /// leave that anvil running).
    fn terminate(&self) {
        if let Some(pid) = self.child.id() {
            // SAFETY: signalling our own child by its pid.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        }
    }

    async fn stop(mut self) {
        self.terminate();
        if tokio::time::timeout(HANG, self.child.wait()).await.is_err() {
            let _ = self.child.kill().await;
        }
        let log = std::mem::replace(&mut self.log, Drained::empty()).finish().await;
        assert!(!log.contains(" ERROR "), "keeper serve logged an error:\n{log}");
    }
}

impl Drop for Floor {
    /// A test that panics still stops the floor (and the anvil a `--load-state` floor owns).
    fn drop(&mut self) {
        self.terminate();
    }
}

fn shots() -> PathBuf {
    std::env::var_os("FLOOR_SHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/floor"))
}

async fn get(url: &str) -> reqwest::Response {
    reqwest::Client::new().get(url).send().await.unwrap_or_else(|e| panic!("GET {url}: {e}"))
}

async fn get_json(url: &str) -> Value {
    let r = get(url).await;
    assert!(r.status().is_success(), "GET {url}: {}", r.status());
    r.json().await.unwrap()
}

/// Waits (bounded by [`HANG`]) until `script` returns true in the page.
async fn until(b: &Browser, script: &str) -> Duration {
    let t0 = Instant::now();
    loop {
        if b.eval(script, vec![]).await.unwrap() == json!(true) {
            return t0.elapsed();
        }
        assert!(t0.elapsed() < HANG, "the page never satisfied: {script}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn demo_decisions() -> Vec<feed::DecisionRow> {
    let rows =
        feed::read_feed(&root().join("results/feed.jsonl")).expect("results/feed.jsonl reads");
    // As the floor shows a decision: with the rows closing its position attached.
    feed::joined(rows).0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_shows_the_demo_record_as_the_feed_holds_it_and_guards_every_route() {
    let _g = serial();
    let state = root().join("results/anvil-state.json");
    // The floor builds its own state of the saved chain in a cache folder, then a second start
    // resumes from it instead of reading the history again. `--own-state`: after `make demo` the
    // results folder holds the demo keeper's state database (git-ignored), which the floor
    // would otherwise read, and this test is about the floor's own build.
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "--load-state".into(),
        state.display().to_string(),
        "--cache".into(),
        cache.path().display().to_string(),
        "--own-state".into(),
    ];
    let first = Floor::start(&args).await;
    let built = get_json(&format!("{}/api/status", first.url)).await;
    let log = first.log.text();
    assert!(
        log.contains("no usable state database: rebuilding it"),
        "the first start builds: {log}"
    );
    first.stop().await;
    let floor = Floor::start(&args).await;
    let u = &floor.url;
    let log = floor.log.text();
    assert!(log.contains("resumed from the state database"), "the second start resumes: {log}");
    assert!(!log.contains("rebuilding"), "{log}");

    // The record the page must show: results/feed.jsonl, which `make test-record` checks
    // against the same saved chain (every field re-derived from its log).
    let rows = demo_decisions();
    let mut by_reason: BTreeMap<u8, usize> = BTreeMap::new();
    for d in &rows {
        *by_reason.entry(d.reason).or_default() += 1;
    }
    let status = get_json(&format!("{u}/api/status")).await;
    assert_eq!(status["decisions"], json!(rows.len()), "{status}");
    assert_eq!(status, built, "the resumed state shows what the built one did");
    // The demo's two off-chain rows came from its feed into the floor's own state.
    let off = feed::read_feed(&root().join("results/feed.jsonl"))
        .unwrap()
        .iter()
        .filter(|r| matches!(r, feed::FeedRow::Offchain(_)))
        .count();
    assert_eq!(status["offchain"], json!(off), "{status}");
    let gate = get_json(&format!("{u}/api/gate")).await;
    assert_eq!(
        gate["code_matches"],
        json!(true),
        "the demo gate's code matches the source: {gate}"
    );
    for (reason, n) in &by_reason {
        let p = get_json(&format!("{u}/api/decisions?reason={reason}&per_page=1")).await;
        assert_eq!(p["total"], json!(n), "reason {reason}");
        let d = &p["decisions"][0];
        for k in [
            "block",
            "tx",
            "log_index",
            "market",
            "raw",
            "verdict",
            "reason",
            "label",
            "failed_rules",
        ] {
            assert!(d.get(k).is_some(), "decision lacks {k}: {d}");
        }
    }
    println!(
        "the API holds {} decisions over {} reason codes, as feed.jsonl does",
        rows.len(),
        by_reason.len()
    );

    // Every route carries the CSP, errors included; only GET (and HEAD) is answered.
    let csp = keeper::commands::serve::CSP;
    let routes = [
        "/",
        "/models",
        "/charts",
        "/chart/decisions.svg",
        "/assets/floor.js",
        "/assets/floor.css",
        "/api/status",
        "/api/gate",
        "/api/decisions",
        "/api/models",
        "/api/calibration",
        "/api/offchain",
        "/no/such/page",
        "/api/decisions?reason=99",
        "/api/decisions?x=1",
        "/decision/1/x",
        "/market/0x12",
    ];
    for r in routes {
        let res = get(&format!("{u}{r}")).await;
        assert_eq!(
            res.headers().get("content-security-policy").and_then(|v| v.to_str().ok()),
            Some(csp),
            "{r}"
        );
    }
    let d0 = &rows[0];
    for r in [format!("/decision/{}/{}", d0.block, d0.log_index), format!("/market/{}", d0.market)]
    {
        let res = get(&format!("{u}{r}")).await;
        assert_eq!(res.status(), 200, "{r}");
        assert!(res.headers().contains_key("content-security-policy"), "{r}");
    }
    for (r, want) in [
        ("/api/decisions?per_page=201", 400),
        ("/api/decisions?page=0", 400),
        ("/api/decisions?verdict=SELL", 400),
        ("/api/decisions?market=0x1", 400),
        ("/api/gate?x=1", 400),
        ("/nope", 404),
    ] {
        assert_eq!(get(&format!("{u}{r}")).await.status(), want, "{r}");
    }
    let long = format!("{u}/api/decisions?model={}", "a".repeat(5000));
    assert_eq!(get(&long).await.status(), 414);
    let post = reqwest::Client::new().post(format!("{u}/api/decisions")).send().await.unwrap();
    assert_eq!(post.status(), 405);
    assert!(post.headers().contains_key("content-security-policy"));

    // In the browser: the page shows the record's counts, every reason code, and filters.
    let b = Browser::start(1400, 1000)
        .await
        .expect("headless chromium starts (make bootstrap installs it)");
    b.goto(&format!("{u}/?per_page=200")).await.unwrap();
    let shown = b
        .eval("return document.querySelector('[data-k=decisions]').textContent;", vec![])
        .await
        .unwrap();
    assert_eq!(shown, json!(rows.len().to_string()));
    let reasons = b
        .eval("return [...new Set([...document.querySelectorAll('#rows tbody .reason')].map(e => Number(e.className.match(/r(\\d+)/)[1])))].sort((a,b)=>a-b);", vec![])
        .await
        .unwrap();
    let want: Vec<u8> = by_reason.keys().copied().collect();
    assert_eq!(reasons, json!(want), "the feed shows every reason code the chain holds");
    // Three reasons through the page (every one went through the API above): the commonest,
    // the rarest and PASS.
    let commonest = by_reason.iter().max_by_key(|(_, n)| **n).map(|(r, _)| *r).unwrap();
    let rarest = by_reason.iter().min_by_key(|(_, n)| **n).map(|(r, _)| *r).unwrap();
    for reason in [commonest, rarest, 0] {
        let n = by_reason[&reason];
        b.goto(&format!("{u}/?reason={reason}")).await.unwrap();
        let total =
            b.eval("return document.getElementById('total').textContent;", vec![]).await.unwrap();
        assert_eq!(total, json!(n.to_string()), "reason {reason}");
        let other = b.eval(&format!("return [...document.querySelectorAll('#rows tbody .reason')].filter(e => !e.classList.contains('r{reason}')).length;"), vec![]).await.unwrap();
        assert_eq!(other, json!(0), "the reason filter leaves only reason {reason}");
    }
    // Paging: 50 a page, newest first; page 2 starts at the 51st newest.
    b.goto(&format!("{u}/?per_page=50&page=2")).await.unwrap();
    let first = b
        .eval("return Number(document.querySelector('#rows tbody tr').dataset.block);", vec![])
        .await
        .unwrap();
    assert_eq!(first, json!(rows[rows.len() - 51].block));
    let count =
        b.eval("return document.querySelectorAll('#rows tbody tr').length;", vec![]).await.unwrap();
    assert_eq!(count, json!(50.min(rows.len() - 50)));
    // The verdict filter, through the form as a user would submit it.
    b.goto(&format!("{u}/")).await.unwrap();
    b.eval("document.querySelector('select[name=verdict]').value = 'ABSTAIN'; document.querySelector('form.filters').submit(); return true;", vec![]).await.unwrap();
    until(
        &b,
        "return location.search.includes('verdict=ABSTAIN') && document.readyState === 'complete';",
    )
    .await;
    let abstains = rows.iter().filter(|d| d.verdict == 0).count();
    let total =
        b.eval("return document.getElementById('total').textContent;", vec![]).await.unwrap();
    assert_eq!(total, json!(abstains.to_string()));
    let console = b.console().await;
    assert!(
        !console.iter().any(|l| l.contains("Content Security Policy")),
        "the floor breaks its own CSP: {console:?}"
    );

    // Screenshots: the floor, and a decision that bought and settled.
    b.resize(1400, 1500).await.unwrap();
    b.goto(&format!("{u}/?per_page=10")).await.unwrap();
    until(&b, "return document.getElementById('live').textContent === 'on';").await;
    b.screenshot(&shots().join("floor.png")).await.unwrap();
    let bought = rows
        .iter()
        .rev()
        .find(|d| d.settlement.is_some() && d.filled != "0")
        .expect("the demo settles a fill");
    b.goto(&format!("{u}/decision/{}/{}", bought.block, bought.log_index)).await.unwrap();
    b.screenshot(&shots().join("floor-decision.png")).await.unwrap();
    println!("screenshots in {}", shots().display());
    b.stop().await;
    floor.stop().await;
}

/// Hostile answers, one per market (the replay model answers in order).
fn hostile_answers() -> Vec<String> {
    vec![
        "<script>window.__pwned='script'</script>".into(),
        "<img src=x onerror=\"window.__pwned='img'\">".into(),
        "javascript:window.__pwned='js'".into(),
        "\u{202E}PU_YUB\u{200B}".into(),
        "A".repeat(100_000),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_text_shows_as_text_and_a_new_decision_appears_without_a_reload() {
    let _g = serial();
    let w = world(&[]).await;
    let expiry = w.chain_time().await.unwrap() + 86_400;
    // A market creator's hostile questions (the factory takes any text up to 280 bytes).
    let questions = [
        "<script>window.__pwned='q-script'</script> Will it rain?",
        "<img src=x onerror=\"window.__pwned='q-img'\"> Will it snow?",
        "<a href=\"javascript:window.__pwned='q-js'\">click</a> Will it hail?",
        "Will \u{202E}ETH\u{202C} close above 3,000?",
        "Plain question five?",
    ];
    for q in questions {
        let m = w
            .create_market_asking(
                Actor::Maker,
                q,
                10_000,
                100,
                w.fillable_min_qty(100),
                expiry,
                w.addr(Actor::Maker),
            )
            .await
            .unwrap();
        w.ask(m, 520_000, 1_000_000).await.unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let mut k = w.keeper(Some(dir.path().to_path_buf())).build().unwrap();
    let hostile = Model::Replay(Replay::from_answers("<b>evil-model</b>", hostile_answers()));
    let cancel = tokio_util::sync::CancellationToken::new();
    k.set_model(hostile);
    k.cycle(None, &cancel).await.unwrap();

    let floor = Floor::start(&over_keeper(&w, dir.path())).await;
    let u = &floor.url;
    let api = get_json(&format!("{u}/api/decisions")).await;
    assert_eq!(api["total"], json!(5), "{api}");
    // The API returns the answers exactly as submitted (JSON-escaped by serialisation).
    let raws: Vec<String> = api["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["raw"].as_str().unwrap().to_string())
        .collect();
    for a in hostile_answers() {
        assert!(
            raws.contains(&a),
            "the API lost answer {:?}",
            a.chars().take(40).collect::<String>()
        );
    }

    let b = Browser::start(1400, 1000)
        .await
        .expect("headless chromium starts (make bootstrap installs it)");
    for page in ["/".to_string(), "/models".into()] {
        b.goto(&format!("{u}{page}")).await.unwrap();
        let pwned = b
            .eval("return window.__pwned === undefined ? null : String(window.__pwned);", vec![])
            .await
            .unwrap();
        assert_eq!(pwned, Value::Null, "a payload ran on {page}");
    }
    b.goto(&format!("{u}/")).await.unwrap();
    let text = b.eval("return document.querySelector('main').innerText;", vec![]).await.unwrap();
    let text = text.as_str().unwrap();
    // Shown as text: the tags themselves are on the page, and no element came of them.
    assert!(text.contains("<script>window.__pwned='script'</script>"), "{text}");
    // Answers are shown JSON-escaped (exactly as submitted: a quote shows as \").
    assert!(text.contains("<img src=x onerror=\\\"window.__pwned='img'\\\">"), "{text}");
    assert!(text.contains("javascript:window.__pwned='js'"));
    assert!(text.contains("<script>window.__pwned='q-script'</script> Will it rain?"));
    assert!(text.contains("⟨U+202E⟩PU_YUB⟨U+200B⟩"), "the RTL override is shown, not applied");
    assert!(text.contains("Will ⟨U+202E⟩ETH⟨U+202C⟩ close"));
    assert!(
        text.contains("100000 bytes, keccak256 0x"),
        "the 100 KB answer is cut with its length and hash"
    );
    assert!(text.contains("<b>evil-model</b>"), "the model label is text too");
    assert!(!text.contains(&"A".repeat(1000)), "the 100 KB answer is shown whole");
    let made = b
        .eval("return { img: document.querySelectorAll('main img:not([src^=\"/chart/\"])').length, script: document.querySelectorAll('main script').length, js: document.querySelectorAll('a[href^=\"javascript\" i]').length, bold: document.querySelectorAll('main b').length, rtl: document.querySelector('main').innerHTML.includes('\\u202e') };", vec![])
        .await
        .unwrap();
    // The only <b> elements are the verdict cells the page itself makes (5 rows), and the only
    // images its own charts.
    assert_eq!(made, json!({ "img": 0, "script": 0, "js": 0, "bold": 5, "rtl": false }), "{made}");
    for d in api["decisions"].as_array().unwrap() {
        b.goto(&format!("{u}/decision/{}/{}", d["block"], d["log_index"])).await.unwrap();
        let pwned = b
            .eval("return window.__pwned === undefined ? null : String(window.__pwned);", vec![])
            .await
            .unwrap();
        assert_eq!(pwned, Value::Null, "a payload ran on decision {d}");
        b.goto(&format!("{u}/market/{}", d["market"].as_str().unwrap())).await.unwrap();
        let pwned = b
            .eval("return window.__pwned === undefined ? null : String(window.__pwned);", vec![])
            .await
            .unwrap();
        assert_eq!(pwned, Value::Null, "a payload ran on market {}", d["market"]);
    }

    // Live: a decision made while the page is open appears on it, without a reload.
    b.goto(&format!("{u}/")).await.unwrap();
    until(&b, "return document.getElementById('live').textContent === 'on';").await;
    b.eval("window.__same_page = 1; return true;", vec![]).await.unwrap();
    let m = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
    w.ask(m, 520_000, 1_000_000).await.unwrap();
    let live_model = Model::Replay(Replay::from_answers("live", vec!["ABSTAIN".into()]));
    k.set_model(live_model);
    k.cycle(None, &cancel).await.unwrap();
    let mined = Instant::now();
    let block = get_json(&format!("{u}/api/status")).await;
    let took = until(&b, "return document.querySelectorAll('#rows tbody tr').length === 6;").await;
    let same = b.eval("return window.__same_page === 1;", vec![]).await.unwrap();
    assert_eq!(same, json!(true), "the page reloaded");
    let newest = b
        .eval(
            "return document.querySelector('#rows tbody tr td:nth-child(3)').textContent;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(newest, json!("ABSTAIN"), "the newest row is the live decision");
    let total =
        b.eval("return document.getElementById('total').textContent;", vec![]).await.unwrap();
    assert_eq!(total, json!("6"));
    println!(
        "a decision made while the page was open showed on it {} ms after its cycle ended (the status then said head {}); make bench measures block to page",
        mined.elapsed().max(took).as_millis(),
        block["head"]
    );
    let pwned = b
        .eval("return window.__pwned === undefined ? null : String(window.__pwned);", vec![])
        .await
        .unwrap();
    assert_eq!(pwned, Value::Null);
    b.stop().await;
    floor.stop().await;
    drop(k);
    w.stop().await;
}

/// A compromised keeper rewrites a row it published (in its state database, which the floor
/// reads): the row's decision page names the field that no longer matches its `Decision` log,
/// found by `report --check`'s own comparison against the node, where the untouched row showed
/// every check ok. No browser: the page's HTML is read over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_the_keeper_rewrote_is_named_on_its_decision_page() {
    let _g = serial();
    let w = world(&[]).await;
    let expiry = w.chain_time().await.unwrap() + 86_400;
    let m = w.create_market(10_000, 100, w.fillable_min_qty(100), expiry).await.unwrap();
    w.ask(m, 520_000, 1_000_000).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut k = w.keeper(Some(dir.path().to_path_buf())).build().unwrap();
    k.set_model(Model::Replay(Replay::from_answers("abstains", vec!["ABSTAIN".into()])));
    k.cycle(None, &tokio_util::sync::CancellationToken::new()).await.unwrap();
    drop(k);
    let floor = Floor::start(&over_keeper(&w, dir.path())).await;
    let u = &floor.url;
    let api = get_json(&format!("{u}/api/decisions")).await;
    assert_eq!(api["total"], json!(1), "{api}");
    let row = &api["decisions"][0];
    let (block, log) = (row["block"].as_u64().unwrap(), row["log_index"].as_u64().unwrap());
    let page = |body: String| -> Vec<String> {
        // The check's lines: "<dt>name</dt><dd>…</dd>" for the four checks.
        ["event fields against the row", "answer against the log", "prompt re-derived from chain"]
            .iter()
            .map(|name| {
                let at =
                    body.find(&format!("<dt>{name}</dt>")).unwrap_or_else(|| panic!("no {name}"));
                let rest = &body[at..];
                rest[..rest.find("</dd>").unwrap()].to_string()
            })
            .collect()
    };
    let url = format!("{u}/decision/{block}/{log}");
    let before = page(get(&url).await.text().await.unwrap());
    for line in &before {
        assert!(line.contains("class=\"ok\""), "the untouched row checks: {line}");
    }
    // The keeper rewrites the block it says the book was read at.
    let db = rusqlite::Connection::open(dir.path().join("state.sqlite")).unwrap();
    let changed = db
        .execute(
            "UPDATE decisions SET row = json_set(row, '$.read_block', 1) WHERE block = ?1 AND log_index = ?2",
            rusqlite::params![block as i64, log as i64],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);
    let after = page(get(&url).await.text().await.unwrap());
    assert!(
        after[0].contains("class=\"bad\"") && after[0].contains("field `read_block`: file has 1"),
        "the rewritten field is named: {}",
        after[0]
    );
    // What the chain holds still checks: the prompt re-derives from the logged read block, and
    // the answer is the one logged; only the rewritten row is wrong.
    assert!(after[1].contains("class=\"ok\"") && after[2].contains("class=\"ok\""), "{after:?}");
    println!("the rewritten row's page says: {}", after[0]);
    floor.stop().await;
    w.stop().await;
}

/// The consensus demo gate's saved chain (issue 36): the floor names the mode, shows each vote as
/// its validators', and each decision page re-checks the row against the verdict source's logs
/// (`report --check`'s consensus check on one row) and re-derives the prompt the source built on
/// chain. Pages over HTTP: the browser tests above cover how text is shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_names_a_consensus_gate_and_checks_each_row_against_its_source() {
    let _g = serial();
    let dir = root().join("results/consensus");
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "--load-state".into(),
        dir.join("anvil-state.json").display().to_string(),
        "--cache".into(),
        cache.path().display().to_string(),
        // Whatever a `make demo` left in results/consensus/ (git-ignored) is not read.
        "--own-state".into(),
    ];
    let floor = Floor::start(&args).await;
    let u = &floor.url;
    let rows: Vec<feed::DecisionRow> = feed::read_feed(&dir.join("feed.jsonl"))
        .unwrap()
        .into_iter()
        .filter_map(|r| match r {
            feed::FeedRow::Decision(d) => Some(d),
            _ => None,
        })
        .collect();
    let status = get_json(&format!("{u}/api/status")).await;
    assert_eq!(status["decisions"], json!(rows.len()), "{status}");
    let home = get(&format!("{u}/")).await.text().await.unwrap();
    assert!(home.contains("consensus: decisions come only from the verdict source"), "{home}");
    // One agreed, one split (22), one timed out (23): the demo makes each.
    for reason in [0u8, 22, 23] {
        let d = rows.iter().find(|d| d.reason == reason).expect("the demo makes this reason");
        let page = get(&format!("{u}/decision/{}/{}", d.block, d.log_index)).await;
        assert!(page.status().is_success());
        let page = page.text().await.unwrap();
        assert!(page.contains("vote (validators)"), "reason {reason}: {page}");
        assert!(page.contains("vote against the verdict source"), "reason {reason}: {page}");
        assert!(page.contains("the prompt the source built on chain"), "reason {reason}: {page}");
        assert!(!page.contains("class=\"bad\""), "reason {reason}: a check failed: {page}");
    }
    floor.stop().await;
}
