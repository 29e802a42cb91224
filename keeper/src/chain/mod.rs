//! The chain layer: everything that talks to a node. The provider and the keeper's signer
//! ([`connect_checked`] and the checks below), the reads of markets, books and logs ([`reads`], and the
//! deployless [`lens`] that reads many books in one call), the [`follower`] that keeps the
//! blocks read and notices reorgs, signing and sending with nonces and re-sends ([`sender`]),
//! and the [`journal`] of the keeper's own transactions in the state database.
//!
//! May import: inference, record, domain, kit.
//!
//! Chain access: providers, the keeper's signer, and the checks that turn a wrong endpoint, a
//! wrong chain or a wrong address into a one-line error that says how to fix it.

pub mod attestation;
pub mod follower;
pub mod journal;
pub mod lens;
pub mod reads;
pub mod sender;

use crate::{
    domain::config::ChainConfig,
    kit::bindings::{IRiskGate, REASON_COUNT, REASON_LABELS},
};
use alloy::{
    network::EthereumWallet,
    primitives::{Address, B256, U256},
    providers::{DynProvider, Provider, ProviderBuilder},
    rpc::client::RpcClient,
    signers::local::{LocalSigner, PrivateKeySigner},
    transports::http::Http,
};
use std::{path::Path, time::Duration};

#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    #[error("cannot reach the RPC at {url} (is the node running and the URL right?)")]
    Unreachable {
        url: String,
        #[source]
        source: Box<alloy::transports::TransportError>,
    },
    #[error("the RPC reports chain {actual} but {expected} was expected: wrong --rpc-url or --chain-id?")]
    WrongChain { expected: u64, actual: u64 },
    #[error("gate at {addr} has no code on chain {chain_id}: wrong --gate or wrong RPC?")]
    NoCode { addr: Address, chain_id: u64 },
    #[error(
        "{addr} on chain {chain_id} does not answer like a RiskGate ({reason}): wrong --gate?"
    )]
    NotAGate { addr: Address, chain_id: u64, reason: String },
    #[error(
        "{addr} on chain {chain_id} does not answer like a RiskGate (its {call} call fails: a pre-v2 gate, or not a gate): wrong --gate?"
    )]
    NotAGateCall {
        addr: Address,
        chain_id: u64,
        call: &'static str,
        #[source]
        source: Box<alloy::contract::Error>,
    },
    #[error("gate {addr} on chain {chain_id} is attested (it takes answers only with {k} of {n} attestor signatures): give each attestor's URL with --attestor")]
    NoAttestors { addr: Address, chain_id: u64, k: u8, n: usize },
    #[error("gate {addr} on chain {chain_id} is relayed: it takes no attested answers, so --attestor has nothing to do; drop it, or point --gate at an attested gate")]
    AttestorsOnRelayed { addr: Address, chain_id: u64 },
    #[error("gate {addr} on chain {chain_id} is a consensus gate: its verdicts come only from its verdict source {source_addr} (Somnia's validators), so a keeper has nothing to submit; ask through the source (docs/somnia.md)")]
    ConsensusGate { addr: Address, chain_id: u64, source_addr: Address },
    #[error("reading gate {addr}'s mode (its attestor set or verdict source) failed")]
    AttestorSet {
        addr: Address,
        #[source]
        source: Box<alloy::contract::Error>,
    },
    #[error("no key: set {key_var} (hex) or pass --keystore FILE with {password_var}")]
    MissingKey { key_var: &'static str, password_var: &'static str },
    #[error("{key_var} is not a valid hex private key (value withheld); fix the variable")]
    BadKey { key_var: &'static str },
    #[error("--keystore {path} cannot be opened: check the file and {password_var}")]
    Keystore {
        path: String,
        password_var: &'static str,
        #[source]
        source: Box<alloy::signers::local::LocalSignerError>,
    },
    #[error("no --gate given and no deployment saved for chain {chain_id} at {path}: pass --gate or set KEEPER_GATE, or run `keeper deploy` first")]
    NoSavedGate { chain_id: u64, path: String },
    #[error("deployment file {path} is not a keeper deployment ({reason}): pass --gate instead")]
    BadSavedGate { path: String, reason: String },
    #[error("RPC call failed")]
    Rpc(#[source] Box<alloy::transports::TransportError>),
    #[error("contract call failed")]
    Call(#[source] Box<alloy::contract::Error>),
    #[error("cannot build the RPC HTTP client (TLS roots: the system store, or SSL_CERT_FILE)")]
    HttpClient(#[source] reqwest::Error),
    #[error("key {key} is not this gate's keeper {keeper}: use the keeper key, or deploy a gate with --keeper {key}")]
    NotKeeper { key: Address, keeper: Address },
    #[error("key {key} holds {balance} wei on chain {chain_id}, less than the {needed} wei one submission may cost at the current gas price: fund {key} with ETH for gas")]
    NoGas { key: Address, balance: U256, needed: U256, chain_id: u64 },
}

impl crate::domain::exit::Classify for ChainError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            // What the operator named is not what the command needs: the chain, the gate, its
            // mode, the key, the saved deployment.
            Self::WrongChain { .. }
            | Self::NoCode { .. }
            | Self::NotAGate { .. }
            | Self::NotAGateCall { .. }
            | Self::NoAttestors { .. }
            | Self::AttestorsOnRelayed { .. }
            | Self::ConsensusGate { .. }
            | Self::MissingKey { .. }
            | Self::BadKey { .. }
            | Self::Keystore { .. }
            | Self::NoSavedGate { .. }
            | Self::BadSavedGate { .. }
            | Self::NotKeeper { .. } => Input,
            Self::Unreachable { .. }
            | Self::AttestorSet { .. }
            | Self::Rpc(_)
            | Self::Call(_)
            | Self::HttpClient(_)
            | Self::NoGas { .. } => Runtime,
        }
    }
}

