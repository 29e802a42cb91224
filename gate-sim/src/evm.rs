//! Two ways to run the compiled RiskGate: in-process in revm (fast, the default) and on a real
//! anvil node through alloy (real transactions and `eth_call`s). Both answer the same two
//! questions, "deploy this creation code" and "call this view", and report reverts with their
//! exact data; neither interprets what the contract returned. revm also sends state-changing
//! transactions from any address at a chosen block time, which the adversarial simulator uses to
//! run whole attacks against the compiled gate and the real venue.

use alloy::{
    network::TransactionBuilder,
    primitives::{Address, Bytes, Log, TxKind, U256},
    providers::{Provider, ProviderBuilder, RootProvider},
    rpc::types::{BlockOverrides, TransactionRequest},
};
use revm::{
    context::{result::Output, BlockEnv, CfgEnv, TxEnv},
    context_interface::result::ExecutionResult,
    database::{CacheDB, EmptyDB},
    handler::{MainnetContext, MainnetEvm},
    primitives::hardfork::SpecId,
    Context, ExecuteCommitEvm, ExecuteEvm, MainBuilder,
};
use riskgate_kit::anvil::{Anvil, AnvilError};
use std::{
    path::{Path, PathBuf},
    time::Duration,
};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("revm rejected the transaction before executing it: {0}")]
    Revm(String),
    #[error("could not start anvil")]
    Anvil(#[from] AnvilError),
    #[error("anvil RPC failed: {0}")]
    Rpc(String),
    #[error("anvil has no unlocked account to deploy from")]
    NoAccount,
    #[error("the deployment transaction {0} has no receipt after automine")]
    NoReceipt(String),
    #[error("tokio runtime: {0}")]
    Runtime(std::io::Error),
}

pub type Result<T> = std::result::Result<T, Error>;

/// What a call or a deployment did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Returned data (a deployment's address is in [`Deployed`]).
    Returned(Bytes),
    /// `REVERT` with this data.
    Reverted(Bytes),
    /// Exceptional halt (out of gas, invalid opcode, ...): never expected from the gate.
    Halted(String),
}

/// The result of deploying a gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Deployed {
    At(Address),
    Failed(Outcome),
}

/// An EVM that can hold gates.
pub trait Chain {
    fn name(&self) -> &'static str;
    fn deploy(&mut self, initcode: Bytes) -> Result<Deployed>;
    fn call(&mut self, to: Address, data: Bytes) -> Result<Outcome>;
    /// The chain id the EVM reports (`block.chainid`): the EIP-712 domain's.
    fn chain_id(&mut self) -> Result<u64>;
    /// A view run with `block.number` set to `block_number`, whatever the chain's own head: an
    /// attested read's age is counted against it, so the differential sets it explicitly.
    fn call_at_block(&mut self, to: Address, data: Bytes, block_number: u64) -> Result<Outcome>;
}

// --- revm

const CALLER: Address = Address::new([0xde; 20]);
/// Under every gas cap, enough for a 100 KB answer's calldata.
const GAS_LIMIT: u64 = 16_000_000;

/// An in-process EVM over an in-memory database, at the `prague` rules the contract is
/// compiled for.
pub struct RevmChain {
    evm: MainnetEvm<MainnetContext<CacheDB<EmptyDB>>>,
}

impl Default for RevmChain {
    fn default() -> Self {
        Self::new()
    }
}

impl RevmChain {
    pub fn new() -> Self {
        let ctx: MainnetContext<CacheDB<EmptyDB>> = Context::<BlockEnv, TxEnv, CfgEnv, _>::new(
            CacheDB::new(EmptyDB::default()),
            SpecId::PRAGUE,
        )
        .modify_cfg_chained(|cfg| {
            // Calls come from an account with no nonce bookkeeping (the gate never looks at it);
            // gas price and base fee are 0, so no ether is needed either.
            cfg.disable_nonce_check = true;
        });
        Self { evm: ctx.build_mainnet() }
    }

