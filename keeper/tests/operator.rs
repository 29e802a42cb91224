//! What an operator meets first, against a real anvil and the real `keeper` binary: JSON logs,
//! the startup check, `keeper market create|quote|resolve`, a deployment written by
//! `script/Deploy.s.sol` found by `keeper run`, and `keeper deploy` refusing bad bounds before
//! sending anything.
// `serial()` is a std Mutex held for a whole test on purpose: the tests run one at a time.
#![allow(clippy::await_holding_lock)]

mod common;

use alloy::{
    primitives::{Address, U256},
    providers::Provider,
};
use common::{artifacts, decisions, params, root, serial, world};
use keeper::{
    chain::{self, ChainError},
    dev::world::World,
    kit::anvil::Anvil,
    kit::bindings::IBinaryMarket,
};
use std::{path::Path, process::Command};

/// Dev accounts of a spawned anvil: 0 is the world's keeper, 1 its maker (the resolver its
/// gate trusts); 4 holds ETH but no test collateral.
const KEEPER: usize = 0;
const MAKER: usize = 1;
const FRESH: usize = 4;

/// Runs the keeper binary with a clean environment (no inherited KEEPER_* settings) plus
/// `env`; returns (exit code, stdout, stderr).
fn keeper(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_keeper"));
    cmd.arg("--root").arg(root());
    for (k, _) in std::env::vars() {
        if k.starts_with("KEEPER_") || k == "RUST_LOG" {
            cmd.env_remove(k);
        }
    }
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the keeper binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Every stderr line is one JSON object with a string `timestamp` in RFC 3339 UTC and a level.
fn assert_json_lines(stderr: &str) -> Vec<serde_json::Value> {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty(), "some events were logged");
    lines
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("stderr line is not JSON ({e}): {l:?}"));
            let ts = v["timestamp"].as_str().unwrap_or_else(|| panic!("no timestamp: {l}"));
            // RFC 3339 in UTC: 2025-01-02T03:04:05.678901Z.
            assert!(ts.len() >= "2025-01-02T03:04:05Z".len() && ts.ends_with('Z'), "{ts}");
            assert_eq!(&ts[4..5], "-", "{ts}");
            assert_eq!(&ts[10..11], "T", "{ts}");
            assert!(v["level"].is_string(), "{l}");
            v
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_one_object_per_line_with_a_timestamp() {
    let _g = serial();
    // A bad configuration: the fatal error is itself one JSON object.
    let (code, _, err) = keeper(&["--log-format", "json", "run", "--once"], &[]);
    assert_ne!(code, 0, "{err}");
    let events = assert_json_lines(&err);
    assert_eq!(events.len(), 1, "{err}");
    assert_eq!(events[0]["level"], "ERROR");
    assert!(events[0]["message"].as_str().unwrap().contains("KEEPER_RPC_URL"), "{err}");

    // The same through the environment variable.
    let (code, _, err) = keeper(&["run", "--once"], &[("KEEPER_LOG_FORMAT", "json")]);
    assert_ne!(code, 0);
    assert_json_lines(&err);

    // A real cycle against a world, every line JSON.
    let w = world(&[]).await;
    let m = w
        .create_market(10_000, 100, w.fillable_min_qty(100), w.chain_time().await.unwrap() + 3_600)
        .await
        .unwrap();
    w.ask(m, 400_000, 10_000_000).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let (url, gate) = (w.anvil.url.to_string(), w.deployment.gate.to_string());
    let args = [
        "--log-format",
        "json",
        "run",
        "--once",
        "--rpc-url",
        &url,
        "--gate",
        &gate,
        "--results",
        results.to_str().unwrap(),
    ];
    let (code, out, err) =
        keeper(&args, &[("KEEPER_PRIVATE_KEY", w.anvil.dev_key(KEEPER).unwrap())]);
    assert_eq!(code, 0, "{err}");
    let events = assert_json_lines(&err);
    assert!(events.len() >= 2, "startup and cycle events: {err}");
    assert!(out.is_empty(), "a run prints no results on stdout: {out}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_check_refuses_a_wrong_or_penniless_key_and_warns_on_an_unfunded_gate() {
    let _g = serial();
    // Deployed but never funded (common::world funds the gate; this one stays at 0).
    let anvil = Anvil::start(&common::anvil_bin(), None, &[]).await.unwrap();
    let w = World::deploy_on(anvil, artifacts(), &params()).await.unwrap();
    let gate = w.deployment.gate;

    let ready = chain::check_keeper_ready(&w.keeper_rpc, gate, w.keeper_addr).await.unwrap();
    assert_eq!(ready.keeper, w.keeper_addr);
    assert_eq!(ready.gate_balance, U256::ZERO);
    assert_eq!(ready.warnings.len(), 1, "{:?}", ready.warnings);
    let warning = &ready.warnings[0];
    assert!(warning.contains("holds 0 tUSD"), "{warning}");
    assert!(warning.contains("reason 10"), "{warning}");
    assert!(warning.contains(&format!("'transfer(address,uint256)' {gate}")), "{warning}");

    // Funded: no warning.
    w.mint(gate, U256::from(1_000_000u64)).await.unwrap();
    let ready = chain::check_keeper_ready(&w.keeper_rpc, gate, w.keeper_addr).await.unwrap();
    assert!(ready.warnings.is_empty(), "{:?}", ready.warnings);
    assert_eq!(ready.gate_balance, U256::from(1_000_000u64));

    // The maker's key is not the keeper's.
    let e = chain::check_keeper_ready(&w.keeper_rpc, gate, w.maker_addr).await.unwrap_err();
    assert!(
        matches!(e, ChainError::NotKeeper { key, keeper } if key == w.maker_addr && keeper == w.keeper_addr)
    );
    let text = e.to_string();
    assert!(text.contains("is not this gate's keeper"), "{text}");
    assert!(text.contains(&format!("--keeper {}", w.maker_addr)), "{text}");

    // The keeper's key without ETH.
    let _: serde_json::Value = w
        .keeper_rpc
        .raw_request("anvil_setBalance".into(), (w.keeper_addr, U256::ZERO))
        .await
        .unwrap();
    let e = chain::check_keeper_ready(&w.keeper_rpc, gate, w.keeper_addr).await.unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, ChainError::NoGas { balance, .. } if balance.is_zero()), "{text}");
    assert!(text.contains(&format!("fund {}", w.keeper_addr)), "{text}");
    w.stop().await;
}

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("stdout is JSON ({e}): {stdout}"))
}