pub type Result<T> = std::result::Result<T, ChainError>;

/// Loads the keeper key from KEEPER_PRIVATE_KEY or an encrypted keystore. The key itself never
/// reaches an error message or a log line.
pub fn load_signer(keystore: Option<&Path>) -> Result<PrivateKeySigner> {
    load_signer_from(keystore, "KEEPER_PRIVATE_KEY", "KEEPER_KEYSTORE_PASSWORD")
}

/// An attestor's signer (`keeper attest`): `keystore` with ATTESTOR_KEYSTORE_PASSWORD, else
/// ATTESTOR_PRIVATE_KEY. Never the keeper's variables: an attestor is another key.
pub fn load_attestor_signer(keystore: Option<&Path>) -> Result<PrivateKeySigner> {
    load_signer_from(keystore, "ATTESTOR_PRIVATE_KEY", "ATTESTOR_KEYSTORE_PASSWORD")
}

fn load_signer_from(
    keystore: Option<&Path>,
    key_var: &'static str,
    password_var: &'static str,
) -> Result<PrivateKeySigner> {
    if let Some(path) = keystore {
        let password = std::env::var(password_var).unwrap_or_default();
        return LocalSigner::decrypt_keystore(path, password).map_err(|e| ChainError::Keystore {
            path: path.display().to_string(),
            password_var,
            source: Box::new(e),
        });
    }
    let raw =
        std::env::var(key_var).map_err(|_| ChainError::MissingKey { key_var, password_var })?;
    raw.trim().parse::<PrivateKeySigner>().map_err(|_| ChainError::BadKey { key_var })
}

/// A signer from a development key published by an anvil the keeper spawned (local only).
pub fn dev_signer(key: &str) -> Result<PrivateKeySigner> {
    key.parse::<PrivateKeySigner>().map_err(|_| ChainError::BadKey { key_var: "the dev key" })
}

/// Read-only provider.
pub fn read_provider(url: &reqwest::Url) -> Result<DynProvider> {
    Ok(ProviderBuilder::new().connect_client(rpc_client(url)?).erased())
}

/// Every JSON-RPC request gives up after this long, so a node that hangs (rather than dies)
/// fails the step instead of stalling the bot; the cycle's bounded backoff then takes over.
pub const RPC_TIMEOUT: Duration = Duration::from_secs(30);

/// An HTTP JSON-RPC client with a per-request timeout.
/// Fails only when TLS cannot be set up: rustls with no CA root at all (none in the system
/// store and no SSL_CERT_FILE).
fn rpc_client(url: &reqwest::Url) -> Result<RpcClient> {
    let http =
        reqwest::Client::builder().timeout(RPC_TIMEOUT).build().map_err(ChainError::HttpClient)?;
    let is_local = url.host_str().is_some_and(|h| h == "127.0.0.1" || h == "localhost");
    Ok(RpcClient::new(Http::with_client(http, url.clone()), is_local))
}