    fn tx(kind: TxKind, data: Bytes) -> TxEnv {
        Self::tx_from(CALLER, kind, data)
    }

    fn tx_from(caller: Address, kind: TxKind, data: Bytes) -> TxEnv {
        TxEnv {
            caller,
            kind,
            data,
            gas_limit: GAS_LIMIT,
            gas_price: 0,
            chain_id: None,
            ..TxEnv::default()
        }
    }
}

/// What a committed transaction did: its outcome, its logs (empty unless it succeeded) and its
/// gas.
#[derive(Clone, Debug)]
pub struct Receipt {
    pub outcome: Outcome,
    pub logs: Vec<Log>,
    pub gas_used: u64,
}

impl RevmChain {
    /// The block time every later transaction and call sees.
    pub fn set_time(&mut self, time_sec: u64) {
        self.evm.ctx.modify_block(|block| block.timestamp = U256::from(time_sec));
    }

    /// The block number every later transaction and call sees (`block.number`).
    pub fn set_block_number(&mut self, number: u64) {
        self.evm.ctx.modify_block(|block| block.number = U256::from(number));
    }

    /// `block.number` as the next transaction or call sees it (0 until set).
    pub fn block_number(&self) -> u64 {
        u64::try_from(self.evm.ctx.block.number).unwrap_or(u64::MAX)
    }

    /// Sends a transaction from `from` and commits its state changes (a revert changes nothing).
    pub fn send(&mut self, from: Address, to: Address, data: Bytes) -> Result<Receipt> {
        self.send_with_gas_limit(from, to, data, GAS_LIMIT)
    }

    /// [`RevmChain::send`] with its own gas limit (a batch of decisions needs more than one
    /// decision's; the block's limit is unbounded here and the `prague` rules cap no
    /// transaction).
    pub fn send_with_gas_limit(
        &mut self,
        from: Address,
        to: Address,
        data: Bytes,
        gas_limit: u64,
    ) -> Result<Receipt> {
        let tx = TxEnv { gas_limit, ..Self::tx_from(from, TxKind::Call(to), data) };
        let result = self.evm.transact_commit(tx).map_err(|e| Error::Revm(format!("{e:?}")))?;
        let gas_used = result.tx_gas_used();
        let logs = result.logs().to_vec();
        Ok(Receipt { outcome: outcome_of(result).0, logs, gas_used })
    }

    /// Deploys from `from` (the deployer becomes, for example, the gate's owner).
    pub fn deploy_from(&mut self, from: Address, initcode: Bytes) -> Result<Deployed> {
        let result = self
            .evm
            .transact_commit(Self::tx_from(from, TxKind::Create, initcode))
            .map_err(|e| Error::Revm(format!("{e:?}")))?;
        Ok(match outcome_of(result) {
            (_, Some(address)) => Deployed::At(address),
            (outcome, None) => Deployed::Failed(outcome),
        })
    }
}

fn outcome_of(result: ExecutionResult) -> (Outcome, Option<Address>) {
    match result {
        ExecutionResult::Success { output: Output::Call(data), .. } => {
            (Outcome::Returned(data), None)
        }
        ExecutionResult::Success { output: Output::Create(data, address), .. } => {
            (Outcome::Returned(data), address)
        }
        ExecutionResult::Revert { output, .. } => (Outcome::Reverted(output), None),
        ExecutionResult::Halt { reason, .. } => (Outcome::Halted(format!("{reason:?}")), None),
    }
}