fn address(v: &serde_json::Value) -> Address {
    v.as_str().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn market_create_quote_run_and_resolve_from_the_command_line() {
    let _g = serial();
    let w = world(&[]).await;
    let url = w.anvil.url.to_string();
    let gate = w.deployment.gate.to_string();
    let key = |i: usize| w.anvil.dev_key(i).unwrap().to_string();
    let as_key = |i: usize| vec![("KEEPER_PRIVATE_KEY", key(i))];
    let run = |args: &[&str], env: &[(&str, String)]| {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        keeper(args, &env)
    };

    // create: the factory comes from the gate; the resolver defaults to the key (the maker,
    // whom the gate trusts); the expiry is the head's time + 3600.
    // A question is 1 to 280 bytes, checked before the chain: 281 is refused naming its length
    // and nothing is sent (the keeper's nonce does not move); an empty one is refused too.
    let create = |q: &str| {
        run(
            &[
                "market",
                "create",
                "--rpc-url",
                &url,
                "--gate",
                &gate,
                "--expiry-in",
                "3600",
                "--question",
                q,
            ],
            &as_key(MAKER),
        )
    };
    let nonce = w.keeper_rpc.get_transaction_count(w.maker_addr).await.unwrap();
    let (code, _, err) = create(&"q".repeat(281));
    assert_ne!(code, 0);
    assert!(err.contains("--question is 281 bytes; the factory accepts at most 280"), "{err}");
    let (code, _, err) = create("");
    assert_ne!(code, 0);
    assert!(err.contains("--question is empty"), "{err}");
    assert_eq!(w.keeper_rpc.get_transaction_count(w.maker_addr).await.unwrap(), nonce);

    let question = "Will ETH close above 3,000 USD on 2027-01-31?";
    let before = w.chain_time().await.unwrap();
    let (code, out, err) = create(question);
    assert_eq!(code, 0, "{err}");
    let created = json(&out);
    let market = address(&created["market"]);
    assert_eq!(created["question"].as_str(), Some(question));
    assert_eq!(
        IBinaryMarket::new(market, &w.keeper_rpc).questionHash().call().await.unwrap(),
        alloy::primitives::keccak256(question.as_bytes())
    );
    assert_eq!(address(&created["factory"]), w.deployment.factory);
    assert_eq!(address(&created["resolver"]), w.maker_addr);
    let expiry = created["expiry"].as_u64().unwrap();
    assert_eq!(expiry, before + 3_600, "no block was mined between the read and the create");
    let m = IBinaryMarket::new(market, &w.keeper_rpc);
    assert_eq!(m.resolver().call().await.unwrap(), w.maker_addr);
    assert_eq!(m.tickSize().call().await.unwrap(), U256::from(1_000u64), "default tick");

    // quote from an account with no tUSD: the shortfall is minted. Escrow: the bid pays
    // 10_000_000 × 400_000 / 1e6 = 4_000_000, the ask 10_000_000 × (1e6 − 600_000) / 1e6 =
    // 4_000_000; 8_000_000 in all.
    let mk = market.to_string();
    let (code, out, err) = run(
        &[
            "market",
            "quote",
            "--rpc-url",
            &url,
            "--market",
            &mk,
            "--bid",
            "400000",
            "--ask",
            "600000",
            "--qty",
            "10000000",
        ],
        &as_key(FRESH),
    );
    assert_eq!(code, 0, "{err}");
    let quoted = json(&out);
    assert_eq!(quoted["funding"]["minted"], serde_json::json!("0x7a1200"), "8_000_000 = 0x7a1200");
    assert_eq!(quoted["orders"].as_array().unwrap().len(), 2);
    assert_eq!(m.bestBid().call().await.unwrap(), U256::from(400_000u64));
    assert_eq!(m.bestAsk().call().await.unwrap(), U256::from(600_000u64));

    // A crossed quote is refused before anything is sent.
    let (code, _, err) = run(
        &[
            "market",
            "quote",
            "--rpc-url",
            &url,
            "--market",
            &mk,
            "--bid",
            "600000",
            "--ask",
            "600000",
            "--qty",
            "1000",
        ],
        &as_key(FRESH),
    );
    assert_ne!(code, 0);
    assert!(err.contains("would cross"), "{err}");

    // The keeper sees the market and decides it.
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let (code, _, err) = run(
        &[
            "run",
            "--once",
            "--rpc-url",
            &url,
            "--gate",
            &gate,
            "--results",
            results.to_str().unwrap(),
        ],
        &as_key(KEEPER),
    );
    assert_eq!(code, 0, "{err}");
    let rows = common::record_rows(&results);
    let decided = decisions(&rows);
    assert!(
        decided.iter().any(|d| d.market == market.to_checksum(None)),
        "the created market was decided: {decided:?}"
    );

    // resolve: the wrong key, then too early, then the resolver after expiry.
    let resolve = ["market", "resolve", "--rpc-url", &url, "--market", &mk, "--outcome", "up"];
    let (code, _, err) = run(&resolve, &as_key(FRESH));
    assert_ne!(code, 0);
    assert!(err.contains("is not the resolver"), "{err}");
    assert!(err.contains(&w.maker_addr.to_string()), "names the resolver: {err}");
    // Too early whatever the machine's speed: chain time moves 1 s per block
    // (`common::world`), and only a handful of blocks were mined since the create.
    let (code, _, err) = run(&resolve, &as_key(MAKER));
    assert_ne!(code, 0);
    assert!(err.contains("NotYetExpired"), "{err}");
    assert!(!err.contains("NotYetExpired(NotYetExpired"), "named once: {err}");
    w.mine_at(expiry).await.unwrap();
    let (code, out, err) = run(&resolve, &as_key(MAKER));
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["outcome"], "up");
    assert!(m.finalized().call().await.unwrap());
    assert!(m.upWins().call().await.unwrap());
    w.stop().await;
}