/// Signing provider for one-off transactions (deploys, `keeper market`, the test world): each
/// transaction reads its nonce from the node's pending count, so it never collides with the
/// bot's own sender (which allocates its nonces itself, `sender::Sender`) or with a chain
/// that moved back (a reorg, a test's revert).
pub fn signing_provider(url: &reqwest::Url, signer: PrivateKeySigner) -> Result<DynProvider> {
    Ok(ProviderBuilder::new()
        .disable_recommended_fillers()
        .with_simple_nonce_management()
        .with_gas_estimation()
        .fetch_chain_id()
        .wallet(EthereumWallet::from(signer))
        .connect_client(rpc_client(url)?)
        .erased())
}

/// Connects and checks the chain id.
pub async fn connect_checked(cfg: &ChainConfig) -> Result<(DynProvider, u64)> {
    let provider = read_provider(&cfg.rpc_url)?;
    let chain_id = provider.get_chain_id().await.map_err(|e| ChainError::Unreachable {
        url: cfg.rpc_url.to_string(),
        source: Box::new(e),
    })?;
    if let Some(expected) = cfg.expected_chain_id {
        if expected != chain_id {
            return Err(ChainError::WrongChain { expected, actual: chain_id });
        }
    }
    Ok((provider, chain_id))
}

/// Checks that `gate` has code and answers like a v2 RiskGate (the label of the last reason code
/// as issue 7 fixes it, and a bounds hash), so a wrong address, or a v1 gate whose ABI differs,
/// fails before anything is sent.
pub async fn check_gate(provider: &DynProvider, gate: Address, chain_id: u64) -> Result<B256> {
    let code = provider.get_code_at(gate).await.map_err(|e| ChainError::Rpc(Box::new(e)))?;
    if code.is_empty() {
        return Err(ChainError::NoCode { addr: gate, chain_id });
    }
    let contract = IRiskGate::new(gate, provider);
    let call_failed = |call: &'static str| {
        move |e: alloy::contract::Error| ChainError::NotAGateCall {
            addr: gate,
            chain_id,
            call,
            source: Box::new(e),
        }
    };
    let last = REASON_COUNT - 1;
    let expected = REASON_LABELS[last as usize];
    let label = contract.reasonLabel(last).call().await.map_err(call_failed("reasonLabel"))?;
    if label != expected {
        return Err(ChainError::NotAGate {
            addr: gate,
            chain_id,
            reason: format!("reasonLabel({last}) is {label:?}, not {expected:?}"),
        });
    }
    contract.paramsHash().call().await.map_err(call_failed("paramsHash"))
}

/// The gate's attestor set ([`attestation::read_set`]); None for a relayed gate.
pub async fn attestor_set(
    provider: &DynProvider,
    gate: Address,
) -> Result<Option<crate::domain::decision::AttestorFacts>> {
    attestation::read_set(provider, gate)
        .await
        .map_err(|e| ChainError::AttestorSet { addr: gate, source: Box::new(e) })
}

/// A gate's mode, as its own `gateMode` reports it: who gives its verdicts. Every command that
/// needs one mode reads it here ([`gate_mode`]) and names another with this `Display`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateMode {
    /// Its keeper relays a model's answers.
    Relayed,
    /// Its keeper submits the answers of `k` of its `n` attestors, each signed.
    Attested(crate::domain::decision::AttestorFacts),
    /// Its verdict source (Somnia's validators) gives them; no keeper submits.
    Consensus { source: Address },
}

impl std::fmt::Display for GateMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GateMode::Relayed => write!(f, "relayed (its keeper relays a model's answers)"),
            GateMode::Attested(set) => write!(
                f,
                "attested ({} of its {} attestors must agree)",
                set.threshold,
                set.signers.len()
            ),
            GateMode::Consensus { source } => {
                write!(
                    f,
                    "a consensus gate (its verdicts come only from its verdict source {source})"
                )
            }
        }
    }
}

/// `gate`'s mode, with its attestor set or verdict source.
pub async fn gate_mode(provider: &DynProvider, gate: Address) -> Result<GateMode> {
    let g = IRiskGate::new(gate, provider);
    let err =
        |e: alloy::contract::Error| ChainError::AttestorSet { addr: gate, source: Box::new(e) };
    Ok(match g.gateMode().call().await.map_err(err)? {
        IRiskGate::GateMode::Consensus => {
            GateMode::Consensus { source: g.verdictSource().call().await.map_err(err)? }
        }
        IRiskGate::GateMode::Attested => match attestor_set(provider, gate).await? {
            Some(set) => GateMode::Attested(set),
            None => GateMode::Relayed,
        },
        _ => GateMode::Relayed,
    })
}

