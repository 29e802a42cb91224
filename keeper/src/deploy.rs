//! `keeper deploy`: deploys the test collateral and factory (when not given) and a gate with
//! the given bounds, from the bytecode compiled from this repository's sources, and saves the
//! addresses to deployments/<chain-id>.json.

use crate::{
    bindings::{IMarketFactory, IRiskGate},
    chain::{self, short},
    cli::{BoundsArgs, DeployArgs},
    compile::{self, Artifacts},
};
use alloy::{
    network::TransactionBuilder,
    primitives::{Address, Bytes, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionRequest,
    sol_types::SolValue,
};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error(transparent)]
    Config(#[from] crate::cli::ConfigError),
    #[error(transparent)]
    Chain(#[from] chain::ChainError),
    #[error(transparent)]
    Compile(#[from] compile::CompileError),
    #[error("deploying {what} failed: {reason}")]
    Tx { what: String, reason: String },
    #[error("no factory given and chain {0} is not a local anvil (31337): pass --factory (and --collateral)")]
    NotLocal(u64),
    #[error("writing {path}: {reason}")]
    Save { path: String, reason: String },
}

pub type Result<T> = std::result::Result<T, DeployError>;

/// What one deployment left on chain.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Deployment {
    pub chain_id: u64,
    pub gate: Address,
    pub collateral: Address,
    pub factory: Address,
    pub keeper: Address,
    /// The resolvers the gate trusts, ascending (absent in files written before v2).
    #[serde(default)]
    pub trusted_resolvers: Vec<Address>,
    pub deploy_block: u64,
    pub params_hash: String,
}

impl BoundsArgs {
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
    what: &str,
    code: &Bytes,
    args: Vec<u8>,
) -> Result<(Address, u64)> {
    let mut data = code.to_vec();
    data.extend(args);
    let tx = TransactionRequest::default().with_deploy_code(Bytes::from(data));
    let err = |reason: String| DeployError::Tx { what: what.into(), reason };
    if let Err(e) = provider.call(tx.clone()).await {
        let decoded = e
            .as_error_resp()
            .and_then(|p| p.as_decoded_interface_error::<IRiskGate::IRiskGateErrors>())
            .map(|d| format!("constructor reverted {d:?}"));
        return Err(err(decoded.unwrap_or_else(|| short(&e.to_string()))));
    }
    let pending = provider.send_transaction(tx).await.map_err(|e| err(short(&e.to_string())))?;
    let hash = *pending.tx_hash();
    let receipt =
        crate::executor::wait_receipt(provider, hash, std::time::Duration::from_secs(120))
            .await
            .map_err(|e| err(e.to_string()))?;
    if !receipt.status() {
        return Err(err(format!("creation tx {hash} reverted")));
    }
    let addr = receipt.contract_address.ok_or_else(|| err("no contract address".into()))?;
    Ok((addr, receipt.block_number.unwrap_or_default()))
}

/// What `deploy_all` puts on chain: the gate's bounds and trusted resolvers, and the addresses
/// to reuse (each `None` is deployed: a TestCollateral, a MarketFactory over the collateral).
#[derive(Debug, Clone)]
pub struct GateSpec {
    pub params: IRiskGate::Params,
    /// Strictly ascending, as the constructor requires (see `cli::trusted_resolver_list`).
    pub trusted_resolvers: Vec<Address>,
    pub collateral: Option<Address>,
    pub factory: Option<Address>,
    pub keeper: Address,
}

/// Deploys what is missing, then the gate.
pub async fn deploy_all(
    provider: &DynProvider,
    chain_id: u64,
    artifacts: &Artifacts,
    spec: &GateSpec,
) -> Result<Deployment> {
    let read_err = |e: alloy::contract::Error| DeployError::Tx {
        what: "MarketFactory".into(),
        reason: short(&e.to_string()),
    };
    let collateral = match (spec.collateral, spec.factory) {
        (Some(c), _) => c,
        // The gate refuses a factory over another token, so reuse the factory's own.
        (None, Some(f)) => {
            IMarketFactory::new(f, provider).collateral().call().await.map_err(read_err)?
        }
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
    let args =
        (spec.params.clone(), spec.trusted_resolvers.clone(), collateral, factory, spec.keeper)
            .abi_encode_params();
    let (gate, deploy_block) = create(provider, "RiskGate", &artifacts.gate.bytecode, args).await?;
    let params_hash = IRiskGate::new(gate, provider)
        .paramsHash()
        .call()
        .await
        .map_err(|e| DeployError::Tx { what: "RiskGate".into(), reason: short(&e.to_string()) })?;
    Ok(Deployment {
        chain_id,
        gate,
        collateral,
        factory,
        keeper: spec.keeper,
        trusted_resolvers: spec.trusted_resolvers.clone(),
        deploy_block,
        params_hash: params_hash.to_string(),
    })
}

/// Saves deployments/<chain-id>.json atomically.
pub fn save(root: &Path, d: &Deployment) -> Result<()> {
    let path = root.join("deployments").join(format!("{}.json", d.chain_id));
    let text = serde_json::to_string_pretty(d).map_err(|e| DeployError::Save {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    crate::recorder::write_atomic(&path, format!("{text}\n").as_bytes())
        .map_err(|e| DeployError::Save { path: path.display().to_string(), reason: e.to_string() })
}

/// `keeper deploy`.
pub async fn run(args: &DeployArgs, root: &Path) -> Result<Deployment> {
    let chain_cfg = args.chain.to_config()?;
    // Checked before anything is read or sent; `None` trusts the deployer.
    let trusted = args.trusted_resolvers()?;
    let (_, chain_id) = chain::connect_checked(&chain_cfg).await?;
    if args.factory.is_none() && args.collateral.is_none() && chain_id != 31337 {
        return Err(DeployError::NotLocal(chain_id));
    }
    let signer = chain::load_signer(args.key.keystore.as_deref())?;
    let deployer = signer.address();
    let trusted_resolvers = trusted.unwrap_or_else(|| vec![deployer]);
    let provider = chain::signing_provider(&chain_cfg.rpc_url, signer)?;
    let artifacts = compile::compile(root)?;
    let spec = GateSpec {
        params: args.bounds.to_params(),
        trusted_resolvers,
        collateral: args.collateral,
        factory: args.factory,
        keeper: args.keeper.unwrap_or(deployer),
    };
    let d = deploy_all(&provider, chain_id, &artifacts, &spec).await?;
    save(root, &d)?;
    Ok(d)
}