/// A throw-away project root for forge: the sources, scripts and pinned tools linked in, so
/// the script's deployments/ lands here and not in the repository.
/// `keeper deploy` against `anvil` from the project root `dir`, signed by the keeper's dev key.
fn keeper_deploy(anvil: &Anvil, dir: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_keeper"))
        .arg("--root")
        .arg(dir)
        .args(["deploy", "--rpc-url", anvil.url.as_str()])
        .args(extra)
        .env("KEEPER_PRIVATE_KEY", anvil.dev_key(KEEPER).unwrap())
        .env_remove("KEEPER_KEYSTORE")
        .output()
        .unwrap()
}

/// `keeper deploy` of a gate trusting `maker` as its resolver and creator: its JSON.
fn deploy_trusting(anvil: &Anvil, dir: &Path, maker: &str) -> serde_json::Value {
    let out = keeper_deploy(anvil, dir, &["--trusted-resolver", maker, "--trusted-creator", maker]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    json(&String::from_utf8_lossy(&out.stdout))
}

/// A fresh anvil, a scratch project root beside it, and the maker's address (the trusted
/// resolver and creator the deploy tests name).
async fn scratch_chain() -> (Anvil, tempfile::TempDir, String) {
    let anvil = Anvil::start(&common::anvil_bin(), None, &[]).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    scratch_root(dir.path());
    let maker = chain::dev_signer(anvil.dev_key(MAKER).unwrap()).unwrap().address().to_string();
    (anvil, dir, maker)
}

fn scratch_root(dir: &Path) {
    let root = root();
    for name in ["contracts", "script", "tools"] {
        std::os::unix::fs::symlink(root.join(name), dir.join(name)).unwrap();
    }
    std::fs::copy(root.join("foundry.toml"), dir.join("foundry.toml")).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keeper_run_finds_a_gate_deployed_by_the_forge_script() {
    let _g = serial();
    let (anvil, dir, maker) = scratch_chain().await;
    let url = anvil.url.to_string();
    let forge = root().join(".toolchain/bin/forge");
    let out = Command::new(&forge)
        .current_dir(dir.path())
        .args(["script", "script/Deploy.s.sol", "--rpc-url", &url, "--broadcast"])
        .env("DEPLOYER_PRIVATE_KEY", anvil.dev_key(KEEPER).unwrap())
        // v2.1: no role defaults to the deployer; the maker resolves and creates markets.
        .env("GATE_TRUSTED_RESOLVERS", &maker)
        .env("GATE_TRUSTED_CREATORS", &maker)
        .env("FOUNDRY_OUT", dir.path().join("out"))
        .env("FOUNDRY_CACHE_PATH", dir.path().join("cache"))
        .output()
        .expect("the pinned forge runs (make bootstrap)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let saved = dir.path().join("deployments/31337.json");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    for key in
        ["chain_id", "gate", "collateral", "factory", "keeper", "trusted_resolvers", "params_hash"]
    {
        assert!(!written[key].is_null(), "the script writes {key}: {written}");
    }
    assert!(written["deploy_block"].is_null(), "the script cannot know it: {written}");
    // And the gate's own entry, under the checksummed address the keeper looks it up by.
    let script_gate: Address = written["gate"].as_str().unwrap().parse().unwrap();
    let own = keeper::commands::deploy::gate_path(dir.path(), 31_337, script_gate);
    assert!(own.exists(), "the script writes {}", own.display());
    // A fresh anvil at block 0: the script simulated on head 0.
    assert_eq!(written["deploy_block_not_before"], 0);

    // No --gate: the keeper reads the script's file, and completes it.
    let results = dir.path().join("results");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_keeper"));
    cmd.arg("--root").arg(dir.path());
    for (k, _) in std::env::vars() {
        if k.starts_with("KEEPER_") {
            cmd.env_remove(k);
        }
    }
    let run = cmd
        .args(["run", "--once", "--rpc-url", &url, "--results", results.to_str().unwrap()])
        .env("KEEPER_PRIVATE_KEY", anvil.dev_key(KEEPER).unwrap())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    let gate = written["gate"].as_str().unwrap().to_lowercase();
    assert!(err.to_lowercase().contains(&gate), "runs the saved gate: {err}");
    let completed: keeper::commands::deploy::Deployment =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    // The block forge saw the gate's creation mined in, from its own broadcast receipts (on a
    // loaded machine anvil may mine two of the script's transactions in one block, so the
    // number is read, not assumed).
    let broadcast = dir.path().join("broadcast/Deploy.s.sol/31337/run-latest.json");
    let receipts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&broadcast).unwrap()).unwrap();
    let created_in = receipts["receipts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["contractAddress"].as_str().is_some_and(|a| a.to_lowercase() == gate))
        .and_then(|r| r["blockNumber"].as_str())
        .map(|n| u64::from_str_radix(n.trim_start_matches("0x"), 16).unwrap())
        .expect("forge's receipt of the gate's creation");
    assert!(created_in >= 1, "after the collateral's block at least");
    assert_eq!(completed.deploy_block, created_in);
    assert_eq!(completed.gate.to_string().to_lowercase(), gate);
    assert_eq!(completed.params_hash, written["params_hash"].as_str().unwrap());

    // `keeper report` without --gate reads the same file (before, it stopped at "no gate
    // address") and rebuilds the record `run` wrote.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_keeper"));
    cmd.arg("--root").arg(dir.path());
    for (k, _) in std::env::vars() {
        if k.starts_with("KEEPER_") {
            cmd.env_remove(k);
        }
    }
    let report = cmd
        .args(["report", "--rpc-url", &url, "--results", results.to_str().unwrap()])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&report.stdout);
    let err = String::from_utf8_lossy(&report.stderr);
    assert!(report.status.success(), "report without --gate: {out}{err}");
    assert!(results.join("RESULTS.md").exists(), "{out}{err}");
    anvil.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keeper_deploy_refuses_bad_bounds_before_sending_anything() {
    let _g = serial();
    let (anvil, dir, maker) = scratch_chain().await;
    let deployer: Address = chain::dev_signer(anvil.dev_key(KEEPER).unwrap()).unwrap().address();
    let deploy = |extra: &[&str]| keeper_deploy(&anvil, dir.path(), extra);
    // No trusted resolver or creator: no default to the deployer any more; said so.
    let out = deploy(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("no --trusted-resolver given"), "{err}");
    let out = deploy(&["--trusted-resolver", &maker]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no --trusted-creator given"), "{err}");
    // The keeper (the deployer) named as a trusted creator: refused by name, before sending.
    let me = deployer.to_string();
    let out = deploy(&["--trusted-resolver", &maker, "--trusted-creator", &me]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains(&format!("keeper {deployer} is also a trusted creator")), "{err}");
    // A horizon (60 s) below the default headroom (300 s): the constructor's
    // MaxHorizonBelowHeadroom(60, 300).
    let out =
        deploy(&["--max-horizon", "60", "--trusted-resolver", &maker, "--trusted-creator", &maker]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("MaxHorizonBelowHeadroom { maxHorizon: 60, minHeadroom: 300 }"), "{err}");
    assert_eq!(err.matches("MaxHorizonBelowHeadroom").count(), 1, "named once: {err}");
    assert!(err.contains("nothing was deployed"), "{err}");
    // An attested gate asking 3 agreeing answers of 2 attestors: ThresholdOutOfRange(3, 2).
    let (s1, s2) = (
        "0x00000000000000000000000000000000000000a1",
        "0x00000000000000000000000000000000000000a2",
    );
    let trusting = ["--trusted-resolver", &maker, "--trusted-creator", &maker];
    let attested = ["--attestor-signer", s2, "--attestor-signer", s1];
    let mut flags: Vec<&str> = trusting.to_vec();
    flags.extend(attested);
    let mut three = flags.clone();
    three.extend(["--attestor-threshold", "3"]);
    let out = deploy(&three);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("ThresholdOutOfRange { threshold: 3, attestors: 2 }"), "{err}");
    // A setting without attestors: refused by the CLI.
    let mut orphan = trusting.to_vec();
    orphan.extend(["--max-read-age", "9"]);
    let err = String::from_utf8_lossy(&deploy(&orphan).stderr).to_string();
    assert!(err.contains("--max-read-age is given without any --attestor-signer"), "{err}");
    let reader = chain::read_provider(&anvil.url).unwrap();
    assert_eq!(reader.get_transaction_count(deployer).await.unwrap(), 0, "no transaction sent");
    assert_eq!(reader.get_block_number().await.unwrap(), 0, "no block mined");
    assert!(!dir.path().join("deployments/31337.json").exists());
    // The attested gate deploys with the defaults: signers sorted, a majority (2 of 2), reads
    // at most 5 blocks old, 200 bps.
    let out = deploy(&flags);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("deployments/31337.json")).unwrap())
            .unwrap();
    let gate: Address = saved["gate"].as_str().unwrap().parse().unwrap();
    let set = chain::attestor_set(&reader, gate).await.unwrap().expect("an attested gate");
    assert_eq!(set.signers, vec![s1.parse::<Address>().unwrap(), s2.parse().unwrap()]);
    assert_eq!((set.threshold, set.max_read_age, set.max_slippage_bps), (2, 5, 200));
    anvil.stop().await;
}