alloy::sol! {
    /// The ERC-20 views the keeper reads from any collateral (a real token need not have the
    /// test token's `mint`).
    #[sol(rpc)]
    interface IErc20View {
        function balanceOf(address holder) external view returns (uint256);
        function allowance(address holder, address spender) external view returns (uint256);
        function symbol() external view returns (string);
        function decimals() external view returns (uint8);
    }
}

/// Gas one `submitVerdict` may use at most, for the startup check's "enough ETH" floor: the
/// gate's PASS path with an order and a long answer stays below this (see results/bench).
pub const SUBMIT_GAS_FLOOR: u64 = 1_000_000;

/// What the startup check found: the keeper may act, possibly with warnings (each one line,
/// with a fix-it) that the caller should log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    pub keeper: Address,
    /// The key's ETH balance, in wei.
    pub gas_balance: U256,
    pub collateral: Address,
    /// The collateral's symbol, or "collateral units" when the token has none.
    pub symbol: String,
    /// The gate's collateral balance, in base units.
    pub gate_balance: U256,
    pub warnings: Vec<String>,
}

/// The startup check of `keeper run`: `keeper_addr` (the loaded key's address) must be the
/// gate's `keeper()`, and must hold ETH for at least one submission at the current gas price;
/// both are errors with a fix-it. A gate holding no collateral is a warning, not an error (every
/// BUY would be refused with reason 10, but ABSTAIN and refusals are still published).
pub async fn check_keeper_ready(
    provider: &DynProvider,
    gate: Address,
    keeper_addr: Address,
) -> Result<Readiness> {
    let contract = IRiskGate::new(gate, provider);
    let keeper = contract.keeper().call().await.map_err(|e| ChainError::Call(Box::new(e)))?;
    if keeper != keeper_addr {
        return Err(ChainError::NotKeeper { key: keeper_addr, keeper });
    }
    let rpc = |e| ChainError::Rpc(Box::new(e));
    let gas_balance = provider.get_balance(keeper_addr).await.map_err(rpc)?;
    let gas_price = provider.get_gas_price().await.map_err(rpc)?;
    let needed = U256::from(gas_price) * U256::from(SUBMIT_GAS_FLOOR);
    if gas_balance < needed {
        let chain_id = provider.get_chain_id().await.map_err(rpc)?;
        return Err(ChainError::NoGas { key: keeper_addr, balance: gas_balance, needed, chain_id });
    }
    let collateral =
        contract.collateral().call().await.map_err(|e| ChainError::Call(Box::new(e)))?;
    let token = IErc20View::new(collateral, provider);
    let gate_balance =
        token.balanceOf(gate).call().await.map_err(|e| ChainError::Call(Box::new(e)))?;
    // A token without symbol() is still a token; the text then names the units generically.
    let symbol = match token.symbol().call().await {
        Ok(s) if !s.is_empty() => s,
        _ => "collateral units".to_string(),
    };
    let mut warnings = Vec::new();
    if gate_balance.is_zero() {
        warnings.push(format!(
            "gate {gate} holds 0 {symbol}: every BUY will be refused with reason 10; fund it with \
             `cast send {collateral} 'transfer(address,uint256)' {gate} <amount>` (or, on a test \
             chain, `cast send {collateral} 'mint(address,uint256)' {gate} <amount>`)"
        ));
    }
    for w in &warnings {
        tracing::warn!("{w}");
    }
    Ok(Readiness { keeper, gas_balance, collateral, symbol, gate_balance, warnings })
}

/// A decoded contract error as `Name { field: value, … }`: the `Debug` of one variant of a
/// generated `…Errors` enum without the enum's wrapper, which would name the error twice
/// (`MaxHorizonBelowHeadroom(MaxHorizonBelowHeadroom { … })`).
pub fn revert_text(decoded: &impl std::fmt::Debug) -> String {
    without_wrapper(format!("{decoded:?}"))
}

/// Revert data named as [`revert_text`] names a contract error when it is one of the
/// contracts', else `0x`-prefixed hex ([`riskgate_kit::revert::describe_data`]): never as text,
/// whose bytes could be anything.
pub fn revert_data_text(data: &[u8]) -> String {
    without_wrapper(riskgate_kit::revert::describe_data(data))
}

fn without_wrapper(text: String) -> String {
    match (text.find('('), text.ends_with(')')) {
        (Some(open), true) => text[open + 1..text.len() - 1].to_string(),
        _ => text,
    }
}

/// Error text trimmed to one readable line.
pub fn short(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    if line.len() > 240 {
        let mut end = 240;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &line[..end])
    } else {
        line.to_string()
    }
}
