//! A local world for the demo, the bench and the tests: a spawned anvil, the contracts compiled
//! from this repository and deployed, a maker that seeds books and resolves markets, and time
//! moved with `evm_increaseTime`/`evm_mine`. Uses the public anvil development keys, and only
//! against the anvil it spawned itself.

use crate::{
    anvil::{Anvil, AnvilError},
    bindings::{IBinaryMarket, IMarketFactory, IRiskGate, ITestCollateral},
    chain::{self, short},
    compile::{self, Artifacts},
    deploy::{self, Deployment},
    executor,
};
use alloy::{
    primitives::{Address, TxHash, U256},
    providers::{DynProvider, Provider},
    sol_types::SolEvent,
};
use std::{path::Path, time::Duration};

#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    #[error(transparent)]
    Anvil(#[from] AnvilError),
    #[error(transparent)]
    Chain(#[from] chain::ChainError),
    #[error(transparent)]
    Compile(#[from] compile::CompileError),
    #[error(transparent)]
    Deploy(#[from] deploy::DeployError),
    #[error("{what}: {reason}")]
    Tx { what: String, reason: String },
}

pub type Result<T> = std::result::Result<T, WorldError>;

pub struct World {
    pub anvil: Anvil,
    pub keeper: DynProvider,
    pub maker: DynProvider,
    pub keeper_addr: Address,
    pub maker_addr: Address,
    pub deployment: Deployment,
    pub artifacts: Artifacts,
}

fn tx_err(what: &str) -> impl Fn(String) -> WorldError + '_ {
    move |reason| WorldError::Tx { what: what.to_string(), reason }
}

/// Waits for a mined, successful receipt.
pub async fn confirm(
    p: &DynProvider,
    what: &str,
    tx: TxHash,
) -> Result<alloy::rpc::types::TransactionReceipt> {
    let r = executor::wait_receipt(p, tx, Duration::from_secs(60))
        .await
        .map_err(|e| tx_err(what)(e.to_string()))?;
    if !r.status() {
        return Err(tx_err(what)(format!("tx {tx} reverted")));
    }
    Ok(r)
}

impl World {
    /// Starts anvil (extra args e.g. `--dump-state FILE`), compiles, deploys with `params`.
    pub async fn start(
        anvil_bin: &Path,
        root: &Path,
        params: &IRiskGate::Params,
        extra: &[String],
    ) -> Result<Self> {
        let anvil = Anvil::start(anvil_bin, None, extra).await?;
        let artifacts = compile::compile(root)?;
        Self::deploy_on(anvil, artifacts, params).await
    }

    pub async fn deploy_on(
        anvil: Anvil,
        artifacts: Artifacts,
        params: &IRiskGate::Params,
    ) -> Result<Self> {
        let ks = chain::dev_signer(anvil.dev_key(0)?)?;
        let ms = chain::dev_signer(anvil.dev_key(1)?)?;
        let keeper_addr = ks.address();
        let maker_addr = ms.address();
        let keeper = chain::signing_provider(&anvil.url, ks);
        let maker = chain::signing_provider(&anvil.url, ms);
        let chain_id =
            keeper.get_chain_id().await.map_err(|e| tx_err("chain id")(short(&e.to_string())))?;
        let deployment =
            deploy::deploy_all(&keeper, chain_id, &artifacts, params, None, None, keeper_addr)
                .await?;
        let w = Self { anvil, keeper, maker, keeper_addr, maker_addr, deployment, artifacts };
        w.mint(maker_addr, U256::from(1_000_000_000_000u64)).await?;
        Ok(w)
    }

    pub async fn stop(self) {
        self.anvil.stop().await;
    }

    pub async fn chain_time(&self) -> Result<u64> {
        Ok(crate::collectors::head(&self.keeper)
            .await
            .map_err(|e| tx_err("head")(e.to_string()))?
            .1)
    }

    /// Moves chain time forward and mines a block.
    pub async fn advance(&self, secs: u64) -> Result<()> {
        let e =
            |x: alloy::transports::TransportError| tx_err("advance time")(short(&x.to_string()));
        let _: serde_json::Value =
            self.keeper.raw_request("evm_increaseTime".into(), (secs,)).await.map_err(e)?;
        let _: serde_json::Value =
            self.keeper.raw_request("evm_mine".into(), ()).await.map_err(e)?;
        Ok(())
    }

    /// Mints test collateral (open faucet).
    pub async fn mint(&self, to: Address, amount: U256) -> Result<()> {
        let c = ITestCollateral::new(self.deployment.collateral, &self.maker);
        let tx =
            c.mint(to, amount).send().await.map_err(|e| tx_err("mint")(executor::describe(&e)))?;
        confirm(&self.maker, "mint", *tx.tx_hash()).await?;
        Ok(())
    }

    /// Creates a market resolved by the maker; returns its address.
    pub async fn create_market(
        &self,
        tick: u64,
        lot: u64,
        min_qty: u64,
        expiry: u64,
    ) -> Result<Address> {
        let f = IMarketFactory::new(self.deployment.factory, &self.maker);
        let tx = f
            .createMarket(
                U256::from(tick),
                U256::from(lot),
                U256::from(min_qty),
                expiry,
                self.maker_addr,
            )
            .send()
            .await
            .map_err(|e| tx_err("createMarket")(executor::describe(&e)))?;
        let r = confirm(&self.maker, "createMarket", *tx.tx_hash()).await?;
        let market = r
            .inner
            .logs()
            .iter()
            .find_map(|l| IMarketFactory::MarketCreated::decode_log(&l.inner).ok())
            .map(|ev| ev.data.market)
            .ok_or_else(|| tx_err("createMarket")("no MarketCreated log".into()))?;
        let c = ITestCollateral::new(self.deployment.collateral, &self.maker);
        let tx = c
            .approve(market, U256::MAX)
            .send()
            .await
            .map_err(|e| tx_err("approve")(executor::describe(&e)))?;
        confirm(&self.maker, "approve", *tx.tx_hash()).await?;
        Ok(market)
    }

    /// Rests a maker ask (sells UP at `price`, i.e. buys DOWN).
    pub async fn ask(&self, market: Address, price: u64, qty: u64) -> Result<()> {
        let m = IBinaryMarket::new(market, &self.maker);
        let tx = m
            .placeAsk(U256::from(price), U256::from(qty))
            .send()
            .await
            .map_err(|e| tx_err("placeAsk")(executor::describe(&e)))?;
        confirm(&self.maker, "placeAsk", *tx.tx_hash()).await?;
        Ok(())
    }

    /// Rests a maker bid (buys UP at `price`).
    pub async fn bid(&self, market: Address, price: u64, qty: u64) -> Result<()> {
        let m = IBinaryMarket::new(market, &self.maker);
        let tx = m
            .placeBid(U256::from(price), U256::from(qty))
            .send()
            .await
            .map_err(|e| tx_err("placeBid")(executor::describe(&e)))?;
        confirm(&self.maker, "placeBid", *tx.tx_hash()).await?;
        Ok(())
    }

    /// Finalizes a market (maker is the resolver; only after expiry).
    pub async fn resolve(&self, market: Address, up_wins: bool) -> Result<()> {
        let m = IBinaryMarket::new(market, &self.maker);
        let tx = m
            .resolve(up_wins)
            .send()
            .await
            .map_err(|e| tx_err("resolve")(executor::describe(&e)))?;
        confirm(&self.maker, "resolve", *tx.tx_hash()).await?;
        Ok(())
    }

    /// A keeper pointed at this world's gate.
    pub fn keeper(&self, results: Option<std::path::PathBuf>) -> crate::runner::Keeper {
        crate::runner::Keeper::new(
            self.keeper.clone(),
            self.deployment.chain_id,
            self.deployment.gate,
            self.deployment.factory,
            self.keeper_addr,
            self.deployment.deploy_block,
            results,
        )
    }
}