/// A free loopback port with nothing listening on it (bound, then released): connecting to it
/// is refused until something binds it again.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Adversary: a flaky node, down when the keeper starts (a node and its bot started together,
/// a node restarting). With `--max-outage-secs` the keeper waits for it as it waits out an
/// outage mid-run: past the budget it gives up with the cause; within it, it carries on the
/// moment the node answers. Without the flag an unreachable node at start is a one-line error
/// (reliability.rs: `bad_configuration_is_one_line_with_a_fix_and_a_nonzero_exit`), and a TLS
/// error is never waited for (inference.rs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_down_at_start_is_waited_for() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let results = results.to_str().unwrap();
    let key = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
    let gate = "0x0000000000000000000000000000000000000001";

    // Nothing ever listens: given up after --max-outage-secs 1, naming it and the cause.
    let rpc = format!("http://127.0.0.1:{}", closed_port());
    let (code, _, err) = keeper(
        &["run", "--once", "--rpc-url", &rpc, "--gate", gate, "--results", results],
        &[("KEEPER_PRIVATE_KEY", key), ("KEEPER_MAX_OUTAGE_SECS", "1")],
    );
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("node unreachable at start; waiting for it"), "{err}");
    assert!(err.contains("past --max-outage"), "{err}");
    assert!(err.contains(&format!("cannot reach the RPC at {rpc}")), "the cause is kept: {err}");

    // The node comes up on that port while the keeper waits: it connects and runs its cycle.
    let w = world(&[]).await;
    let port = closed_port();
    let rpc = format!("http://127.0.0.1:{port}");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_keeper"))
        .arg("--root")
        .arg(root())
        .args(["run", "--once", "--rpc-url", &rpc, "--results", results])
        .arg("--gate")
        .arg(w.deployment.gate.to_string())
        .env("KEEPER_PRIVATE_KEY", w.anvil.dev_key(KEEPER).unwrap())
        // Far above the hang guard: the keeper waits as long as the test lets it.
        .env("KEEPER_MAX_OUTAGE_SECS", "3600")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    // Hang guard only: the keeper prints its first "waiting" line within a second of starting.
    tokio::time::timeout(common::HANG_GUARD, async {
        use tokio::io::AsyncBufReadExt;
        while !seen.contains("waiting for it") {
            let mut line = String::new();
            assert!(stderr.read_line(&mut line).await.unwrap() > 0, "exited early: {seen}");
            seen.push_str(&line);
        }
    })
    .await
    .expect("the keeper reports that it waits");
    // Now the port forwards to the world's anvil.
    let upstream = format!(
        "{}:{}",
        w.anvil.url.host_str().unwrap(),
        w.anvil.url.port_or_known_default().unwrap()
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let upstream = upstream.clone();
            tokio::spawn(async move {
                let mut out = tokio::net::TcpStream::connect(upstream).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
            });
        }
    });
    let status = tokio::time::timeout(common::HANG_GUARD, async {
        let mut rest = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut rest).await.unwrap();
        seen.push_str(&rest);
        child.wait().await.unwrap()
    })
    .await
    .expect("the keeper finishes its cycle once the node is up");
    assert!(status.success(), "{seen}");
    assert!(seen.contains("cycle done"), "{seen}");
    // A first start (the folder holds no feed yet) is not taken for an edited feed.
    assert!(!seen.contains("not the one the keeper wrote last"), "{seen}");
    println!("operator: a node down at start is waited for; with --max-outage-secs 1 the keeper gives up with the cause");
    w.stop().await;
}

