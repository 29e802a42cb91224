//! `keeper deploy`: deploys the test collateral and factory (when not given) and a gate with
//! the given bounds, from the bytecode compiled from this repository's sources, and saves the
//! addresses to deployments/<chain-id>.json. Also reads that file back, whichever tool wrote it:
//! `script/Deploy.s.sol` writes the same keys, but cannot know the block its transactions land
//! in (forge broadcasts after the script has run), so it writes the head it simulated on as
//! `deploy_block_not_before` and the keeper finds the exact block from the gate's `GateDeployed`
//! log ([`complete`]).

use crate::{
    chain,
    chain::sender::CallFailed,
    domain::config::{DeployConfig, GateBounds},
    kit::bindings::{IMarketFactory, IRiskGate},
    kit::compile::{self, Artifacts},
};
use alloy::{
    network::TransactionBuilder,
    primitives::{keccak256, Address, Bytes, TxHash, U256},
    providers::{DynProvider, Provider},
    rpc::types::{state::StateOverridesBuilder, Filter, TransactionRequest},
    sol_types::{SolEvent, SolValue},
};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error(transparent)]
    Config(#[from] crate::domain::config::ConfigError),
    #[error(transparent)]
    Chain(#[from] chain::ChainError),
    #[error(transparent)]
    Compile(#[from] compile::CompileError),
    /// The node refused to simulate or to accept a contract creation: the constructor's own
    /// error with its values when it is one of the gate's, and the node's answer as the source.
    /// `decoded` when the node's answer carried revert data (and then no source: some nodes
    /// write that data into their message as raw bytes), else the node's answer as the source.
    #[error("deploying {what} failed{}", reverted(.decoded))]
    Create {
        what: &'static str,
        decoded: Option<String>,
        #[source]
        source: Option<Box<alloy::transports::TransportError>>,
    },
    #[error("deploying {what}: no receipt for creation tx {tx}")]
    Receipt {
        what: &'static str,
        tx: TxHash,
        #[source]
        source: Box<crate::chain::sender::ExecError>,
    },
    #[error("deploying {what}: creation tx {tx} reverted")]
    CreationReverted { what: &'static str, tx: TxHash },
    #[error("deploying {what}: the receipt of creation tx {tx} names no contract address")]
    NoAddress { what: &'static str, tx: TxHash },
    /// A read of a contract deployed or reused (the factory's collateral, the gate's hash).
    #[error("deploying {what}")]
    Read {
        what: &'static str,
        #[source]
        source: CallFailed,
    },
    #[error("no factory given and chain {0} is not a local anvil (31337): pass --factory (and --collateral)")]
    NotLocal(u64),
    #[error("cannot encode the deployment of chain {chain_id} as JSON")]
    Encode {
        chain_id: u64,
        #[source]
        source: serde_json::Error,
    },
    #[error("saving the deployment")]
    Save(#[source] crate::domain::fs::WriteError),
    /// The simulated constructor reverted: its error with its values, or its revert data in
    /// hex when it is none of the contracts' errors.
    #[error(
        "the gate's constructor would refuse these arguments: {decoded}; nothing was deployed"
    )]
    Refused { decoded: String },
    #[error("cannot read {path}")]
    ReadSaved {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a deployment file (keys chain_id, gate, collateral, factory, keeper, trusted_resolvers, trusted_creators, deploy_block, params_hash)")]
    BadSaved {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path} is for chain {found}, not chain {expected}: wrong file or wrong RPC?")]
    SavedChainMismatch { path: String, found: u64, expected: u64 },
    #[error("no GateDeployed log of gate {gate} in blocks {from}..={to}: is {path} for this chain, or was the gate deployed elsewhere?")]
    DeployBlockNotFound { gate: Address, from: u64, to: u64, path: String },
    #[error("reading the gate's GateDeployed log failed")]
    Logs(#[source] Box<alloy::transports::TransportError>),
    #[error("searching the gate's GateDeployed log")]
    Search(#[source] Box<crate::chain::reads::CollectError>),
    /// The keeper key would also be a trusted role: a stolen keeper key would then decide
    /// outcomes or make the markets the gate trades. Refused before anything is sent.
    #[error("keeper {keeper} is also a trusted {role}: give the keeper its own key (--keeper ADDR, or deploy from another key), or drop it from --trusted-{role}; nothing was deployed")]
    KeeperTrusted { keeper: Address, role: &'static str },
}

impl crate::domain::exit::Classify for DeployError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            Self::Config(e) => e.fault(),
            Self::Chain(e) => e.fault(),
            Self::Compile(e) => e.fault(),
            // The flags ask for what the gate's constructor refuses, a deployment the chain
            // cannot take, or a saved file that is not a deployment of this chain.
            Self::Refused { .. }
            | Self::NotLocal(_)
            | Self::KeeperTrusted { .. }
            | Self::BadSaved { .. }
            | Self::SavedChainMismatch { .. }
            | Self::DeployBlockNotFound { .. } => Input,
            Self::Create { .. }
            | Self::Receipt { .. }
            | Self::CreationReverted { .. }
            | Self::NoAddress { .. }
            | Self::Read { .. }
            | Self::Encode { .. }
            | Self::Save(_)
            | Self::ReadSaved { .. }
            | Self::Logs(_)
            | Self::Search(_) => Runtime,
        }
    }
}

pub type Result<T> = std::result::Result<T, DeployError>;

/// `": constructor reverted <decoded>"`, or nothing when the node's answer held no revert.
fn reverted(decoded: &Option<String>) -> String {
    decoded.as_ref().map(|d| format!(": constructor reverted {d}")).unwrap_or_default()
}

/// The revert data in a node's answer to a creation, as the contracts name it, with its values
/// (`MaxHorizonBelowHeadroom { maxHorizon: 60, minHeadroom: 300 }`), else in hex; `None` when
/// the answer held no revert data (a node down, say). Never the node's own text of that data:
/// anvil writes it into its message as raw bytes (`custom error 0x9c2b2973: \0\0…`).
fn revert_of(e: &alloy::transports::TransportError) -> Option<String> {
    let data = e.as_error_resp()?.as_revert_data()?;
    Some(chain::revert_data_text(&data))
}

fn create_err(what: &'static str) -> impl Fn(alloy::transports::TransportError) -> DeployError {
    move |e| match revert_of(&e) {
        Some(decoded) => DeployError::Create { what, decoded: Some(decoded), source: None },
        None => DeployError::Create { what, decoded: None, source: Some(Box::new(e)) },
    }
}

/// What one deployment left on chain, as `keeper deploy` saves it in deployments/<chain-id>.json
/// (`B` = `u64`, the block the gate was created in). `script/Deploy.s.sol` writes the same keys
/// but cannot know that block: read as [`SavedDeployment`], its `deploy_block` is `None`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Deployment<B = u64> {
    pub chain_id: u64,
    pub gate: Address,
    pub collateral: Address,
    pub factory: Address,
    pub keeper: Address,
    /// The resolvers the gate trusts, ascending (absent in files written before v2).
    #[serde(default)]
    pub trusted_resolvers: Vec<Address>,
    /// The market creators the gate trusts, ascending (absent in files written before v2.1,
    /// and then not written back: every v2.1 gate has at least one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted_creators: Vec<Address>,
    /// Absent from a script's file, when `B` is an `Option` (serde reads a missing `Option`
    /// field as `None`; for `u64` it is required).
    pub deploy_block: B,
    pub params_hash: String,
}

impl<B> Deployment<B> {
    /// The same deployment with its deploy block given as `block`.
    pub fn with_deploy_block<C>(self, block: C) -> Deployment<C> {
        let Deployment {
            chain_id,
            gate,
            collateral,
            factory,
            keeper,
            trusted_resolvers,
            trusted_creators,
            deploy_block: _,
            params_hash,
        } = self;
        Deployment {
            chain_id,
            gate,
            collateral,
            factory,
            keeper,
            trusted_resolvers,
            trusted_creators,
            deploy_block: block,
            params_hash,
        }
    }
}

impl GateBounds {
    pub fn to_params(&self) -> IRiskGate::Params {
        IRiskGate::Params {
            minPrice: U256::from(self.min_price),
            maxPrice: U256::from(self.max_price),
            maxSize: U256::from(self.max_size),
            minHeadroom: self.min_headroom,
            maxConcurrent: self.max_concurrent,
            maxNotional: U256::from(self.max_notional),
            maxHorizon: self.max_horizon,
            maxDrawdown: U256::from(self.max_drawdown),
            writeOffGrace: self.write_off_grace,
            minFillBps: self.min_fill_bps,
        }
    }
}

/// Sends a contract creation and returns the new address and its block. The creation is
/// simulated first, so a constructor that refuses its arguments is reported as the gate's own
/// error with its values (`MaxHorizonBelowHeadroom { maxHorizon: 60, minHeadroom: 300 }`).
pub async fn create(
    provider: &DynProvider,
    what: &'static str,
    code: &Bytes,
    args: Vec<u8>,
) -> Result<(Address, u64)> {
    let mut data = code.to_vec();
    data.extend(args);
    let tx = TransactionRequest::default().with_deploy_code(Bytes::from(data));
    provider.call(tx.clone()).await.map_err(create_err(what))?;
    let pending = provider.send_transaction(tx).await.map_err(create_err(what))?;
    let tx = *pending.tx_hash();
    let receipt =
        crate::chain::sender::wait_receipt(provider, tx, std::time::Duration::from_secs(120))
            .await
            .map_err(|e| DeployError::Receipt { what, tx, source: Box::new(e) })?;
    if !receipt.status() {
        return Err(DeployError::CreationReverted { what, tx });
    }
    let addr = receipt.contract_address.ok_or(DeployError::NoAddress { what, tx })?;
    Ok((addr, receipt.block_number.unwrap_or_default()))
}

/// What `deploy_all` puts on chain: the gate's bounds, trusted resolvers and creators, and the
/// addresses to reuse (each `None` is deployed: a TestCollateral, a MarketFactory over the
/// collateral).
#[derive(Debug, Clone)]
pub struct GateSpec {
    pub params: IRiskGate::Params,
    /// Strictly ascending, as the constructor requires (see `config::trusted_resolver_list`).
    pub trusted_resolvers: Vec<Address>,
    /// Strictly ascending, as the constructor requires (see `config::trusted_creator_list`).
    pub trusted_creators: Vec<Address>,
    pub collateral: Option<Address>,
    pub factory: Option<Address>,
    pub keeper: Address,
    /// The gate's mode for its whole life: [`relayed`] (the keeper submits answers), or
    /// attested by these signers (strictly ascending, as the constructor requires).
    pub attestors: IRiskGate::Attestors,
    /// The consensus mode's verdict source (made for this gate's address), or zero.
    pub verdict_source: Address,
}

/// The relayed mode's constructor setting: no attestors and every setting 0.
pub fn relayed() -> IRiskGate::Attestors {
    IRiskGate::Attestors { signers: vec![], threshold: 0, maxReadAge: 0, maxSlippageBps: 0 }
}

/// Stand-in addresses for a collateral and a factory not deployed yet, in the preflight
/// simulation (any fixed addresses do: only the code placed there matters).
fn stand_in(label: &str) -> Address {
    Address::from_word(keccak256(format!("riskgate.keeper.preflight.{label}")))
}

/// The runtime code a creation would leave, simulated with `eth_call` (nothing is sent).
async fn simulated_runtime(
    provider: &DynProvider,
    what: &'static str,
    init: Vec<u8>,
    overrides: &alloy::rpc::types::state::StateOverride,
) -> Result<Bytes> {
    let tx = TransactionRequest::default().with_deploy_code(Bytes::from(init));
    provider.call(tx).overrides(overrides.clone()).await.map_err(create_err(what))
}

impl GateSpec {
    /// The gate's constructor arguments, ABI-encoded: `(bounds, trustedResolvers,
    /// trustedCreators, collateral, marketFactory, keeper, attestors, verdictSource)`.
    pub fn constructor_args(&self, collateral: Address, factory: Address) -> Vec<u8> {
        (
            self.params.clone(),
            self.trusted_resolvers.clone(),
            self.trusted_creators.clone(),
            collateral,
            factory,
            self.keeper,
            self.attestors.clone(),
            self.verdict_source,
        )
            .abi_encode_params()
    }

    /// Refuses a keeper that is also a trusted resolver or creator, naming it (the constructor
    /// refuses it too, `KeeperIsTrustedResolver`; this says so before anything is simulated).
    pub fn check_roles(&self) -> Result<()> {
        if self.trusted_resolvers.contains(&self.keeper) {
            return Err(DeployError::KeeperTrusted { keeper: self.keeper, role: "resolver" });
        }
        if self.trusted_creators.contains(&self.keeper) {
            return Err(DeployError::KeeperTrusted { keeper: self.keeper, role: "creator" });
        }
        Ok(())
    }
}

/// Simulates the gate's constructor with `spec`'s arguments before anything is sent, so bounds
/// or resolvers the gate refuses deploy nothing at all (no orphan collateral or factory). A
/// collateral or factory still to be deployed is simulated too and its runtime code placed at
/// a stand-in address for the gate's constructor to call.
pub async fn preflight(
    provider: &DynProvider,
    artifacts: &Artifacts,
    spec: &GateSpec,
) -> Result<()> {
    spec.check_roles()?;
    let mut overrides = StateOverridesBuilder::default().build();
    let collateral = match (spec.collateral, spec.factory) {
        (Some(c), _) => c,
        (None, Some(f)) => factory_collateral(provider, f).await?,
        (None, None) => {
            let at = stand_in("collateral");
            let code = simulated_runtime(
                provider,
                "TestCollateral",
                artifacts.collateral.bytecode.to_vec(),
                &overrides,
            )
            .await?;
            overrides = StateOverridesBuilder::new(overrides).with_code(at, code).build();
            at
        }
    };
    let factory = match spec.factory {
        Some(f) => f,
        None => {
            let at = stand_in("factory");
            let mut init = artifacts.factory.bytecode.to_vec();
            init.extend(collateral.abi_encode());
            let code = simulated_runtime(provider, "MarketFactory", init, &overrides).await?;
            overrides = StateOverridesBuilder::new(overrides).with_code(at, code).build();
            at
        }
    };
    let mut init = artifacts.gate.bytecode.to_vec();
    init.extend(spec.constructor_args(collateral, factory));
    // Ownable refuses a zero owner: simulate as the (non-zero) keeper.
    let tx =
        TransactionRequest::default().with_from(spec.keeper).with_deploy_code(Bytes::from(init));
    provider.call(tx).overrides(overrides).await.map_err(|e| match revert_of(&e) {
        Some(decoded) => DeployError::Refused { decoded },
        // No revert: the simulation itself failed (the node, not the arguments).
        None => create_err("RiskGate")(e),
    })?;
    Ok(())
}

/// The collateral of an existing factory (the gate refuses a factory over another token).
async fn factory_collateral(provider: &DynProvider, factory: Address) -> Result<Address> {
    IMarketFactory::new(factory, provider).collateral().call().await.map_err(|e| {
        DeployError::Read { what: "MarketFactory", source: CallFailed::new("collateral", e) }
    })
}

/// Deploys what is missing, then the gate; refuses before sending anything when the gate's
/// constructor would revert ([`preflight`]).
pub async fn deploy_all(
    provider: &DynProvider,
    chain_id: u64,
    artifacts: &Artifacts,
    spec: &GateSpec,
) -> Result<Deployment> {
    preflight(provider, artifacts, spec).await?;
    let collateral = match (spec.collateral, spec.factory) {
        (Some(c), _) => c,
        // The gate refuses a factory over another token, so reuse the factory's own.
        (None, Some(f)) => factory_collateral(provider, f).await?,
        (None, None) => {
            create(provider, "TestCollateral", &artifacts.collateral.bytecode, vec![]).await?.0
        }
    };
    let factory = match spec.factory {
        Some(f) => f,
        None => {
            create(provider, "MarketFactory", &artifacts.factory.bytecode, collateral.abi_encode())
                .await?
                .0
        }
    };
    let args = spec.constructor_args(collateral, factory);
    let (gate, deploy_block) = create(provider, "RiskGate", &artifacts.gate.bytecode, args).await?;
    let params_hash = IRiskGate::new(gate, provider).paramsHash().call().await.map_err(|e| {
        DeployError::Read { what: "RiskGate", source: CallFailed::new("paramsHash", e) }
    })?;
    Ok(Deployment {
        chain_id,
        gate,
        collateral,
        factory,
        keeper: spec.keeper,
        trusted_resolvers: spec.trusted_resolvers.clone(),
        trusted_creators: spec.trusted_creators.clone(),
        deploy_block,
        params_hash: params_hash.to_string(),
    })
}

/// deployments/<chain-id>.json under `root`.
pub fn saved_path(root: &Path, chain_id: u64) -> std::path::PathBuf {
    root.join("deployments").join(format!("{chain_id}.json"))
}

/// A deployments file as written by either tool: `keeper deploy` knows `deploy_block`;
/// `script/Deploy.s.sol` writes `deploy_block_not_before` instead (the head it simulated on).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct SavedDeployment {
    #[serde(flatten)]
    pub deployment: Deployment<Option<u64>>,
    /// A lower bound of the deploy block, when the writer could not know the block itself.
    #[serde(default)]
    pub deploy_block_not_before: Option<u64>,
}

/// deployments/<chain-id>/<gate>.json under `root`: one gate's entry, which no other gate's
/// deployment ever overwrites (the chain's default, [`saved_path`], names the latest).
pub fn gate_path(root: &Path, chain_id: u64, gate: Address) -> std::path::PathBuf {
    root.join("deployments")
        .join(chain_id.to_string())
        .join(format!("{}.json", gate.to_checksum(None)))
}

/// Reads deployments/<chain-id>.json, the chain's default; `None` when there is none.
pub fn read_saved(root: &Path, chain_id: u64) -> Result<Option<SavedDeployment>> {
    read_file(&saved_path(root, chain_id), chain_id)
}

/// The saved entry of `gate` on `chain_id`: its own file, else the default if it names `gate`;
/// `None` when neither does.
pub fn read_saved_for(
    root: &Path,
    chain_id: u64,
    gate: Address,
) -> Result<Option<SavedDeployment>> {
    match read_file(&gate_path(root, chain_id, gate), chain_id)? {
        Some(s) if s.deployment.gate == gate => Ok(Some(s)),
        Some(s) => Err(DeployError::BadSaved {
            path: gate_path(root, chain_id, gate).display().to_string(),
            source: serde::de::Error::custom(format!(
                "it names gate {}, not the gate of its file name",
                s.deployment.gate
            )),
        }),
        None => Ok(read_saved(root, chain_id)?.filter(|s| s.deployment.gate == gate)),
    }
}

fn read_file(path: &Path, chain_id: u64) -> Result<Option<SavedDeployment>> {
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(DeployError::ReadSaved { path: shown, source }),
    };
    let saved: SavedDeployment = serde_json::from_str(&text)
        .map_err(|source| DeployError::BadSaved { path: shown.clone(), source })?;
    if saved.deployment.chain_id != chain_id {
        return Err(DeployError::SavedChainMismatch {
            path: shown,
            found: saved.deployment.chain_id,
            expected: chain_id,
        });
    }
    Ok(Some(saved))
}

/// The block holding the gate's `GateDeployed` log (its constructor emits it), searched from
/// `from` to the head in windows of `log_range` blocks.
pub async fn find_deploy_block(
    provider: &DynProvider,
    gate: Address,
    from: u64,
    log_range: u64,
    path: &str,
) -> Result<u64> {
    let logs_err = |e| DeployError::Logs(Box::new(e));
    let head = provider.get_block_number().await.map_err(logs_err)?;
    let step = log_range.max(1);
    let mut start = from;
    while start <= head {
        let end = start.saturating_add(step - 1).min(head);
        // One window at a time, so the search stops at the first log; the window itself is read
        // as every log read is (narrowed when the node refuses it as too wide).
        let filter =
            Filter::new().address(gate).event_signature(IRiskGate::GateDeployed::SIGNATURE_HASH);
        let logs = crate::chain::reads::filtered_logs(provider, &filter, start, end, step)
            .await
            .map_err(|e| DeployError::Search(Box::new(e)))?;
        if let Some(block) = logs.first().and_then(|l| l.block_number) {
            return Ok(block);
        }
        start = end + 1;
    }
    Err(DeployError::DeployBlockNotFound { gate, from, to: head, path: path.to_string() })
}

/// A saved deployment ([`read_saved`], [`read_saved_for`]) with its deploy block: a file
/// without `deploy_block` (written by `script/Deploy.s.sol`) gets it from the gate's
/// `GateDeployed` log, searched from its `deploy_block_not_before`, and is rewritten at `path`
/// in `keeper deploy`'s format, so the search runs once. `None` when nothing was saved.
pub async fn complete(
    provider: &DynProvider,
    root: &Path,
    saved: Option<SavedDeployment>,
    path: std::path::PathBuf,
    log_range: u64,
) -> Result<Option<Deployment>> {
    let Some(SavedDeployment { deployment: saved, deploy_block_not_before }) = saved else {
        return Ok(None);
    };
    if let Some(block) = saved.deploy_block {
        return Ok(Some(saved.with_deploy_block(block)));
    }
    let path = path.display().to_string();
    let from = deploy_block_not_before.unwrap_or(0);
    let block = find_deploy_block(provider, saved.gate, from, log_range, &path).await?;
    tracing::info!(gate = %saved.gate, deploy_block = block, file = %path, "filled the deploy block of a script deployment");
    let d = saved.with_deploy_block(block);
    save(root, &d)?;
    Ok(Some(d))
}

/// Saves `d` as its gate's entry (deployments/<chain-id>/<gate>.json) and as the chain's
/// default (deployments/<chain-id>.json), each atomically. Another gate's deployment in the
/// default is first kept in that gate's own file, if it has none yet, so a second deployment on
/// one chain drops nothing: it only moves the default, and says so.
pub fn save(root: &Path, d: &Deployment) -> Result<()> {
    let text = serde_json::to_string_pretty(d)
        .map_err(|source| DeployError::Encode { chain_id: d.chain_id, source })?;
    let default = saved_path(root, d.chain_id);
    let previous = match read_saved(root, d.chain_id) {
        Ok(p) => p.map(|p| p.deployment.gate).filter(|g| *g != d.gate),
        // Unreadable: kept beside it byte for byte, never overwritten unseen.
        Err(e) => {
            let aside = default.with_extension("json.unreadable");
            let bytes = std::fs::read(&default).unwrap_or_default();
            crate::domain::fs::write_atomic(&aside, &bytes).map_err(DeployError::Save)?;
            tracing::warn!(file = %default.display(), kept = %aside.display(), error = %crate::error_chain(&e), "the saved default deployment is unreadable; kept aside before it is replaced");
            None
        }
    };
    if let Some(old) = previous {
        let kept = gate_path(root, d.chain_id, old);
        if !kept.exists() {
            let bytes = std::fs::read(&default).map_err(|source| DeployError::ReadSaved {
                path: default.display().to_string(),
                source,
            })?;
            crate::domain::fs::write_atomic(&kept, &bytes).map_err(DeployError::Save)?;
        }
        tracing::info!(previous = %old, now = %d.gate, kept = %kept.display(), "the chain's default deployment is now the new gate; the previous one stays in its own file (pass --gate to run it)");
    }
    let line = format!("{text}\n");
    crate::domain::fs::write_atomic(&gate_path(root, d.chain_id, d.gate), line.as_bytes())
        .map_err(DeployError::Save)?;
    crate::domain::fs::write_atomic(&default, line.as_bytes()).map_err(DeployError::Save)
}

/// `keeper deploy`.
pub async fn run(cfg: &DeployConfig, root: &Path) -> Result<Deployment> {
    let (_, chain_id) = chain::connect_checked(&cfg.chain).await?;
    if cfg.factory.is_none() && cfg.collateral.is_none() && chain_id != 31337 {
        return Err(DeployError::NotLocal(chain_id));
    }
    let signer = chain::load_signer(cfg.keystore.as_deref())?;
    let deployer = signer.address();
    let spec = GateSpec {
        params: cfg.bounds.to_params(),
        trusted_resolvers: cfg.trusted_resolvers.clone(),
        trusted_creators: cfg.trusted_creators.clone(),
        collateral: cfg.collateral,
        factory: cfg.factory,
        keeper: cfg.keeper.unwrap_or(deployer),
        attestors: cfg.attestors.clone(),
        verdict_source: Address::ZERO,
    };
    // Before compiling or sending anything: the keeper (the deployer unless --keeper) may hold
    // no trusted role.
    spec.check_roles()?;
    let provider = chain::signing_provider(&cfg.chain.rpc_url, signer)?;
    let artifacts = compile::compile(root)?;
    let d = deploy_all(&provider, chain_id, &artifacts, &spec).await?;
    save(root, &d)?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `keeper deploy`'s format, as the demo saves it beside its chain state.
    const KEEPER_FILE: &str = include_str!("../../../results/anvil-state.meta.json");

    /// `script/Deploy.s.sol`'s format: `deploy_block_not_before` in place of `deploy_block`.
    const SCRIPT_FILE: &str = r#"{
        "chain_id": 31337,
        "gate": "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0",
        "collateral": "0x5fbdb2315678afecb367f032d93f642f64180aa3",
        "factory": "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512",
        "keeper": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
        "trusted_resolvers": ["0x70997970c51812dc3a010c7d01b50e0d17dc79c8"],
        "deploy_block_not_before": 2,
        "params_hash": "0x7365ef04b2f7576fbe2a0032262562a1f6bf427aea51fb0128f1fa80ad70315a"
    }"#;

    #[test]
    fn both_formats_load_and_the_keeper_format_is_written_back_unchanged() {
        let complete: Deployment = serde_json::from_str(KEEPER_FILE).unwrap();
        // Written back, the keeper's file has the same keys and values it was read from.
        let written = serde_json::to_value(&complete).unwrap();
        assert_eq!(written, serde_json::from_str::<serde_json::Value>(KEEPER_FILE).unwrap());
        // Read as a saved file, it is the same deployment with its block known.
        let saved: SavedDeployment = serde_json::from_str(KEEPER_FILE).unwrap();
        assert_eq!(saved.deploy_block_not_before, None);
        let block = saved.deployment.deploy_block.expect("the keeper's file names its block");
        assert_eq!(saved.deployment.with_deploy_block(block), complete);

        let script: SavedDeployment = serde_json::from_str(SCRIPT_FILE).unwrap();
        assert_eq!(script.deployment.deploy_block, None);
        assert_eq!(script.deploy_block_not_before, Some(2));
        assert_eq!(script.deployment.trusted_resolvers.len(), 1);
        // A complete deployment needs its block: the script's file is not one.
        assert!(serde_json::from_str::<Deployment>(SCRIPT_FILE).is_err());
        // Completed with the block found (5, say), it is written in the keeper's format.
        let filled = serde_json::to_value(script.deployment.with_deploy_block(5u64)).unwrap();
        assert_eq!(filled["deploy_block"], 5);
        assert!(filled.get("deploy_block_not_before").is_none());
    }

    #[test]
    fn a_file_from_before_v2_has_no_trusted_resolvers() {
        let mut old: serde_json::Value = serde_json::from_str(KEEPER_FILE).unwrap();
        old.as_object_mut().unwrap().remove("trusted_resolvers");
        old.as_object_mut().unwrap().remove("trusted_creators");
        let d: Deployment = serde_json::from_value(old).unwrap();
        assert!(d.trusted_resolvers.is_empty());
        assert!(d.trusted_creators.is_empty());
    }

    #[test]
    fn a_keeper_holding_a_trusted_role_is_refused_by_name() {
        let (k, r, c) = (Address::repeat_byte(1), Address::repeat_byte(2), Address::repeat_byte(3));
        let spec = |resolvers: Vec<Address>, creators: Vec<Address>| GateSpec {
            params: crate::domain::config::GateBounds {
                min_price: 1,
                max_price: 2,
                max_size: 3,
                min_headroom: 300,
                max_concurrent: 1,
                max_notional: 1,
                max_horizon: 300,
                max_drawdown: 1,
                write_off_grace: 3600,
                min_fill_bps: 1,
            }
            .to_params(),
            trusted_resolvers: resolvers,
            trusted_creators: creators,
            collateral: None,
            factory: None,
            keeper: k,
            attestors: relayed(),
            verdict_source: Address::ZERO,
        };
        assert!(spec(vec![r], vec![c]).check_roles().is_ok());
        let e = spec(vec![k, r], vec![c]).check_roles().unwrap_err();
        assert!(
            matches!(e, DeployError::KeeperTrusted { keeper, role: "resolver" } if keeper == k)
        );
        let text = e.to_string();
        assert!(text.contains(&k.to_string()) && text.contains("trusted resolver"), "{text}");
        let e = spec(vec![r], vec![c, k]).check_roles().unwrap_err();
        assert!(e.to_string().contains(&format!("keeper {k} is also a trusted creator")), "{e}");
    }

    #[test]
    fn read_saved_reads_the_script_format_and_refuses_another_chain() {
        let root = tempfile::tempdir().unwrap();
        assert!(read_saved(root.path(), 31337).unwrap().is_none(), "no file: none");
        std::fs::create_dir_all(root.path().join("deployments")).unwrap();
        std::fs::write(saved_path(root.path(), 31337), SCRIPT_FILE).unwrap();
        let saved = read_saved(root.path(), 31337).unwrap().unwrap();
        assert_eq!(saved.deploy_block_not_before, Some(2));
        // The same file under another chain's name is refused, naming both chains.
        std::fs::write(saved_path(root.path(), 1), SCRIPT_FILE).unwrap();
        let e = read_saved(root.path(), 1).unwrap_err();
        assert!(
            matches!(e, DeployError::SavedChainMismatch { found: 31337, expected: 1, .. }),
            "{e}"
        );
    }

    #[test]
    fn a_refused_constructor_is_named_once_without_the_nodes_raw_bytes() {
        use alloy::sol_types::SolError;
        // Anvil's answer to a reverted simulation: its message holds the revert data as text
        // (NUL bytes and all), its `data` the same bytes in hex.
        let data =
            IRiskGate::MaxHorizonBelowHeadroom { maxHorizon: 60, minHeadroom: 300 }.abi_encode();
        let answer = |data: &[u8]| -> alloy::transports::TransportError {
            let message = format!(
                "execution reverted: custom error 0x{}: {}",
                alloy::primitives::hex::encode(&data[..4]),
                String::from_utf8_lossy(&data[4..])
            );
            let payload = serde_json::json!({
                "code": 3,
                "message": message,
                "data": alloy::primitives::Bytes::from(data.to_vec()),
            });
            alloy::transports::RpcError::ErrorResp(serde_json::from_value(payload).unwrap())
        };
        let e = DeployError::Refused { decoded: revert_of(&answer(&data)).unwrap() };
        assert_eq!(
            crate::error_chain(&e),
            "the gate's constructor would refuse these arguments: MaxHorizonBelowHeadroom { \
             maxHorizon: 60, minHeadroom: 300 }; nothing was deployed"
        );
        // Revert data of no contract's: hex, never its bytes as text.
        let e = create_err("TestCollateral")(answer(&[0xde, 0xad, 0xbe, 0xef, 0, 0, 1]));
        let line = crate::error_chain(&e);
        assert_eq!(line, "deploying TestCollateral failed: constructor reverted 0xdeadbeef000001");
        // No revert data at all (the node, not the arguments): the node's answer, whole.
        let node = alloy::transports::TransportErrorKind::custom_str("connection refused");
        let e = create_err("TestCollateral")(node);
        assert_eq!(crate::error_chain(&e), "deploying TestCollateral failed: connection refused");
    }
}
