//! A local world for the demo, the bench and the tests: a spawned anvil, the contracts compiled
//! from this repository and deployed, a maker that seeds books and resolves markets, two
//! adversaries (a resolver the demo's gate trusts and later turns hostile, and an outsider it
//! does not trust), and time moved with `evm_increaseTime`/`evm_mine` or pinned with
//! `evm_setNextBlockTimestamp`. Uses the development keys the anvil it spawned itself published,
//! and only against that anvil.

use crate::{
    chain,
    chain::sender::{self, CallFailed},
    commands::deploy::{self, Deployment, GateSpec},
    commands::market::{self, MarketSpec, Side, UpOrder},
    kit::anvil::{Anvil, AnvilError},
    kit::bindings::{IBinaryMarket, IRiskGate, ISomniaVerdictSource, ITestCollateral},
    kit::compile::{self, Artifacts},
};
use alloy::{
    primitives::{Address, TxHash, U256},
    providers::{DynProvider, Provider},
    sol_types::SolValue,
    transports::TransportError,
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
    #[error(transparent)]
    Config(#[from] crate::domain::config::ConfigError),
    /// A contract call or transaction refused, named, with its decoded revert.
    #[error(transparent)]
    Call(#[from] CallFailed),
    #[error("{what}: no receipt for tx {tx}")]
    Receipt {
        what: &'static str,
        tx: TxHash,
        #[source]
        source: Box<sender::ExecError>,
    },
    #[error("{what}: tx {tx} reverted")]
    Reverted { what: &'static str, tx: TxHash },
    #[error("{what} failed")]
    Rpc {
        what: &'static str,
        #[source]
        source: Box<TransportError>,
    },
    /// A venue chore (create, place, resolve) through the same code `keeper market` runs.
    #[error(transparent)]
    Market(#[from] market::MarketError),
    #[error(
        "the gate was deployed at {got}, not at {predicted}, the address its verdict source names"
    )]
    GateMoved { predicted: Address, got: Address },
    #[error("maker key {index} from label {label:?} is not a valid secp256k1 key: {why}")]
    Key { label: String, index: usize, why: String },
    #[error("reading the chain head failed")]
    Head(#[source] Box<crate::chain::follower::FollowError>),
    #[error("attestor process: {what}")]
    Attestor {
        what: String,
        #[source]
        source: Option<std::io::Error>,
    },
}

pub type Result<T> = std::result::Result<T, WorldError>;

/// anvil's dev accounts that attest on an attested world's gate (the actors use 0 to 3).
pub const ATTESTOR_ACCOUNTS: [usize; 3] = [6, 7, 8];

/// The address of attestor `i` of `anvil` (its dev account `ATTESTOR_ACCOUNTS[i]`).
pub fn attestor_address(anvil: &Anvil, i: usize) -> Result<Address> {
    let key = anvil.dev_key(ATTESTOR_ACCOUNTS[i % ATTESTOR_ACCOUNTS.len()])?;
    Ok(chain::dev_signer(key)?.address())
}

/// Every attestor's address, ascending, as an attested gate's set lists them.
pub fn attestor_signers(anvil: &Anvil) -> Result<Vec<Address>> {
    let mut signers = (0..ATTESTOR_ACCOUNTS.len())
        .map(|i| attestor_address(anvil, i))
        .collect::<Result<Vec<_>>>()?;
    signers.sort();
    Ok(signers)
}

/// A `keeper attest` child process (this binary), killed when dropped.
pub struct AttestorChild {
    _child: tokio::process::Child,
    /// Its base URL, as it announced it.
    pub url: String,
}

/// The accounts of a world, by role (anvil dev accounts 0..=3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    /// Deploys the gate and submits verdicts.
    Keeper,
    /// Seeds honest books and resolves its markets honestly.
    Maker,
    /// A resolver the demo's gate trusts, turned hostile: resolves its own markets against the
    /// gate.
    Hostile,
    /// Anyone: creates markets naming whatever resolver it likes, trades around the gate.
    Outsider,
}

impl Actor {
    fn index(self) -> usize {
        match self {
            Self::Keeper => 0,
            Self::Maker => 1,
            Self::Hostile => 2,
            Self::Outsider => 3,
        }
    }
}

/// A consensus gate's verdict source over the stand-in platform, deployed with the gate
/// ([`World::deploy_consensus`]).
#[derive(Debug, Clone)]
pub struct SourcePlan {
    /// The stand-in's validators, in the order it seats them.
    pub validators: Vec<Address>,
    /// The stand-in's deposit floor per validator (its price per validator is the settings').
    pub deposit_per_agent: U256,
    /// The source's settings; `gate` and `platform` are filled in at deploy.
    pub settings: ISomniaVerdictSource::Settings,
}

/// What a consensus world deployed besides the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsensusDeployment {
    /// The stand-in platform.
    pub platform: Address,
    pub source: Address,
}

pub struct World {
    pub anvil: Anvil,
    /// A consensus gate's stand-in platform and verdict source; None on the other modes.
    pub consensus: Option<ConsensusDeployment>,
    /// The keeper account's signing RPC handle.
    pub keeper_rpc: DynProvider,
    pub maker: DynProvider,
    pub keeper_addr: Address,
    pub maker_addr: Address,
    pub deployment: Deployment,
    pub artifacts: Artifacts,
    /// The gate's bounds, as deployed.
    pub params: IRiskGate::Params,
    /// (address, signing provider) per `Actor`, in `Actor::index` order.
    accounts: Vec<(Address, DynProvider)>,
    /// Markets this world created: the next one's question is drawn from it.
    created: std::sync::atomic::AtomicU64,
}

fn rpc_err(what: &'static str) -> impl Fn(TransportError) -> WorldError {
    move |e| WorldError::Rpc { what, source: Box::new(e) }
}

/// The `n`th market's question: a plausible price question, different for each `n`, dated by
/// the market's `expiry` (UTC).
pub fn question_for(n: u64, expiry: u64) -> String {
    const ASSETS: [(&str, u64, u64); 6] = [
        ("ETH", 3_000, 100),
        ("BTC", 95_000, 1_000),
        ("SOL", 180, 5),
        ("LINK", 18, 1),
        ("AVAX", 30, 2),
        ("DOT", 6, 1),
    ];
    let (asset, base, step) = ASSETS[(n % ASSETS.len() as u64) as usize];
    let level = base + step * (n / ASSETS.len() as u64 % 10);
    let level = crate::domain::format::grouped(u128::from(level));
    match crate::domain::format::utc_date(expiry) {
        Some(when) => format!("Will {asset} close above {level} USD at {when} UTC?"),
        None => format!("Will {asset} close above {level} USD at unix time {expiry}?"),
    }
}

/// [`World::fillable_min_qty`] for `params`.
pub fn fillable_min_qty(params: &IRiskGate::Params, lot: u64) -> u64 {
    let lot = lot.max(1);
    let max_size = u64::try_from(params.maxSize).unwrap_or(u64::MAX);
    let quantity = max_size / lot * lot;
    let per_match = crate::kit::bindings::MAX_MATCHES_PER_TAKE * crate::kit::bindings::BPS;
    let need =
        (u128::from(quantity) * u128::from(params.minFillBps)).div_ceil(u128::from(per_match));
    let need = u64::try_from(need).unwrap_or(u64::MAX);
    need.div_ceil(lot).saturating_mul(lot).max(lot)
}

/// Waits for a mined, successful receipt.
pub async fn confirm(
    p: &DynProvider,
    what: &'static str,
    tx: TxHash,
) -> Result<alloy::rpc::types::TransactionReceipt> {
    let r = sender::wait_receipt(p, tx, Duration::from_secs(60))
        .await
        .map_err(|e| WorldError::Receipt { what, tx, source: Box::new(e) })?;
    if !r.status() {
        return Err(WorldError::Reverted { what, tx });
    }
    Ok(r)
}

/// Pins `anvil`'s clock: every later block is exactly 1 s after the one before it, whenever it
/// is mined, so chain time is a count of blocks (and of [`World::advance`] jumps) and the wall
/// clock never leaks into it. Call it before anything is mined, on an anvil started with
/// `--timestamp` (the genesis time), and the chain's every timestamp is fixed by what is sent.
/// Not kept across an anvil restart.
pub async fn pin_clock(anvil: &Anvil) -> Result<()> {
    let p = chain::read_provider(&anvil.url)?;
    let _: serde_json::Value = p
        .raw_request("anvil_setBlockTimestampInterval".into(), (1u64,))
        .await
        .map_err(rpc_err("anvil_setBlockTimestampInterval"))?;
    Ok(())
}

/// Deploys a collateral, a factory, the stand-in platform and a verdict source naming the
/// address the keeper's next creation will have, and points `spec` at them; returns them and
/// that address. The collateral and factory come first, here and not in
/// [`deploy::deploy_all`]: its preflight simulates the gate's constructor as the keeper's next
/// creation, and the source (which the constructor asks for its gate) must name that address.
async fn deploy_source(
    keeper_rpc: &DynProvider,
    keeper: Address,
    artifacts: &Artifacts,
    plan: &SourcePlan,
    spec: &mut GateSpec,
) -> Result<(ConsensusDeployment, Address)> {
    let collateral =
        deploy::create(keeper_rpc, "TestCollateral", &artifacts.collateral.bytecode, vec![])
            .await?
            .0;
    let factory_args = collateral.abi_encode();
    let factory =
        deploy::create(keeper_rpc, "MarketFactory", &artifacts.factory.bytecode, factory_args)
            .await?
            .0;
    let standin_args =
        (plan.validators.clone(), plan.deposit_per_agent, plan.settings.pricePerAgent)
            .abi_encode_params();
    let platform = deploy::create(
        keeper_rpc,
        "SomniaAgentsStandIn",
        &artifacts.somnia_standin.bytecode,
        standin_args,
    )
    .await?
    .0;
    let nonce = keeper_rpc
        .get_transaction_count(keeper)
        .latest()
        .await
        .map_err(rpc_err("eth_getTransactionCount"))?;
    // The source is the next creation; the gate the one after it.
    let gate = keeper.create(nonce + 1);
    let settings = ISomniaVerdictSource::Settings { gate, platform, ..plan.settings.clone() };
    let source = deploy::create(
        keeper_rpc,
        "SomniaVerdictSource",
        &artifacts.somnia_source.bytecode,
        (settings,).abi_encode_params(),
    )
    .await?
    .0;
    spec.collateral = Some(collateral);
    spec.factory = Some(factory);
    spec.verdict_source = source;
    Ok((ConsensusDeployment { platform, source }, gate))
}

impl World {
    /// Starts anvil (extra args e.g. `--dump-state FILE`), compiles, deploys with `params`,
    /// trusting the maker only.
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

    /// Deploys on `anvil` with `params`, trusting the maker only, as resolver and as market
    /// creator (the keeper is neither: the gate refuses a keeper holding a trusted role).
    pub async fn deploy_on(
        anvil: Anvil,
        artifacts: Artifacts,
        params: &IRiskGate::Params,
    ) -> Result<Self> {
        Self::deploy_trusting(anvil, artifacts, params, &[Actor::Maker], &[Actor::Maker]).await
    }

    /// Deploys on `anvil` with `params`, trusting the resolvers `trusted` and the market
    /// creators `creators` (at least one each; never the keeper).
    pub async fn deploy_trusting(
        anvil: Anvil,
        artifacts: Artifacts,
        params: &IRiskGate::Params,
        trusted: &[Actor],
        creators: &[Actor],
    ) -> Result<Self> {
        Self::deploy_with(anvil, artifacts, params, trusted, creators, deploy::relayed()).await
    }

    /// As [`World::deploy_trusting`], the gate in the mode `attestors` sets (relayed when it
    /// names no signer).
    pub async fn deploy_with(
        anvil: Anvil,
        artifacts: Artifacts,
        params: &IRiskGate::Params,
        trusted: &[Actor],
        creators: &[Actor],
        attestors: IRiskGate::Attestors,
    ) -> Result<Self> {
        Self::deploy_mode(anvil, artifacts, params, trusted, creators, attestors, None).await
    }

    /// As [`World::deploy_trusting`], the gate in the consensus mode: the stand-in platform and
    /// the verdict source `plan` describes are deployed first, the source naming the address
    /// the gate is then deployed at.
    pub async fn deploy_consensus(
        anvil: Anvil,
        artifacts: Artifacts,
        params: &IRiskGate::Params,
        trusted: &[Actor],
        creators: &[Actor],
        plan: &SourcePlan,
    ) -> Result<Self> {
        // A consensus gate holds its source's read bounds too, and no attestor.
        let bounds = IRiskGate::Attestors {
            signers: vec![],
            threshold: 0,
            maxReadAge: plan.settings.maxReadAge,
            maxSlippageBps: plan.settings.maxSlippageBps,
        };
        Self::deploy_mode(anvil, artifacts, params, trusted, creators, bounds, Some(plan)).await
    }

    async fn deploy_mode(
        anvil: Anvil,
        artifacts: Artifacts,
        params: &IRiskGate::Params,
        trusted: &[Actor],
        creators: &[Actor],
        attestors: IRiskGate::Attestors,
        plan: Option<&SourcePlan>,
    ) -> Result<Self> {
        let mut accounts = Vec::new();
        for i in 0..4 {
            let signer = chain::dev_signer(anvil.dev_key(i)?)?;
            let addr = signer.address();
            accounts.push((addr, chain::signing_provider(&anvil.url, signer)?));
        }
        let (keeper_addr, keeper_rpc) = accounts[Actor::Keeper.index()].clone();
        let (maker_addr, maker) = accounts[Actor::Maker.index()].clone();
        let chain_id = keeper_rpc.get_chain_id().await.map_err(rpc_err("eth_chainId"))?;
        let given: Vec<Address> = trusted.iter().map(|a| accounts[a.index()].0).collect();
        let trusted_resolvers = crate::domain::config::trusted_resolver_list(&given)?;
        let given: Vec<Address> = creators.iter().map(|a| accounts[a.index()].0).collect();
        let trusted_creators = crate::domain::config::trusted_creator_list(&given)?;
        let mut spec = GateSpec {
            params: params.clone(),
            trusted_resolvers,
            trusted_creators,
            collateral: None,
            factory: None,
            keeper: keeper_addr,
            attestors,
            verdict_source: Address::ZERO,
        };
        let consensus = match plan {
            Some(plan) => {
                Some(deploy_source(&keeper_rpc, keeper_addr, &artifacts, plan, &mut spec).await?)
            }
            None => None,
        };
        let deployment = deploy::deploy_all(&keeper_rpc, chain_id, &artifacts, &spec).await?;
        if let Some((_, predicted)) = consensus {
            if predicted != deployment.gate {
                return Err(WorldError::GateMoved { predicted, got: deployment.gate });
            }
        }
        let w = Self {
            anvil,
            consensus: consensus.map(|(c, _)| c),
            keeper_rpc,
            maker,
            keeper_addr,
            maker_addr,
            deployment,
            artifacts,
            params: params.clone(),
            accounts,
            created: Default::default(),
        };
        for who in [Actor::Maker, Actor::Hostile, Actor::Outsider] {
            w.mint(w.addr(who), U256::from(1_000_000_000_000u64)).await?;
        }
        Ok(w)
    }

    /// The address of `who`.
    pub fn addr(&self, who: Actor) -> Address {
        self.accounts[who.index()].0
    }

    /// A provider signing as `who`.
    pub fn signer(&self, who: Actor) -> &DynProvider {
        &self.accounts[who.index()].1
    }

    pub async fn stop(self) {
        self.anvil.stop().await;
    }

    pub async fn chain_time(&self) -> Result<u64> {
        Ok(crate::chain::follower::head(&self.keeper_rpc)
            .await
            .map_err(|e| WorldError::Head(Box::new(e)))?
            .time)
    }

    /// Mines one block `secs` after the head's timestamp (`evm_setNextBlockTimestamp`, which
    /// anvil honours whether or not the clock is pinned; `evm_increaseTime` it ignores while
    /// pinned).
    pub async fn advance(&self, secs: u64) -> Result<()> {
        let now = self.chain_time().await?;
        self.mine_at(now + secs.max(1)).await
    }

    /// Mines one block at exactly `timestamp` (later than the head), so a test reads a chain
    /// time that wall-clock time spent between two calls cannot move.
    pub async fn mine_at(&self, timestamp: u64) -> Result<()> {
        let _: serde_json::Value = self
            .keeper_rpc
            .raw_request("evm_setNextBlockTimestamp".into(), (timestamp,))
            .await
            .map_err(rpc_err("evm_setNextBlockTimestamp"))?;
        let _: serde_json::Value = self
            .keeper_rpc
            .raw_request("evm_mine".into(), ())
            .await
            .map_err(rpc_err("evm_mine"))?;
        Ok(())
    }

    /// Mines a block every `secs` seconds of wall-clock time, as a live chain does, beside
    /// automine (0: only on demand again).
    pub async fn interval_mining(&self, secs: u64) -> Result<()> {
        let _: serde_json::Value = self
            .keeper_rpc
            .raw_request("evm_setIntervalMining".into(), (secs,))
            .await
            .map_err(rpc_err("evm_setIntervalMining"))?;
        Ok(())
    }

    /// Turns anvil's automine (a block per transaction, as it arrives) off or on.
    pub async fn automine(&self, on: bool) -> Result<()> {
        let _: serde_json::Value = self
            .keeper_rpc
            .raw_request("evm_setAutomine".into(), (on,))
            .await
            .map_err(rpc_err("evm_setAutomine"))?;
        Ok(())
    }

    /// `who`'s nonce counting the transactions in the pool.
    pub async fn pending_nonce(&self, who: Address) -> Result<u64> {
        self.keeper_rpc
            .get_transaction_count(who)
            .pending()
            .await
            .map_err(rpc_err("eth_getTransactionCount (pending)"))
    }

    /// `who`'s nonce at the head.
    pub async fn nonce(&self, who: Address) -> Result<u64> {
        self.keeper_rpc
            .get_transaction_count(who)
            .latest()
            .await
            .map_err(rpc_err("eth_getTransactionCount"))
    }

    /// Mints test collateral (open faucet).
    pub async fn mint(&self, to: Address, amount: U256) -> Result<()> {
        let c = ITestCollateral::new(self.deployment.collateral, &self.maker);
        let tx = c.mint(to, amount).send().await.map_err(CallFailed::on("mint"))?;
        confirm(&self.maker, "mint", *tx.tx_hash()).await?;
        Ok(())
    }

    /// `who` moves `amount` of collateral to `to` with a plain ERC-20 transfer (to the gate: a
    /// donation, which the gate's next settle counts as a deposit).
    pub async fn transfer_as(&self, who: Actor, to: Address, amount: U256) -> Result<()> {
        let p = self.signer(who);
        let c = ITestCollateral::new(self.deployment.collateral, p);
        let tx = c.transfer(to, amount).send().await.map_err(CallFailed::on("transfer"))?;
        confirm(p, "transfer", *tx.tx_hash()).await?;
        Ok(())
    }

    /// `who` approves the gate and calls `deposit(amount)` (open to anyone).
    pub async fn deposit_as(&self, who: Actor, amount: U256) -> Result<()> {
        let p = self.signer(who);
        let c = ITestCollateral::new(self.deployment.collateral, p);
        let tx = c
            .approve(self.deployment.gate, amount)
            .send()
            .await
            .map_err(CallFailed::on("approve"))?;
        confirm(p, "approve", *tx.tx_hash()).await?;
        let g = IRiskGate::new(self.deployment.gate, p);
        let tx = g.deposit(amount).send().await.map_err(CallFailed::on("deposit"))?;
        confirm(p, "deposit", *tx.tx_hash()).await?;
        Ok(())
    }

    /// The owner (the deploying keeper account) withdraws `amount` to itself.
    pub async fn withdraw(&self, amount: U256) -> Result<()> {
        let g = IRiskGate::new(self.deployment.gate, &self.keeper_rpc);
        let tx = g
            .withdrawCollateral(self.keeper_addr, amount)
            .send()
            .await
            .map_err(CallFailed::on("withdrawCollateral"))?;
        confirm(&self.keeper_rpc, "withdrawCollateral", *tx.tx_hash()).await?;
        Ok(())
    }

    /// `(H, balance)`: the gate's high-water mark and the collateral it holds, read now.
    pub async fn gate_marks(&self) -> Result<(U256, U256)> {
        let g = IRiskGate::new(self.deployment.gate, &self.keeper_rpc);
        let h = g.highWaterMark().call().await.map_err(CallFailed::on("highWaterMark"))?;
        let c = ITestCollateral::new(self.deployment.collateral, &self.keeper_rpc);
        let b =
            c.balanceOf(self.deployment.gate).call().await.map_err(CallFailed::on("balanceOf"))?;
        Ok((h, b))
    }

    /// How many positions the gate holds now.
    pub async fn open_positions(&self) -> Result<u8> {
        let g = IRiskGate::new(self.deployment.gate, &self.keeper_rpc);
        Ok(g.openPositions().call().await.map_err(CallFailed::on("openPositions"))?)
    }

    /// An ask from a maker outside the four roles (see [`World::extra_makers`]): approves
    /// `market`, then rests the order.
    pub async fn rest_ask_with(
        &self,
        signer: &DynProvider,
        market: Address,
        price: u64,
        qty: u64,
    ) -> Result<()> {
        let c = ITestCollateral::new(self.deployment.collateral, signer);
        let tx = c.approve(market, U256::MAX).send().await.map_err(CallFailed::on("approve"))?;
        confirm(signer, "approve", *tx.tx_hash()).await?;
        market::place(signer, market, UpOrder { is_bid: false, up_price: price, qty }).await?;
        Ok(())
    }

    /// `n` makers at distinct addresses beyond the four roles, from deterministic keys
    /// (keccak256 of `label` and the index), each given 10 ETH with `anvil_setBalance` and
    /// `collateral` test collateral. Returns (address, signing provider) per maker.
    pub async fn extra_makers(
        &self,
        label: &str,
        n: usize,
        collateral: U256,
    ) -> Result<Vec<(Address, DynProvider)>> {
        let mut out = Vec::with_capacity(n);
        let ten_eth = U256::from(10u64).pow(U256::from(19u64));
        for i in 0..n {
            let key = alloy::primitives::keccak256(format!("{label} {i}"));
            let signer =
                alloy::signers::local::PrivateKeySigner::from_bytes(&key).map_err(|e| {
                    WorldError::Key { label: label.to_string(), index: i, why: e.to_string() }
                })?;
            let addr = signer.address();
            let _: serde_json::Value = self
                .keeper_rpc
                .raw_request("anvil_setBalance".into(), (addr, ten_eth))
                .await
                .map_err(rpc_err("anvil_setBalance"))?;
            self.mint(addr, collateral).await?;
            out.push((addr, chain::signing_provider(&self.anvil.url, signer)?));
        }
        Ok(out)
    }

    /// The smallest `minQuantity` on a `lot` grid with which one IOC of this gate's order can
    /// reach the minimum fill within the venue's match cap, so the market is not refused by
    /// rule 20: `m = max(minQuantity, lot)` with `64 × m × 10000 ≥ quantity × minFillBps`,
    /// `quantity` being `maxSize` snapped down onto the lot grid. For the tests' and the demo's
    /// bounds (maxSize 10,000,000, minFillBps 2,500) and lot 100: 25,000,000,000 / 640,000 =
    /// 39,062.5, so 39,063, rounded up onto the grid: 39,100.
    pub fn fillable_min_qty(&self, lot: u64) -> u64 {
        fillable_min_qty(&self.params, lot)
    }

    /// Creates a market resolved by the maker; returns its address.
    pub async fn create_market(
        &self,
        tick: u64,
        lot: u64,
        min_qty: u64,
        expiry: u64,
    ) -> Result<Address> {
        self.create_market_as(Actor::Maker, tick, lot, min_qty, expiry, self.maker_addr).await
    }

    /// `creator` creates a market naming `resolver` (the factory lets anyone name anyone) and
    /// approves it to pull the creator's collateral.
    pub async fn create_market_as(
        &self,
        creator: Actor,
        tick: u64,
        lot: u64,
        min_qty: u64,
        expiry: u64,
        resolver: Address,
    ) -> Result<Address> {
        let n = self.created.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let question = question_for(n, expiry);
        self.create_market_asking(creator, &question, tick, lot, min_qty, expiry, resolver).await
    }

    /// [`World::create_market_as`] with its question given.
    #[allow(clippy::too_many_arguments)]
    pub async fn create_market_asking(
        &self,
        creator: Actor,
        question: &str,
        tick: u64,
        lot: u64,
        min_qty: u64,
        expiry: u64,
        resolver: Address,
    ) -> Result<Address> {
        let p = self.signer(creator);
        let spec =
            MarketSpec { question: question.to_string(), tick, lot, min_qty, expiry, resolver };
        let market = market::create_market(p, self.deployment.factory, &spec).await?.market;
        self.approve_as(creator, market).await?;
        Ok(market)
    }

    /// `who` lets `market` pull its collateral.
    pub async fn approve_as(&self, who: Actor, market: Address) -> Result<()> {
        let p = self.signer(who);
        let c = ITestCollateral::new(self.deployment.collateral, p);
        let tx = c.approve(market, U256::MAX).send().await.map_err(CallFailed::on("approve"))?;
        confirm(p, "approve", *tx.tx_hash()).await?;
        Ok(())
    }

    /// Rests a maker ask (sells UP at `price`, i.e. buys DOWN).
    pub async fn ask(&self, market: Address, price: u64, qty: u64) -> Result<()> {
        self.ask_as(Actor::Maker, market, price, qty).await
    }

    /// Rests an ask from `who` (which must have approved `market`).
    pub async fn ask_as(&self, who: Actor, market: Address, price: u64, qty: u64) -> Result<()> {
        let order = UpOrder { is_bid: false, up_price: price, qty };
        market::place(self.signer(who), market, order).await?;
        Ok(())
    }

    /// Rests a maker bid (buys UP at `price`).
    pub async fn bid(&self, market: Address, price: u64, qty: u64) -> Result<()> {
        market::place(&self.maker, market, UpOrder { is_bid: true, up_price: price, qty }).await?;
        Ok(())
    }

    /// `who` buys UP immediate-or-cancel up to `limit` (which must have approved `market`).
    pub async fn buy_up_as(&self, who: Actor, market: Address, limit: u64, qty: u64) -> Result<()> {
        let p = self.signer(who);
        let m = IBinaryMarket::new(market, p);
        let tx = m
            .buyUp(U256::from(limit), U256::from(qty))
            .send()
            .await
            .map_err(CallFailed::on("buyUp"))?;
        confirm(p, "buyUp", *tx.tx_hash()).await?;
        Ok(())
    }

    /// Finalizes a market (maker is the resolver; only after expiry).
    pub async fn resolve(&self, market: Address, up_wins: bool) -> Result<()> {
        self.resolve_as(Actor::Maker, market, up_wins).await
    }

    /// Finalizes a market as its resolver `who` (only after expiry).
    pub async fn resolve_as(&self, who: Actor, market: Address, up_wins: bool) -> Result<()> {
        let outcome = if up_wins { Side::Up } else { Side::Down };
        market::resolve(self.signer(who), self.addr(who), market, outcome).await?;
        Ok(())
    }

    /// `who` closes the gate's position in a final market (anyone may call the gate's
    /// `redeem`); returns whether a position was closed.
    pub async fn redeem_gate_as(&self, who: Actor, market: Address) -> Result<bool> {
        let p = self.signer(who);
        let g = IRiskGate::new(self.deployment.gate, p);
        if g.redeem(market).call().await.is_err() {
            return Ok(false); // nothing held there, or not final
        }
        let tx = g.redeem(market).gas(500_000).send().await.map_err(CallFailed::on("redeem"))?;
        confirm(p, "redeem", *tx.tx_hash()).await?;
        Ok(true)
    }

    /// The key of attestor `i` ([`ATTESTOR_ACCOUNTS`]).
    pub fn attestor_key(&self, i: usize) -> Result<&str> {
        Ok(self.anvil.dev_key(ATTESTOR_ACCOUNTS[i % ATTESTOR_ACCOUNTS.len()])?)
    }

    /// Starts `keeper attest` (this executable) for `gate` on this world's anvil, signing with
    /// `key` (passed in its environment, never a flag), on a free loopback port, with the model
    /// flags `model` (e.g. `["--model", "builtin"]`); returns once it announced its address.
    pub async fn start_attestor(
        &self,
        root: &Path,
        gate: Address,
        key: &str,
        model: &[&str],
    ) -> Result<AttestorChild> {
        use tokio::io::AsyncBufReadExt;
        let failed = |what: &str| {
            let what = what.to_string();
            move |source| WorldError::Attestor { what, source: Some(source) }
        };
        let exe = std::env::current_exe().map_err(failed("find the keeper binary"))?;
        let mut cmd = tokio::process::Command::new(exe);
        for (k, _) in std::env::vars() {
            if k.starts_with("KEEPER_") || k.starts_with("ATTESTOR_") {
                cmd.env_remove(k);
            }
        }
        cmd.arg("--root")
            .arg(root)
            .args(["attest", "--rpc-url", self.anvil.url.as_str(), "--gate", &gate.to_string()])
            .args(["--listen", "127.0.0.1:0"])
            .args(model)
            .env("ATTESTOR_PRIVATE_KEY", key)
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(failed("start keeper attest"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| WorldError::Attestor { what: "no stdout".into(), source: None })?;
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        // A bundled model's server starts first, which takes a while on a loaded machine.
        let announced = tokio::time::timeout(Duration::from_secs(180), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.strip_prefix("keeper attest: ") {
                    return Some(url.trim_end_matches('/').to_string());
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .ok_or_else(|| WorldError::Attestor {
            what: "keeper attest exited or did not announce its address within 180 s".into(),
            source: None,
        })?;
        // The rest of its output is drained so the pipe never fills.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(AttestorChild { _child: child, url: announced })
    }

    /// A keeper pointed at this world's gate, writing its record to `results` (none: no
    /// record), to be built: it signs with the keeper's dev key and counts a decision as
    /// confirmed once mined (a local chain, 0 confirmations).
    pub fn keeper(&self, results: Option<std::path::PathBuf>) -> crate::engine::EngineBuilder {
        let d = &self.deployment;
        let gate = crate::engine::GateRef {
            chain_id: d.chain_id,
            gate: d.gate,
            factory: d.factory,
            from_block: d.deploy_block,
        };
        // A cycle's answers go out together at its end, so which share a transaction (and so
        // which block each decision lands in) never depends on how fast the machine answers; a
        // test about the window sets its own.
        let b = crate::engine::Engine::builder(self.keeper_rpc.clone(), gate)
            .keeper(self.keeper_addr)
            .results(results)
            .batch_window(std::time::Duration::MAX);
        match self
            .anvil
            .dev_key(Actor::Keeper.index())
            .ok()
            .and_then(|key| chain::dev_signer(key).ok())
        {
            Some(signer) => b.signer(signer),
            None => b,
        }
    }
}

#[cfg(test)]
mod question_tests {
    #[test]
    fn questions_are_dated_and_distinct() {
        // 1_796_083_200 = 2026-12-01 00:00 UTC (20,788 days after 1970-01-01).
        assert_eq!(
            super::question_for(0, 1_796_083_200),
            "Will ETH close above 3,000 USD at 2026-12-01 00:00 UTC?"
        );
        // 0 = 1970-01-01; 951_782_400 = 2000-02-29 (a leap day).
        assert_eq!(crate::domain::format::utc_date(0).unwrap(), "1970-01-01 00:00");
        assert_eq!(
            crate::domain::format::utc_date(951_782_400 + 3_660).unwrap(),
            "2000-02-29 01:01"
        );
        assert!(super::question_for(1, u64::MAX).ends_with("at unix time 18446744073709551615?"));
        let all: std::collections::HashSet<String> =
            (0..60).map(|n| super::question_for(n, 1_796_083_200)).collect();
        assert_eq!(all.len(), 60);
        assert!(all.iter().all(|q| q.len() <= crate::kit::bindings::MAX_QUESTION_BYTES));
    }
}