alloy::sol! {
    #[sol(rpc)]
    interface IGateConstants {
        function RAW_HEAD_BYTES() external view returns (uint256);
        function MAX_TRUSTED_RESOLVERS() external view returns (uint256);
        function MAX_TRUSTED_CREATORS() external view returns (uint256);
        function MAX_ATTESTORS() external view returns (uint256);
    }
}

/// The numbers the keeper checks configuration and answers against are the deployed gate's
/// own, read from its public constants: the one place in kit that holds them cannot drift from
/// the contract unseen. (Each is defined once in the contracts, in `GateLimits` and
/// `VerdictParser`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keepers_copies_of_the_gates_constants_are_the_gates() {
    let _g = serial();
    let w = world(&[]).await;
    let gate = IGateConstants::new(w.deployment.gate, &w.keeper_rpc);
    let on_chain = |v: U256| usize::try_from(v).unwrap();
    // 64 bytes of the answer in a Decision log, and no longer answer parses.
    assert_eq!(on_chain(gate.RAW_HEAD_BYTES().call().await.unwrap()), 64);
    assert_eq!(
        on_chain(gate.RAW_HEAD_BYTES().call().await.unwrap()),
        keeper::kit::bindings::RAW_HEAD_BYTES
    );
    assert_eq!(
        on_chain(gate.MAX_TRUSTED_RESOLVERS().call().await.unwrap()),
        keeper::domain::config::MAX_TRUSTED_RESOLVERS
    );
    assert_eq!(
        on_chain(gate.MAX_TRUSTED_CREATORS().call().await.unwrap()),
        keeper::domain::config::MAX_TRUSTED_CREATORS
    );
    assert_eq!(
        on_chain(gate.MAX_ATTESTORS().call().await.unwrap()),
        keeper::kit::bindings::MAX_ATTESTORS
    );
    // The keeper reads answers as the gate does: "ABSTAIN" padded with trimmed spaces to 64
    // bytes is ABSTAIN; padded to 65 it is past the length the gate parses, so INVALID.
    let padded = |n: usize| format!("ABSTAIN{}", " ".repeat(n - "ABSTAIN".len()));
    let max = keeper::kit::bindings::RAW_HEAD_BYTES;
    assert_eq!(
        keeper::domain::decision::gate_verdict(&padded(max)),
        keeper::kit::bindings::verdict::ABSTAIN
    );
    assert_eq!(
        keeper::domain::decision::gate_verdict(&padded(max + 1)),
        keeper::kit::bindings::verdict::INVALID
    );
    w.stop().await;
}

