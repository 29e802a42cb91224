//! The kit's compile follows foundry.toml: a gate deployed by `forge create` (forge's own build,
//! from the same foundry.toml) verifies against `riskgate_kit::compile`, and a temporary copy
//! of the project with another `optimizer_runs` compiles to different code, which then does not
//! verify: the settings are read from the file, not copied into the kit.

use alloy::{
    network::TransactionBuilder,
    primitives::{Address, Bytes},
    providers::{Provider, ProviderBuilder},
    rpc::types::TransactionRequest,
    signers::local::PrivateKeySigner,
    sol_types::SolValue,
};
use riskgate_kit::{
    anvil::{self, Anvil},
    compile::{self, code_matches, FoundryProfile},
};
use std::{path::Path, process::Command};

/// The gate's bounds: script/Deploy.s.sol's defaults (minPrice, maxPrice, maxSize, minHeadroom,
/// maxConcurrent, maxNotional, maxHorizon, maxDrawdown, writeOffGrace, minFillBps), which its
/// constructor accepts.
const BOUNDS: &str = "(50000,950000,100000000,300,3,250000000,604800,500000000,86400,2500)";
/// foundry.toml's runs, and the value the copy gets instead.
const REPO_RUNS_LINE: &str = "optimizer_runs = 10000";
const OTHER_RUNS: usize = 200;

fn deploy_code(code: &Bytes, args: &[u8]) -> Bytes {
    let mut v = code.to_vec();
    v.extend_from_slice(args);
    v.into()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forge_deployed_gate_verifies_and_the_settings_are_read_from_foundry_toml() {
    let root = riskgate_kit::workspace_root();
    let artifacts =
        compile::compile(&root).expect("contracts/src compiles with foundry.toml's settings");

    let node = Anvil::start(&anvil::default_bin(&root), None, &[]).await.unwrap();
    let signer: PrivateKeySigner = node.dev_key(0).unwrap().parse().unwrap();
    let deployer = signer.address();
    let provider = ProviderBuilder::new().wallet(signer).connect_http(node.url.clone());
    let deploy = |code: Bytes| {
        let provider = provider.clone();
        async move {
            let tx = TransactionRequest::default().with_deploy_code(code);
            let receipt = provider.send_transaction(tx).await.unwrap().get_receipt().await.unwrap();
            assert!(receipt.status());
            receipt.contract_address.expect("a deployment has an address")
        }
    };
    // The gate's collateral and factory, from the kit's build (only the gate is under test).
    let collateral = deploy(deploy_code(&artifacts.collateral.bytecode, &[])).await;
    let factory =
        deploy(deploy_code(&artifacts.factory.bytecode, &(collateral,).abi_encode_params())).await;

    // forge's own build and deployment, from the same account; the output folders are the
    // test's own so no other build races this one.
    let forge_dir = tempfile::tempdir().unwrap();
    let forge = root.join(".toolchain").join("bin").join("forge");
    let out = Command::new(&forge)
        .current_dir(&root)
        .env("FOUNDRY_OUT", forge_dir.path().join("out"))
        .env("FOUNDRY_CACHE_PATH", forge_dir.path().join("cache"))
        .args(["create", "contracts/src/RiskGate.sol:RiskGate", "--broadcast", "--json"])
        // anvil's dev accounts are unlocked: no key on the command line or anywhere else.
        .args(["--unlocked", "--from", &deployer.to_string()])
        .args(["--rpc-url", node.url.as_str()])
        .arg("--constructor-args")
        .arg(BOUNDS)
        // v2.1: one trusted resolver and one trusted creator, neither of them the keeper (the
        // constructor refuses a keeper that is either).
        .arg(format!("[{}]", Address::repeat_byte(0x0a)))
        .arg(format!("[{}]", Address::repeat_byte(0x0c)))
        .arg(collateral.to_string())
        .arg(factory.to_string())
        .arg(deployer.to_string())
        // Issue 35: the mode's setting, relayed (no attestors, every setting 0); issue 36: no
        // verdict source.
        .arg("([],0,0,0)")
        .arg(Address::ZERO.to_string())
        .output()
        .expect("forge runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "forge create failed: {}{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    // The JSON object follows forge's compiler messages (it may span several lines).
    let json = &stdout[stdout.find('{').expect("forge --json output")..];
    let created: serde_json::Value = serde_json::Deserializer::from_str(json)
        .into_iter()
        .next()
        .expect("one JSON object")
        .expect("forge's JSON parses");
    let gate: Address = created["deployedTo"].as_str().expect("deployedTo").parse().unwrap();

    let onchain = provider.get_code_at(gate).await.unwrap();
    assert!(!onchain.is_empty());
    assert!(
        code_matches(&artifacts.gate, &onchain),
        "forge's gate verifies against the kit's build"
    );
    assert!(!code_matches(&artifacts.factory, &onchain), "and is not some other contract");
    node.stop().await;

    // A copy of the project whose foundry.toml asks for another number of optimizer runs.
    let copy = tempfile::tempdir().unwrap();
    let toml = std::fs::read_to_string(root.join(compile::FOUNDRY_TOML)).unwrap();
    assert!(toml.contains(REPO_RUNS_LINE), "foundry.toml still sets {REPO_RUNS_LINE}");
    let changed = toml.replace(REPO_RUNS_LINE, &format!("optimizer_runs = {OTHER_RUNS}"));
    std::fs::write(copy.path().join(compile::FOUNDRY_TOML), changed).unwrap();
    copy_dir(&root.join("contracts").join("src"), &copy.path().join("contracts").join("src"));
    // The pinned compiler and the libraries are read in place.
    std::os::unix::fs::symlink(root.join("tools"), copy.path().join("tools")).unwrap();

    let profile = FoundryProfile::read(copy.path()).unwrap();
    assert_eq!(profile.optimizer_runs, Some(OTHER_RUNS));
    let other = compile::compile(copy.path()).expect("the copy compiles");
    assert_ne!(
        other.gate.deployed, artifacts.gate.deployed,
        "200 runs make other code than 10,000"
    );
    assert!(
        !code_matches(&other.gate, &onchain),
        "so the forge-deployed gate does not verify against it"
    );
}
