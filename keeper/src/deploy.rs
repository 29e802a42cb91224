//! `keeper deploy`: deploys the test collateral and factory (when not given) and a gate with
//! the given bounds, from the bytecode compiled from this repository's sources, and saves the
//! addresses to deployments/<chain-id>.json.

use crate::{
    bindings::IRiskGate,
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
    #[error("no collateral given and chain {0} is not a local anvil (31337): pass --collateral and --factory")]
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
        }
    }
}

/// Sends a contract creation and returns the new address and its block.
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

/// Deploys what is missing, then the gate.
pub async fn deploy_all(
    provider: &DynProvider,
    chain_id: u64,
    artifacts: &Artifacts,
    params: &IRiskGate::Params,
    collateral: Option<Address>,
    factory: Option<Address>,
    keeper: Address,
) -> Result<Deployment> {
    let collateral = match collateral {
        Some(c) => c,
        None => create(provider, "TestCollateral", &artifacts.collateral.bytecode, vec![]).await?.0,
    };
    let factory = match factory {
        Some(f) => f,
        None => {
            create(provider, "MarketFactory", &artifacts.factory.bytecode, collateral.abi_encode())
                .await?
                .0
        }
    };
    let args = (params.clone(), collateral, factory, keeper).abi_encode_params();
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
        keeper,
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
    let (_, chain_id) = chain::connect_checked(&chain_cfg).await?;
    if (args.collateral.is_none() || args.factory.is_none()) && chain_id != 31337 {
        return Err(DeployError::NotLocal(chain_id));
    }
    let signer = chain::load_signer(args.key.keystore.as_deref())?;
    let deployer = signer.address();
    let provider = chain::signing_provider(&chain_cfg.rpc_url, signer);
    let artifacts = compile::compile(root)?;
    let d = deploy_all(
        &provider,
        chain_id,
        &artifacts,
        &args.bounds.to_params(),
        args.collateral,
        args.factory,
        args.keeper.unwrap_or(deployer),
    )
    .await?;
    save(root, &d)?;
    Ok(d)
}