/// An attested gate (issue 35) takes answers only with k of n attestor signatures: a keeper
/// started on it without attestors is refused at start by name, before it sends anything, and
/// the gate itself reverts its `submitVerdict` naming the mode; a relayed gate given attestors
/// is refused too. Adversary: a keeper pointed at (or trying to go around) an attested gate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attested_gate_refuses_the_relaying_keeper_by_name() {
    use keeper::kit::bindings::IRiskGate;
    let _g = serial();
    let w = world(&[]).await;
    let signers: Vec<Address> = (1u8..=3).map(|b| Address::repeat_byte(0x40 + b)).collect();
    let attested = common::deploy_beside(&w, common::attested(signers, 2)).await;
    let g = IRiskGate::new(attested.gate, &w.keeper_rpc);
    assert_eq!(g.gateMode().call().await.unwrap(), IRiskGate::GateMode::Attested);
    assert_ne!(g.attestorSet().call().await.unwrap(), Address::ZERO);
    // The gate: submitVerdict reverts WrongGateMode(Attested).
    common::assert_submit_verdict_refused(&w, attested.gate, IRiskGate::GateMode::Attested).await;
    // The keeper: refused at start, by name, exit non-zero, nothing sent.
    let nonce_before = w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = keeper(
        &[
            "run",
            "--once",
            "--rpc-url",
            w.anvil.url.as_str(),
            "--gate",
            &attested.gate.to_string(),
            "--results",
            dir.path().to_str().unwrap(),
        ],
        &[("KEEPER_PRIVATE_KEY", w.anvil.dev_key(KEEPER).unwrap())],
    );
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("is attested"), "{stderr}");
    assert!(stderr.contains("2 of 3 attestor signatures"), "{stderr}");
    assert!(stderr.contains("--attestor"), "{stderr}");
    assert_eq!(w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap(), nonce_before);
    // A relayed gate given attestors: refused, since they would never be asked.
    let (code, _, stderr) = keeper(
        &[
            "run",
            "--once",
            "--rpc-url",
            w.anvil.url.as_str(),
            "--gate",
            &w.deployment.gate.to_string(),
            "--attestor",
            "http://127.0.0.1:9",
            "--results",
            dir.path().to_str().unwrap(),
        ],
        &[("KEEPER_PRIVATE_KEY", w.anvil.dev_key(KEEPER).unwrap())],
    );
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("is relayed"), "{stderr}");
    assert_eq!(w.keeper_rpc.get_transaction_count(w.keeper_addr).await.unwrap(), nonce_before);
    println!("an attested gate: submitVerdict reverts WrongGateMode(Attested); keeper run without --attestor exits naming the mode; a relayed gate with --attestor exits {code}");
    w.stop().await;
}