impl Chain for RevmChain {
    fn name(&self) -> &'static str {
        "revm"
    }

    fn deploy(&mut self, initcode: Bytes) -> Result<Deployed> {
        let result = self
            .evm
            .transact_commit(Self::tx(TxKind::Create, initcode))
            .map_err(|e| Error::Revm(format!("{e:?}")))?;
        Ok(match outcome_of(result) {
            (_, Some(address)) => Deployed::At(address),
            (outcome, None) => Deployed::Failed(outcome),
        })
    }

    fn call(&mut self, to: Address, data: Bytes) -> Result<Outcome> {
        // A view: execute and drop the state changes.
        let result = self
            .evm
            .transact(Self::tx(TxKind::Call(to), data))
            .map_err(|e| Error::Revm(format!("{e:?}")))?;
        Ok(outcome_of(result.result).0)
    }

    fn chain_id(&mut self) -> Result<u64> {
        Ok(self.evm.ctx.cfg.chain_id)
    }

    fn call_at_block(&mut self, to: Address, data: Bytes, block_number: u64) -> Result<Outcome> {
        // Set for this call only: the block number the rest of the run sees is left as it was.
        let before = self.evm.ctx.block.number;
        self.evm.ctx.modify_block(|block| block.number = U256::from(block_number));
        let out = self.call(to, data);
        self.evm.ctx.modify_block(|block| block.number = before);
        out
    }
}

// --- anvil

/// A real anvil node (riskgate-kit's: 127.0.0.1, a free port, `--prune-history`, its state
/// folder removed), killed and reaped when dropped, whatever step of the start-up failed.
pub struct AnvilChain {
    runtime: tokio::runtime::Runtime,
    provider: RootProvider,
    deployer: Address,
    accounts: Vec<Address>,
    pub url: String,
    // Last: dropped (and the node stopped) after the provider.
    _node: Anvil,
}

/// The anvil binary installed by `make bootstrap`, found from the workspace root.
pub fn default_anvil_path() -> PathBuf {
    riskgate_kit::anvil::default_bin(&crate::artifact::workspace_root())
}

