//! `keeper deploy`'s arguments: the endpoint, the key, the trusted lists and the gate's bounds.

use super::*;

#[derive(Debug, clap::Args)]
#[command(mut_arg("factory", |a| {
    a.help("Existing market factory; without it a MarketFactory is deployed")
}))]
pub struct DeployArgs {
    #[command(flatten)]
    pub chain: ChainArgs,
    #[command(flatten)]
    pub key: KeyArgs,
    /// Existing collateral token; without it a TestCollateral is deployed (local chains).
    #[arg(long, env = "KEEPER_COLLATERAL")]
    pub collateral: Option<Address>,
    #[command(flatten)]
    pub factory: FactoryArgs,
    /// Keeper address allowed to submit verdicts (default: the deployer). It may be neither a
    /// trusted resolver nor a trusted creator.
    #[arg(long)]
    pub keeper: Option<Address>,
    /// A market resolver the gate trusts (repeatable, 1 to 8; required, no default). Only
    /// markets naming one of these as `resolver()` are ever traded (rule 12). Sorted before
    /// deploying (a duplicate is refused); fixed forever once deployed.
    #[arg(long = "trusted-resolver", value_name = "ADDR")]
    pub trusted_resolvers: Vec<Address>,
    /// A market creator the gate trusts (repeatable, 1 to 8; required, no default). Only
    /// markets the factory says one of these created (`creatorOf`) are ever traded (rule 19).
    /// Sorted before deploying (a duplicate is refused); fixed forever once deployed.
    #[arg(long = "trusted-creator", value_name = "ADDR")]
    pub trusted_creators: Vec<Address>,
    #[command(flatten)]
    pub bounds: BoundsArgs,
    /// An attestor of an attested gate (repeatable, 1 to 8): only answers that
    /// --attestor-threshold of them signed count, for the gate's whole life. None: a relayed
    /// gate, whose keeper submits answers itself. Sorted before deploying; never the keeper.
    #[arg(long = "attestor-signer", value_name = "ADDR")]
    pub attestor_signers: Vec<Address>,
    /// Agreeing attestors a verdict needs, 1 to their number (default: a majority).
    #[arg(long)]
    pub attestor_threshold: Option<u8>,
    /// Blocks an attested read may be behind the block that includes it (default 5).
    #[arg(long)]
    pub max_read_age: Option<u32>,
    /// The most an attested gate pays over the attested price of the side bought, in basis
    /// points of it (default 200).
    #[arg(long)]
    pub max_slippage_bps: Option<u16>,
}

impl DeployArgs {
    /// The trusted resolvers given, as the constructor wants them: strictly ascending (sorted;
    /// a duplicate is refused, as the forge deploy script does), 1 to 8, never the zero
    /// address. None given is an error: the deployer is not trusted by default.
    pub fn trusted_resolvers(&self) -> Result<Vec<Address>> {
        trusted_resolver_list(&self.trusted_resolvers)
    }

    /// The trusted creators given, by the same rules as the resolvers.
    pub fn trusted_creators(&self) -> Result<Vec<Address>> {
        trusted_creator_list(&self.trusted_creators)
    }
}

/// The gate's bounds, fixed at deploy (prices in 1e6 units, sizes in collateral base units).
/// The defaults are the README's deploy table (and `script/Deploy.s.sol`'s `GATE_*` defaults).
#[derive(Debug, Clone, clap::Args)]
pub struct BoundsArgs {
    /// Lowest price paid per unit of the token bought (1e6 = 1.0).
    #[arg(long, default_value_t = 50_000)]
    pub min_price: u64,
    /// Highest price paid per unit of the token bought (< 1e6).
    #[arg(long, default_value_t = 950_000)]
    pub max_price: u64,
    /// Order quantity before lot snapping, in collateral base units of payout (100 tUSD).
    #[arg(long, default_value_t = 100_000_000)]
    pub max_size: u64,
    /// Seconds that must remain before a market's expiry (>= 120).
    #[arg(long, default_value_t = 300)]
    pub min_headroom: u32,
    /// Open positions allowed at once.
    #[arg(long, default_value_t = 3)]
    pub max_concurrent: u8,
    /// Collateral at risk across open positions, in base units (250 tUSD).
    #[arg(long, default_value_t = 250_000_000)]
    pub max_notional: u64,
    /// Longest `expiry − now` a traded market may have, in seconds (>= --min-headroom; 7 days).
    #[arg(long, default_value_t = 604_800)]
    pub max_horizon: u32,
    /// Collateral the gate's balance may fall below its high-water mark, in base units: the
    /// bound on the total loss (500 tUSD).
    #[arg(long, default_value_t = 500_000_000)]
    pub max_drawdown: u64,
    /// Seconds after expiry before an unresolved position may be written off (>= 3600; 1 day).
    #[arg(long, default_value_t = 86_400)]
    pub write_off_grace: u32,
    /// Smallest fill kept, in basis points of the order's quantity (1..=10000; 25 %).
    #[arg(long, default_value_t = 2_500)]
    pub min_fill_bps: u16,
}

impl DeployArgs {
    /// Checked in this order, before anything is read or sent: the endpoint, then the trusted
    /// resolvers, then the trusted creators.
    pub fn to_config(&self) -> Result<DeployConfig> {
        let chain = self.chain.to_config()?;
        let trusted_resolvers = self.trusted_resolvers()?;
        let trusted_creators = self.trusted_creators()?;
        Ok(DeployConfig {
            chain,
            keystore: self.key.keystore.clone(),
            collateral: self.collateral,
            factory: self.factory.factory,
            keeper: self.keeper,
            trusted_resolvers,
            trusted_creators,
            bounds: self.bounds.to_bounds(),
            attestors: attestor_setting(
                &self.attestor_signers,
                self.attestor_threshold,
                self.max_read_age,
                self.max_slippage_bps,
            )?,
        })
    }
}

impl BoundsArgs {
    pub fn to_bounds(&self) -> GateBounds {
        GateBounds {
            min_price: self.min_price,
            max_price: self.max_price,
            max_size: self.max_size,
            min_headroom: self.min_headroom,
            max_concurrent: self.max_concurrent,
            max_notional: self.max_notional,
            max_horizon: self.max_horizon,
            max_drawdown: self.max_drawdown,
            write_off_grace: self.write_off_grace,
            min_fill_bps: self.min_fill_bps,
        }
    }
}

/// `keeper fund`: the endpoint, the funder's key, the gate and the amount.
#[derive(Debug, clap::Args)]
#[command(mut_arg("gate", |a| {
    a.help("The gate to fund (default: the chain's gate in deployments/<chain-id>.json)")
}))]
pub struct FundArgs {
    #[command(flatten)]
    pub chain: ChainArgs,
    #[command(flatten)]
    pub key: KeyArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    /// How much collateral to deposit, in whole tokens as a decimal (500, 12.5), converted
    /// with the token's decimals; more decimals than the token has are refused, not rounded.
    #[arg(long, value_parser = parse_amount)]
    pub amount: Amount,
}

fn parse_amount(text: &str) -> std::result::Result<Amount, String> {
    Amount::parse(text).map_err(|e| e.to_string())
}

impl FundArgs {
    pub fn to_config(&self) -> Result<FundConfig> {
        Ok(FundConfig {
            chain: self.chain.to_config()?,
            keystore: self.key.keystore.clone(),
            gate: self.gate.gate,
            amount: self.amount.clone(),
        })
    }
}