/// Two `keeper deploy`s on one chain: the second becomes the chain's default and the first keeps
/// its own entry, deploy block and all, so `keeper run --gate <first>` still knows where its
/// history starts (before, the second silently overwrote deployments/31337.json and the first
/// gate's deploy block was gone). Adversary: an operator redeploying, the routine of a testnet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_deploy_moves_the_default_and_drops_no_gate() {
    let _g = serial();
    let (anvil, dir, maker) = scratch_chain().await;
    let deploy = || {
        let roles = ["--trusted-resolver", &maker, "--trusted-creator", &maker];
        let out = keeper_deploy(&anvil, dir.path(), &roles);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{err}");
        let d: keeper::commands::deploy::Deployment =
            serde_json::from_slice(&out.stdout).expect("deploy prints its deployment");
        (d, err)
    };
    let (first, _) = deploy();
    let (second, log) = deploy();
    assert_ne!(first.gate, second.gate);
    assert!(log.contains("previous one stays in its own file"), "said, not silent: {log}");
    let read = |p: std::path::PathBuf| -> keeper::commands::deploy::Deployment {
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
    };
    let root = dir.path();
    assert_eq!(
        read(keeper::commands::deploy::saved_path(root, 31_337)),
        second,
        "the default moved on"
    );
    assert_eq!(read(keeper::commands::deploy::gate_path(root, 31_337, second.gate)), second);
    let kept = read(keeper::commands::deploy::gate_path(root, 31_337, first.gate));
    assert_eq!(kept, first, "the first gate's entry, deploy block {} and all", first.deploy_block);
    let found =
        keeper::commands::deploy::read_saved_for(root, 31_337, first.gate).unwrap().unwrap();
    assert_eq!(found.deployment.deploy_block, Some(first.deploy_block));
    anvil.stop().await;
}

/// Configuration errors stop the keeper at start (issue 32): one line naming the flag, exit
/// code 2, nothing connected or written. Before, a malformed --openai-url started the run (one
/// warning, exit 0, every due market an off-chain row) and a missing --root was created.
#[test]
fn configuration_errors_stop_the_keeper_at_start_with_exit_code_2() {
    let gate = Address::ZERO.to_string();
    let run = |url: &str| {
        keeper(
            &[
                "run",
                "--once",
                "--rpc-url",
                "http://127.0.0.1:1",
                "--gate",
                &gate,
                "--model",
                "openai",
                "--openai-model",
                "m",
                "--openai-url",
                url,
            ],
            &[("KEEPER_PRIVATE_KEY", &format!("0x{}", "11".repeat(32)))],
        )
    };
    for (url, says) in [
        ("127.0.0.1:18082", "--openai-url \"127.0.0.1:18082\" is not a valid URL"),
        ("http//x y", "--openai-url \"http//x y\" is not a valid URL"),
        ("ftp://127.0.0.1/v1", "is not an http(s) URL (its scheme is \"ftp\")"),
    ] {
        let (code, _, err) = run(url);
        assert_eq!(code, 2, "{url}: {err}");
        assert!(err.contains(says), "{url}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{url}: one line: {err}");
    }
    let (code, _, err) =
        keeper(&["report", "--rpc-url", "file:///etc/passwd", "--gate", &gate], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--rpc-url \"file:///etc/passwd\" is not an http(s) URL"), "{err}");

    // A --root that does not exist is refused, not created.
    let scratch = tempfile::tempdir().unwrap();
    let missing = scratch.path().join("riskgate-typo");
    let out = Command::new(env!("CARGO_BIN_EXE_keeper"))
        .arg("--root")
        .arg(&missing)
        .args(["run", "--once", "--rpc-url", "http://127.0.0.1:1", "--gate", &gate])
        .env_remove("KEEPER_ROOT")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("does not exist or is not a folder"), "{err}");
    assert!(err.contains(&format!("mkdir -p {}", missing.display())), "{err}");
    assert!(!missing.exists(), "the missing root was created");
    println!("config errors: 5 malformed endpoints and a missing --root each stopped with exit 2");
}

/// `keeper market create`'s default grid is one a gate with `keeper deploy`'s default bounds
/// can buy in (issue 32: tick 1000, lot 1000 and minimum 0 made every buy reason 20, and
/// nothing said so); a grid the named --gate would refuse is warned about, naming the rule and
/// the minimum; and `keeper run` says once that it will not ask about such a market instead of
/// spending an ask and a transaction on a known refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_market_grid_the_gate_refuses_is_warned_about_and_never_asked() {
    let _g = serial();
    let (anvil, dir, maker) = scratch_chain().await;
    let url = anvil.url.to_string();
    let gate = address(&deploy_trusting(&anvil, dir.path(), &maker)["gate"]).to_string();
    let in_dir = |args: &[&str], key: usize| {
        let out = Command::new(env!("CARGO_BIN_EXE_keeper"))
            .arg("--root")
            .arg(dir.path())
            .args(args)
            .env("KEEPER_PRIVATE_KEY", anvil.dev_key(key).unwrap())
            .env_remove("KEEPER_KEYSTORE")
            .env_remove("KEEPER_ROOT")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{args:?}: {err}");
        (String::from_utf8_lossy(&out.stdout).to_string(), err)
    };
    let create = |extra: &[&str]| {
        let mut args = vec![
            "market",
            "create",
            "--rpc-url",
            &url,
            "--gate",
            &gate,
            "--expiry-in",
            "3600",
            "--question",
            "Will it rain?",
        ];
        args.extend_from_slice(extra);
        in_dir(&args, MAKER)
    };
    // The defaults: no warning, and the minimum the default gate needs.
    let (out, err) = create(&[]);
    let good = json(&out);
    assert_eq!(good["min_qty"], 400_000, "{out}");
    assert!(!err.contains("will refuse every buy"), "{err}");
    // The old defaults' grid: warned, with the rule and the minimum (100e6 × 2500 / (64 ×
    // 10000) = 390,625).
    let (out, err) = create(&["--min-qty", "0"]);
    let bad = address(&json(&out)["market"]);
    assert!(err.contains("the gate will refuse every buy in this market: rule 20"), "{err}");
    assert!(err.contains("needs at least 390625"), "{err}");

    // keeper run: the refused grid is said once and never asked; the good one is asked.
    let results = dir.path().join("results");
    let (_, err) = in_dir(
        &[
            "run",
            "--once",
            "--dry-run",
            "--rpc-url",
            &url,
            "--gate",
            &gate,
            "--results",
            results.to_str().unwrap(),
        ],
        KEEPER,
    );
    let said: Vec<&str> =
        err.lines().filter(|l| l.contains("not asked: the gate refuses every buy")).collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(said[0].contains(&bad.to_string()) && said[0].contains("rule 20"), "{err}");
    let good_market = address(&good["market"]).to_string();
    assert!(!said[0].contains(&good_market), "{err}");
    println!("grid: default min-qty 400000 passes rule 20 (needs 390625); min-qty 0 warned at create and skipped by run");
    anvil.stop().await;
}

