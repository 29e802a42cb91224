//! Every refusal of the operator's input or configuration, through the real `keeper` binary:
//! exit code 2 (as clap's own usage errors), one line on stderr naming the flag, setting or file
//! and what to do, and nothing written; a failure while running (a node down) exits 1
//! (issue 52). The refusals that need a chain (a gate in the wrong mode, a key that is not the
//! gate's) run against a real anvil holding a relayed, an attested and a consensus gate.
//! Beside them: `run` on a consensus gate leaves deployments/ byte for byte as it was, an
//! attested gate's start line names its attestors, not a model, and `attest` and `serve` say
//! that they stopped on a signal.

// `serial()` is a std Mutex held for a whole test on purpose: the tests run one at a time.
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::{primitives::Address, providers::Provider};
use common::{serial, world};
use keeper::dev::world::{attestor_signers, World, ATTESTOR_ACCOUNTS};
use std::{path::Path, process::Command};

/// Runs the keeper binary in `root` with a clean environment (no KEEPER_*, ATTESTOR_* or log
/// setting inherited) plus `env`; returns (exit code, stdout, stderr).
fn keeper(root: &Path, args: &[String], env: &[(String, String)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_keeper"));
    cmd.arg("--root").arg(root);
    for (k, _) in std::env::vars() {
        if k.starts_with("KEEPER_") || k.starts_with("ATTESTOR_") || k == "RUST_LOG" {
            cmd.env_remove(k);
        }
    }
    cmd.args(args).envs(env.iter().cloned());
    let out = cmd.output().expect("the keeper binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// One refusal: the command line, its environment, and what stderr must say.
struct Refusal {
    args: Vec<String>,
    env: Vec<(String, String)>,
    says: String,
}

fn refusal(args: &[&str], says: &str) -> Refusal {
    Refusal { args: args.iter().map(|s| s.to_string()).collect(), env: vec![], says: says.into() }
}

fn with_env(mut r: Refusal, k: &str, v: &str) -> Refusal {
    r.env.push((k.to_string(), v.to_string()));
    r
}

/// Runs each refusal in `root`: exit 2, what it must say, on one line unless clap wrote it
/// (clap adds its usage), never a panic. Returns how many ran.
fn assert_refused(root: &Path, table: &[Refusal]) -> usize {
    for r in table {
        let (code, _, err) = keeper(root, &r.args, &r.env);
        let shown = format!("keeper {} (env {:?}):\n{err}", r.args.join(" "), r.env);
        assert_eq!(code, 2, "exit 2 for {shown}");
        assert!(err.contains(&r.says), "says {:?}: {shown}", r.says);
        assert!(!err.contains("panicked"), "never a panic: {shown}");
        if !err.starts_with("error:") {
            // The keeper's own refusal, not clap's: one error line, the last (logged as an
            // error, or, before a logger exists, the one plain line), after at most the start's
            // information.
            let lines: Vec<&str> = err.trim_end().lines().collect();
            let errors =
                lines.iter().filter(|l| l.contains(" ERROR ") || l.starts_with("keeper: error: "));
            assert_eq!(errors.count(), 1, "one error line: {shown}");
            let last = lines.last().copied().unwrap_or_default();
            assert!(last.contains(" ERROR ") || last.starts_with("keeper: error: "), "{shown}");
            assert!(last.contains(&r.says), "the error line says {:?}: {shown}", r.says);
        }
    }
    table.len()
}

fn s(x: impl ToString) -> String {
    x.to_string()
}

/// The refusals that need no chain: every one is checked before an endpoint is asked (the
/// RPC given is a closed port), so a wrong exit code here is the classification's alone.
#[test]
fn every_refusal_of_input_before_the_chain_exits_2_naming_the_flag() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    let dead = "http://127.0.0.1:1";
    let zero = s(Address::ZERO);
    let a = |b: u8| s(Address::repeat_byte(b));
    let missing = s(root.join("no-such-file").display());
    let run = |extra: &[&str]| {
        let mut v = vec!["run", "--once", "--rpc-url", dead, "--gate", &zero];
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let openai = ["--model", "openai", "--openai-url", "http://127.0.0.1:9", "--openai-model", "m"];
    let with_openai = |extra: &[&str]| {
        let mut v: Vec<&str> = openai.to_vec();
        v.extend_from_slice(extra);
        run(&v)
    };
    let r = |args: Vec<String>, says: &str| Refusal { args, env: vec![], says: says.into() };
    let deploy = |extra: &[String]| {
        let mut v = vec![s("deploy"), s("--rpc-url"), s(dead)];
        v.extend_from_slice(extra);
        v
    };
    let res = |x: &str| vec![s("--trusted-resolver"), s(x)];
    let cre = |x: &str| vec![s("--trusted-creator"), s(x)];
    let ok_lists = [res(&a(1)), cre(&a(2))].concat();
    let nine = |flag: &str| (1..=9u8).flat_map(|b| [s(flag), a(b)]).collect::<Vec<_>>();
    let quoted = a(9);
    let market = |extra: &[&str]| {
        let mut v = vec!["market", "quote", "--rpc-url", dead, "--market", &quoted];
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let long = "q".repeat(281);
    let table = vec![
        // Any command: the logger's setting, clap's own refusals.
        with_env(refusal(&["run", "--once"], "is not a log filter"), "KEEPER_LOG", "keeper=[x"),
        refusal(&["run", "--no-such-flag"], "--no-such-flag"),
        refusal(&["run", "--reask-secs", "soon"], "--reask-secs"),
        // keeper run: the endpoint, the model, the numbers, the attestors.
        refusal(&["run", "--once", "--gate", &zero], "pass --rpc-url"),
        refusal(
            &["run", "--rpc-url", "127.0.0.1:8545"],
            "--rpc-url \"127.0.0.1:8545\" is not a valid URL",
        ),
        refusal(
            &["run", "--rpc-url", "ws://127.0.0.1:8545"],
            "--rpc-url \"ws://127.0.0.1:8545/\" is not an http(s) URL",
        ),
        r(run(&["--model", "openai", "--openai-model", "m"]), "pass --openai-url"),
        r(
            run(&["--model", "openai", "--openai-model", "m", "--openai-url", "127.0.0.1:8080"]),
            "--openai-url \"127.0.0.1:8080\" is not a valid URL",
        ),
        r(
            run(&[
                "--model",
                "openai",
                "--openai-model",
                "m",
                "--openai-url",
                "ftp://127.0.0.1/v1",
            ]),
            "--openai-url \"ftp://127.0.0.1/v1\" is not an http(s) URL",
        ),
        r(run(&["--model", "openai", "--openai-url", "http://127.0.0.1:9"]), "pass --openai-model"),
        r(run(&["--model", "replay"]), "needs --replay-file"),
        r(run(&["--strategy", &missing]), &format!("--strategy {missing}: cannot read it")),
        r(run(&["--reask-secs", "0"]), "--reask-secs must be > 0"),
        r(run(&["--slippage-bps", "10001"]), "--slippage-bps 10001 is above 10000"),
        r(run(&["--verdict-ttl-secs", "0"]), "--verdict-ttl-secs must be > 0"),
        r(run(&["--batch-max", "0"]), "--batch-max must be > 0"),
        r(with_openai(&["--max-tokens", "0"]), "--max-tokens must be > 0"),
        r(with_openai(&["--temperature", "3"]), "--temperature 3 is outside 0..=2"),
        r(run(&["--model", "bundled", "--model-threads", "0"]), "--model-threads 0"),
        r(run(&["--model", "bundled", "--model-slots", "0"]), "--model-slots 0"),
        r(run(&["--inference-timeout-secs", "0"]), "--inference-timeout-secs 0"),
        r(
            run(&["--attestor", "http://127.0.0.1:9", "--attestor-timeout-secs", "0"]),
            "--attestor-timeout-secs 0",
        ),
        r(run(&["--attestor", "127.0.0.1:9"]), "--attestor \"127.0.0.1:9\" is not a valid URL"),
        r(
            run(&["--attestor", "ftp://127.0.0.1:9"]),
            "--attestor \"ftp://127.0.0.1:9/\" is not an http(s) URL",
        ),
        r(
            run(&["--attestor", "http://127.0.0.1:9", "--attestor", "http://127.0.0.1:9"]),
            "is the same attestor as",
        ),
        r(
            run(&["--attestor", "http://LOCALHOST:80/", "--attestor", "http://localhost"]),
            "(both are http://localhost)",
        ),
        with_env(
            r(run(&[]), "is the same attestor as"),
            "KEEPER_ATTESTORS",
            "http://127.0.0.1:9/,HTTP://127.0.0.1:9",
        ),
        // keeper deploy: the endpoint, the trusted lists, the attested mode's settings.
        refusal(&["deploy"], "pass --rpc-url"),
        r(deploy(&[]), "no --trusted-resolver given"),
        r(
            deploy(&[res(&zero), cre(&a(2))].concat()),
            "--trusted-resolver 0x0000000000000000000000000000000000000000 is the zero address",
        ),
        r(deploy(&[res(&a(1)), res(&a(1)), cre(&a(2))].concat()), "is given twice"),
        r(
            deploy(&[nine("--trusted-resolver"), cre(&a(2))].concat()),
            "9 distinct --trusted-resolver addresses",
        ),
        r(deploy(&res(&a(1))), "no --trusted-creator given"),
        r(
            deploy(&[res(&a(1)), cre(&zero)].concat()),
            "--trusted-creator 0x0000000000000000000000000000000000000000 is the zero address",
        ),
        r(deploy(&[res(&a(1)), cre(&a(2)), cre(&a(2))].concat()), "--trusted-creator"),
        r(
            deploy(&[res(&a(1)), nine("--trusted-creator")].concat()),
            "9 distinct --trusted-creator addresses",
        ),
        r(
            deploy(&[ok_lists.clone(), vec![s("--attestor-threshold"), s(1)]].concat()),
            "--attestor-threshold is given without any --attestor-signer",
        ),
        r(
            deploy(&[ok_lists.clone(), vec![s("--max-read-age"), s(3)]].concat()),
            "--max-read-age is given without any --attestor-signer",
        ),
        r(
            deploy(&[ok_lists.clone(), vec![s("--max-slippage-bps"), s(3)]].concat()),
            "--max-slippage-bps is given without any --attestor-signer",
        ),
        r(
            deploy(
                &[
                    ok_lists.clone(),
                    vec![s("--attestor-signer"), a(5), s("--attestor-signer"), a(5)],
                ]
                .concat(),
            ),
            "--attestor-signer",
        ),
        // keeper fund and keeper market: the amount, the question, the orders.
        refusal(&["fund", "--rpc-url", dead, "--amount", "ten"], "--amount"),
        refusal(&["fund", "--rpc-url", dead, "--amount", "0"], "--amount"),
        refusal(&["fund", "--amount", "1"], "pass --rpc-url"),
        refusal(
            &["market", "create", "--rpc-url", dead, "--question", "", "--expiry-in", "600"],
            "--question is empty",
        ),
        refusal(
            &["market", "create", "--rpc-url", dead, "--question", &long, "--expiry-in", "600"],
            "--question is 281 bytes",
        ),
        r(market(&["--qty", "1"]), "give --bid, --ask or both"),
        r(market(&["--bid", "0", "--qty", "1"]), "--bid 0 is outside 1..=999999"),
        r(market(&["--ask", "1000000", "--qty", "1"]), "--ask 1000000 is outside 1..=999999"),
        r(market(&["--bid", "600000", "--ask", "500000", "--qty", "1"]), "--bid and --ask cross"),
        r(market(&["--bid", "400000", "--qty", "0"]), "--qty must be > 0"),
        // keeper report and keeper serve.
        refusal(&["report"], "pass --rpc-url"),
        refusal(
            &["report", "--rpc-url", "file:///etc/passwd"],
            "--rpc-url \"file:///etc/passwd\" is not an http(s) URL",
        ),
        refusal(&["report", "--load-state", &missing], "--load-state"),
        refusal(&["serve", "--rpc-url", dead, "--listen", "0.0.0.0:0"], "--listen 0.0.0.0:0"),
        refusal(&["serve", "--rpc-url", dead, "--poll-ms", "0"], "--poll-ms must be at least 1"),
        refusal(&["serve", "--rpc-url", dead, "--load-state", &missing], "--load-state"),
        // keeper attest: where it listens, its deadline, its key.
        refusal(&["attest", "--rpc-url", dead], "--gate"),
        refusal(
            &["attest", "--rpc-url", dead, "--gate", &zero, "--listen", "0.0.0.0:0"],
            "--listen 0.0.0.0:0 is not a loopback address",
        ),
        refusal(
            &["attest", "--rpc-url", dead, "--gate", &zero, "--answer-ttl-secs", "0"],
            "--answer-ttl-secs must be > 0",
        ),
        refusal(
            &["attest", "--rpc-url", dead, "--gate", &zero, "--listen", "127.0.0.1:0"],
            "ATTESTOR_PRIVATE_KEY",
        ),
        with_env(
            refusal(
                &["attest", "--rpc-url", dead, "--gate", &zero, "--listen", "127.0.0.1:0"],
                "ATTESTOR_PRIVATE_KEY is not a valid hex private key",
            ),
            "ATTESTOR_PRIVATE_KEY",
            "0x12",
        ),
    ];
    let n = assert_refused(root, &table);

    // A --root that does not exist: refused, not created.
    let gone = root.join("riskgate-typo");
    let (code, _, err) = keeper(&gone, &run(&[]), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("does not exist or is not a folder") && !gone.exists(), "{err}");
    // Nothing of it wrote into the root: no results, no deployments, no state.
    let left: Vec<_> = std::fs::read_dir(root).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "the refusals wrote {left:?}");

    // And a failure while running is not a refusal: a node that does not answer exits 1.
    let (code, _, err) = keeper(root, &run(&[]), &[(s("KEEPER_PRIVATE_KEY"), "11".repeat(32))]);
    assert_eq!(code, 1, "a node down is a runtime failure: {err}");
    assert!(err.contains("cannot reach the RPC"), "{err}");
    println!("refusals before the chain: {} exit 2 naming the flag; a node down exits 1", n + 1);
}

/// The three modes on one anvil: the world's relayed gate, an attested gate whose set is the
/// world's three attestor accounts (k = 2), and a consensus gate.
struct Gates {
    w: World,
    attested: Address,
    consensus: Address,
    source: Address,
}

async fn gates() -> Gates {
    let w = world(&[]).await;
    let signers = attestor_signers(&w.anvil).unwrap();
    let attested = common::deploy_beside(&w, common::attested(signers, 2)).await.gate;
    let (consensus, source) = common::consensus_beside(&w).await;
    Gates { w, attested, consensus, source }
}

/// The refusals that need the chain to know: the chain id, the gate (no code, not a gate, the
/// wrong mode for the command), the key, the saved deployment, the constructor's own checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_the_chain_decides_exits_2_and_sends_nothing() {
    let _g = serial();
    let Gates { w, attested, consensus, source } = gates().await;
    let url = s(&w.anvil.url);
    let relayed = s(w.deployment.gate);
    let (attested_s, consensus_s) = (s(attested), s(consensus));
    let not_a_gate = s(w.deployment.collateral);
    let no_code = s(Address::repeat_byte(0x42));
    let keeper_key = s(w.anvil.dev_key(0).unwrap());
    let stranger_key = s(w.anvil.dev_key(4).unwrap());
    let attestor_key = s(w.anvil.dev_key(ATTESTOR_ACCOUNTS[0]).unwrap());
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    let results = s(root.join("results").display());
    let key = |r: Refusal, k: &str| with_env(r, "KEEPER_PRIVATE_KEY", k);
    let run = |gate: &str, extra: &[&str]| {
        let mut v = vec!["run", "--once", "--rpc-url", &url, "--results", &results];
        if !gate.is_empty() {
            v.extend_from_slice(&["--gate", gate]);
        }
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let r = |args: Vec<String>, says: &str| Refusal { args, env: vec![], says: says.into() };
    let attest = |gate: &str| {
        refusal(&["attest", "--rpc-url", &url, "--gate", gate, "--listen", "127.0.0.1:0"], "")
    };
    let attest_as = |gate: &str, k: &str, says: &str| {
        let mut a = with_env(attest(gate), "ATTESTOR_PRIVATE_KEY", k);
        a.says = says.into();
        a
    };
    let keeper_addr = s(w.keeper_addr);
    let maker = s(w.maker_addr);
    let missing_keystore = s(root.join("no-keystore.json").display());
    let table = vec![
        // keeper run.
        key(r(run(&relayed, &["--chain-id", "1"]), "wrong --rpc-url or --chain-id"), &keeper_key),
        key(r(run(&no_code, &[]), "has no code on chain 31337: wrong --gate"), &keeper_key),
        key(r(run(&not_a_gate, &[]), "does not answer like a RiskGate"), &keeper_key),
        key(r(run("", &[]), "no --gate given and no deployment saved"), &keeper_key),
        r(run(&relayed, &[]), "no key: set KEEPER_PRIVATE_KEY"),
        key(r(run(&relayed, &[]), "KEEPER_PRIVATE_KEY is not a valid hex private key"), "0x12"),
        r(run(&relayed, &["--keystore", &missing_keystore]), &format!("--keystore {missing_keystore} cannot be opened")),
        key(r(run(&relayed, &[]), "is not this gate's keeper"), &stranger_key),
        key(r(run(&relayed, &["--attestor", "http://127.0.0.1:9"]), "is relayed"), &keeper_key),
        key(r(run(&attested_s, &[]), "give each attestor's URL with --attestor"), &keeper_key),
        key(r(run(&attested_s, &["--attestor", "http://127.0.0.1:9"]), "fewer than the gate's threshold 2"), &keeper_key),
        key(r(run(&consensus_s, &[]), &format!("is a consensus gate: its verdicts come only from its verdict source {source}")), &keeper_key),
        // keeper attest: only on an attested gate, and only with one of its attestors' keys.
        attest_as(&relayed, &attestor_key, "is relayed (its keeper relays a model's answers), not attested"),
        attest_as(&consensus_s, &attestor_key, &format!("is a consensus gate (its verdicts come only from its verdict source {source}), not attested")),
        attest_as(&attested_s, &stranger_key, "is not one of gate"),
        attest_as(&no_code, &attestor_key, "has no code"),
        // keeper deploy: a keeper that would also be trusted.
        key(refusal(&["deploy", "--rpc-url", &url, "--trusted-resolver", &keeper_addr, "--trusted-creator", &maker], "is also a trusted resolver"), &keeper_key),
        // keeper fund, keeper market, keeper report, keeper serve: the gate or factory named.
        key(refusal(&["fund", "--rpc-url", &url, "--gate", &relayed, "--amount", "0.0000001"], "--amount 0.0000001 has 7 decimals"), &keeper_key),
        key(refusal(&["fund", "--rpc-url", &url, "--gate", &no_code, "--amount", "1"], "has no code"), &keeper_key),
        key(refusal(&["fund", "--rpc-url", &url, "--amount", "1"], "no gate: pass --gate"), &keeper_key),
        key(refusal(&["market", "create", "--rpc-url", &url, "--question", "q?", "--expiry-in", "600"], "no market factory: pass --factory or --gate"), &keeper_key),
        refusal(&["report", "--rpc-url", &url], "no --gate given and no deployment saved"),
        refusal(&["report", "--rpc-url", &url, "--gate", &no_code], "has no code"),
        refusal(&["serve", "--rpc-url", &url, "--gate", &no_code, "--listen", "127.0.0.1:0"], "has no code"),
    ];
    let nonce = w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap();
    let mut n = assert_refused(root, &table);
    // keeper deploy: the gate's constructor refuses the bounds (simulated, nothing sent). It
    // compiles the project's contracts, so it runs in the project's root. The revert is named
    // with its values, never shown as the raw bytes the node writes into its message.
    let deploy = [key(
        refusal(
            &["deploy", "--rpc-url", &url, "--trusted-resolver", &maker, "--trusted-creator", &maker, "--max-horizon", "60"],
            "the gate's constructor would refuse these arguments: MaxHorizonBelowHeadroom { maxHorizon: 60, minHeadroom: 300 }; nothing was deployed",
        ),
        &keeper_key,
    )];
    n += assert_refused(&common::root(), &deploy);
    let (_, _, err) = keeper(&common::root(), &deploy[0].args, &deploy[0].env);
    assert!(!err.contains("\\u{0}") && !err.contains('\0'), "no raw revert bytes: {err}");
    assert_eq!(
        w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap(),
        nonce,
        "no refusal sent anything"
    );
    let left: Vec<_> = std::fs::read_dir(root).unwrap().map(|e| e.unwrap().file_name()).collect();
    println!("left in the root: {left:?}");
    assert!(!root.join("results").exists(), "no refusal wrote a record");
    assert!(!root.join("deployments").exists(), "no refusal wrote a deployment");
    println!(
        "refusals the chain decides: {n} exit 2 naming what to change, nothing sent or written"
    );
    w.stop().await;
}

/// `keeper run` on a consensus gate named by a deployment `script/Deploy.s.sol` saved (which
/// lacks the deploy block the keeper fills in and saves back) refuses the gate before it
/// writes anything: the file stays byte for byte as it was, and no gate entry appears beside
/// it. Before, the file was rewritten first and the gate refused after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_on_a_consensus_gate_leaves_the_saved_deployment_byte_for_byte() {
    let _g = serial();
    let Gates { w, consensus, .. } = gates().await;
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    let dir = root.join("deployments");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("31337.json");
    let saved = serde_json::json!({
        "chain_id": 31337,
        "gate": consensus,
        "collateral": w.deployment.collateral,
        "factory": w.deployment.factory,
        "keeper": w.keeper_addr,
        "trusted_resolvers": [w.maker_addr],
        "trusted_creators": [w.maker_addr],
        "deploy_block_not_before": 0,
        "params_hash": "0x00"
    });
    let bytes = format!("{saved:#}\n").into_bytes();
    std::fs::write(&file, &bytes).unwrap();
    let args = ["run", "--once", "--rpc-url", w.anvil.url.as_str()].map(String::from);
    let env = [(s("KEEPER_PRIVATE_KEY"), s(w.anvil.dev_key(0).unwrap()))];
    let (code, _, err) = keeper(root, &args, &env);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is a consensus gate"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), bytes, "deployments/31337.json is untouched");
    let entries: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(entries, ["31337.json"], "no gate entry written beside it");
    assert!(!root.join("results").exists(), "no record started");
    println!("run on a consensus gate: refused (exit 2), deployments/31337.json byte for byte");
    w.stop().await;
}

/// On an attested gate the keeper asks its attestors and no model of its own: its start line
/// names the attestors given and k, not a model (here an OpenAI-compatible one it was given and
/// never asks).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attested_gates_start_line_names_its_attestors_not_a_model() {
    let _g = serial();
    let Gates { w, attested, .. } = gates().await;
    let scratch = tempfile::tempdir().unwrap();
    let results = scratch.path().join("results");
    let args = [
        "run",
        "--once",
        "--rpc-url",
        w.anvil.url.as_str(),
        "--gate",
        &s(attested),
        "--results",
        results.to_str().unwrap(),
        "--attestor",
        "http://127.0.0.1:9",
        "--attestor",
        "http://127.0.0.1:10",
        "--model",
        "openai",
        "--openai-url",
        "http://127.0.0.1:11",
        "--openai-model",
        "unused-model",
    ]
    .map(String::from);
    let env = [(s("KEEPER_PRIVATE_KEY"), s(w.anvil.dev_key(0).unwrap()))];
    let (code, _, err) = keeper(scratch.path(), &args, &env);
    assert_eq!(code, 0, "{err}");
    let start =
        err.lines().find(|l| l.contains("keeper starting")).unwrap_or_else(|| panic!("{err}"));
    assert!(start.contains("attestors=2") && start.contains("k=2"), "{start}");
    assert!(!start.contains("model") && !start.contains("provider"), "no model named: {start}");
    assert!(!err.contains("unused-model"), "the model given is never asked or named: {err}");
    println!("attested start line: {start}");
    w.stop().await;
}

/// `keeper attest` and `keeper serve`, stopped with SIGTERM, exit 0 and say so in a log line,
/// as `keeper run` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attest_and_serve_log_a_line_when_stopped() {
    let _g = serial();
    let Gates { w, attested, .. } = gates().await;
    let scratch = tempfile::tempdir().unwrap();
    let base = |args: &[&str]| {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_keeper"));
        cmd.arg("--root").arg(scratch.path());
        for (k, _) in std::env::vars() {
            if k.starts_with("KEEPER_") || k.starts_with("ATTESTOR_") || k == "RUST_LOG" {
                cmd.env_remove(k);
            }
        }
        cmd.args(args).args(["--rpc-url", w.anvil.url.as_str(), "--listen", "127.0.0.1:0"]);
        cmd
    };
    let mut attest = base(&["attest", "--gate", &s(attested)]);
    attest.env("ATTESTOR_PRIVATE_KEY", w.anvil.dev_key(ATTESTOR_ACCOUNTS[0]).unwrap());
    let serve = base(&["serve", "--gate", &s(w.deployment.gate)]);
    for (cmd, announces, says) in [
        (attest, "keeper attest: ", "the attestor stopped on a signal"),
        (serve, "keeper serve: ", "the floor stopped on a signal"),
    ] {
        let (mut child, _, log) = common::spawn_listening(cmd, announces).await;
        let pid = child.id().expect("running") as libc::pid_t;
        // SAFETY: a signal to the child this test spawned and still holds.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let status = tokio::time::timeout(common::HANG_GUARD, child.wait())
            .await
            .expect("it stops after SIGTERM (hang guard)")
            .unwrap();
        let err = log.finish().await;
        assert!(status.success(), "{announces}exit 0 on SIGTERM, got {status}: {err}");
        assert!(err.contains(says), "{announces}logs {says:?}: {err}");
    }
    println!("attest and serve: each logged that it stopped on SIGTERM");
    w.stop().await;
}