impl AnvilChain {
    pub fn spawn(anvil: &Path) -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        // The differential reads only the latest state: no history needed.
        let node = runtime.block_on(Anvil::builder(anvil).start())?;
        let url = node.url.to_string().trim_end_matches('/').to_string();
        let provider = ProviderBuilder::new()
            .disable_recommended_fillers()
            .connect_http(node.url.clone())
            .root()
            .clone();
        let accounts =
            runtime.block_on(provider.get_accounts()).map_err(|e| Error::Rpc(e.to_string()))?;
        let deployer = *accounts.first().ok_or(Error::NoAccount)?;
        Ok(Self { runtime, provider, deployer, accounts, url, _node: node })
    }

    /// The node's unlocked accounts; the first deploys.
    pub fn accounts(&self) -> &[Address] {
        &self.accounts
    }

    /// The latest mined block (`eth_blockNumber`); anvil mines the next transaction in the one
    /// after it.
    pub fn block_number(&mut self) -> Result<u64> {
        let provider = self.provider.clone();
        self.runtime
            .block_on(async move { provider.get_block_number().await })
            .map_err(|e| Error::Rpc(e.to_string()))
    }

    /// An `eth_call` from `from` (a view, or a dry run of a transaction: nothing is mined).
    pub fn call_from(&mut self, from: Address, to: Address, data: Bytes) -> Result<Outcome> {
        let provider = self.provider.clone();
        self.runtime.block_on(async move {
            let tx = TransactionRequest::default()
                .with_from(from)
                .with_to(to)
                .with_input(data)
                .with_gas_limit(GAS_LIMIT);
            match provider.call(tx).await {
                Ok(out) => Ok(Outcome::Returned(out)),
                Err(e) => rpc_outcome(e),
            }
        })
    }

    /// A real transaction from the unlocked account `from`, mined as it arrives: its status,
    /// block and logs (a reverted one is mined too, with status false and no logs).
    pub fn send_from(&mut self, from: Address, to: Address, data: Bytes) -> Result<AnvilReceipt> {
        let provider = self.provider.clone();
        self.runtime.block_on(async move {
            let tx = TransactionRequest::default()
                .with_from(from)
                .with_to(to)
                .with_input(data)
                .with_gas_limit(GAS_LIMIT);
            let pending =
                provider.send_transaction(tx).await.map_err(|e| Error::Rpc(e.to_string()))?;
            let hash = *pending.tx_hash();
            for _ in 0..100 {
                if let Some(receipt) = provider
                    .get_transaction_receipt(hash)
                    .await
                    .map_err(|e| Error::Rpc(e.to_string()))?
                {
                    return Ok(AnvilReceipt {
                        status: receipt.status(),
                        block_number: receipt.block_number.unwrap_or_default(),
                        logs: receipt.inner.logs().iter().map(|l| l.inner.clone()).collect(),
                    });
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(Error::NoReceipt(hash.to_string()))
        })
    }
}

/// What a transaction did on anvil.
#[derive(Clone, Debug)]
pub struct AnvilReceipt {
    pub status: bool,
    /// The block it was mined in.
    pub block_number: u64,
    pub logs: Vec<Log>,
}

/// Splits an RPC error into "the EVM reverted with this data" and "the RPC itself failed".
fn rpc_outcome(err: alloy::transports::TransportError) -> Result<Outcome> {
    if let Some(payload) = err.as_error_resp() {
        if let Some(data) = payload.as_revert_data() {
            return Ok(Outcome::Reverted(data));
        }
        // anvil reports a revert without data as "execution reverted" and no data field.
        if payload.message.contains("revert") {
            return Ok(Outcome::Reverted(Bytes::new()));
        }
        return Ok(Outcome::Halted(payload.message.to_string()));
    }
    Err(Error::Rpc(err.to_string()))
}

impl Chain for AnvilChain {
    fn name(&self) -> &'static str {
        "anvil"
    }

    fn deploy(&mut self, initcode: Bytes) -> Result<Deployed> {
        let provider = self.provider.clone();
        let from = self.deployer;
        self.runtime.block_on(async move {
            let tx = TransactionRequest::default()
                .with_from(from)
                .with_deploy_code(initcode.clone())
                .with_gas_limit(GAS_LIMIT);
            // Dry-run first: a refused constructor shows its revert data through eth_call.
            if let Err(e) = provider.call(tx.clone()).await {
                return rpc_outcome(e).map(Deployed::Failed);
            }
            let pending = match provider.send_transaction(tx).await {
                Ok(p) => p,
                Err(e) => return rpc_outcome(e).map(Deployed::Failed),
            };
            let hash = *pending.tx_hash();
            // anvil mines each transaction as it arrives; allow a few short polls all the same.
            for _ in 0..100 {
                if let Some(receipt) = provider
                    .get_transaction_receipt(hash)
                    .await
                    .map_err(|e| Error::Rpc(e.to_string()))?
                {
                    return Ok(match receipt.contract_address {
                        Some(address) if receipt.status() => Deployed::At(address),
                        _ => Deployed::Failed(Outcome::Halted(format!(
                            "deployment {hash} failed on chain"
                        ))),
                    });
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(Error::NoReceipt(hash.to_string()))
        })
    }

    fn call(&mut self, to: Address, data: Bytes) -> Result<Outcome> {
        let provider = self.provider.clone();
        self.runtime.block_on(async move {
            let tx = TransactionRequest::default().with_to(to).with_input(data);
            match provider.call(tx).await {
                Ok(out) => Ok(Outcome::Returned(out)),
                Err(e) => rpc_outcome(e),
            }
        })
    }

    fn chain_id(&mut self) -> Result<u64> {
        let provider = self.provider.clone();
        self.runtime
            .block_on(async move { provider.get_chain_id().await })
            .map_err(|e| Error::Rpc(e.to_string()))
    }

    /// `eth_call` with a block override of `number` (on the latest state).
    fn call_at_block(&mut self, to: Address, data: Bytes, block_number: u64) -> Result<Outcome> {
        let provider = self.provider.clone();
        self.runtime.block_on(async move {
            let tx = TransactionRequest::default().with_to(to).with_input(data);
            let overrides =
                BlockOverrides { number: Some(U256::from(block_number)), ..Default::default() };
            match provider.call(tx).with_block_overrides(overrides).await {
                Ok(out) => Ok(Outcome::Returned(out)),
                Err(e) => rpc_outcome(e),
            }
        })
    }
}