/// Issue 32 (minor): funding a gate took `cast` (approve, then `deposit`), and cast 1.7.1's
/// calls are refused by some nodes. `keeper fund` does both from the key's address. A fresh
/// gate's high-water mark H is 0; each deposit raises it by what arrived (docs/lifetime-bound.md),
/// so 12.5 tokens then 1 token at 6 decimals give H = 12,500,000 then 13,500,000. The funder
/// (dev account 4) holds no test collateral: the shortfall is minted (open faucet) first.
/// Malformed amounts never reach the chain (clap's usage error, exit 2); an amount finer than
/// the token's decimals is refused, not rounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keeper_fund_deposits_into_the_gate_and_refuses_what_it_cannot_do_exactly() {
    let _g = serial();
    let (anvil, dir, maker) = scratch_chain().await;
    let url = anvil.url.to_string();
    let deployed = deploy_trusting(&anvil, dir.path(), &maker);
    let gate = address(&deployed["gate"]);
    let collateral = address(&deployed["collateral"]);
    let fund = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_keeper"))
            .arg("--root")
            .arg(dir.path())
            .args(["fund", "--rpc-url", &url])
            .args(extra)
            .env("KEEPER_PRIVATE_KEY", anvil.dev_key(FRESH).unwrap())
            .env_remove("KEEPER_KEYSTORE")
            .env_remove("KEEPER_ROOT")
            .env_remove("KEEPER_GATE")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let p = alloy::providers::ProviderBuilder::new().connect_http(anvil.url.clone());
    let g = keeper::kit::bindings::IRiskGate::new(gate, &p);
    let token = keeper::chain::IErc20View::new(collateral, &p);

    // Without --gate: the chain's default gate from deployments/<chain-id>.json.
    let (code, out, err) = fund(&["--amount", "12.5"]);
    assert_eq!(code, 0, "{err}");
    let got = json(&out);
    assert_eq!(address(&got["gate"]), gate);
    assert_eq!(
        (&got["amount_base_units"], &got["minted"], &got["approved"], &got["high_water_mark"]),
        (
            &serde_json::json!("12500000"),
            &serde_json::json!("12500000"),
            &serde_json::json!(true),
            &serde_json::json!("12500000")
        ),
        "{out}"
    );
    assert_eq!(got["symbol"], "tUSD");
    assert_eq!(g.highWaterMark().call().await.unwrap(), U256::from(12_500_000u64));
    assert_eq!(token.balanceOf(gate).call().await.unwrap(), U256::from(12_500_000u64));

    let gate_s = gate.to_string();
    let (code, out, err) = fund(&["--gate", &gate_s, "--amount", "1"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["high_water_mark"], "13500000", "{out}");

    // Refused before any endpoint is asked: exit 2 (a usage error), the flag named.
    for bad in ["-5", "1e6", "0", "", "12.", "ten"] {
        let (code, _, err) = fund(&["--amount", bad]);
        assert_eq!(code, 2, "--amount {bad:?}: {err}");
        assert!(err.contains("--amount"), "{err}");
    }
    // Finer than the token: 7 decimals on a 6-decimal token (a refused input: exit 2 too).
    let (code, _, err) = fund(&["--amount", "0.0000001"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--amount 0.0000001 has 7 decimals; tUSD has 6"), "{err}");
    // Not a gate: an address with no code.
    let (code, _, err) =
        fund(&["--gate", "0x000000000000000000000000000000000000dEaD", "--amount", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("has no code"), "{err}");
    // Nothing of the refused calls moved money.
    assert_eq!(g.highWaterMark().call().await.unwrap(), U256::from(13_500_000u64));
    anvil.stop().await;
}
