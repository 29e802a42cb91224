//! `keeper market`'s subcommands: create, quote and resolve markets on a local or test chain.

use super::*;

/// [`Side`] as `--side` and `--outcome` parse it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SideArg {
    Up,
    Down,
}

impl From<SideArg> for Side {
    fn from(s: SideArg) -> Self {
        match s {
            SideArg::Up => Side::Up,
            SideArg::Down => Side::Down,
        }
    }
}

/// `keeper market …`: a venue's maker and resolver chores, for local and test chains.
#[derive(Debug, Subcommand)]
pub enum MarketCommand {
    /// Create a market on the factory (resolved by the key's address unless --resolver); prints
    /// {"market", "expiry", ...} as JSON on stdout.
    Create(MarketCreateArgs),
    /// Rest a bid and/or an ask on a market as the key's address, minting test collateral when
    /// the token is an open-faucet TestCollateral and the balance is short.
    Quote(MarketQuoteArgs),
    /// Resolve a market after its expiry (only its resolver's key can).
    Resolve(MarketResolveArgs),
}

/// Where the venue is: the chain, the key, and the factory (--factory, else the --gate's
/// factory, else deployments/<chain-id>.json).
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("gate", |a| a.help("A RiskGate whose market factory to use")),
    mut_arg("factory", |a| {
        a.help("The market factory (overrides --gate and the deployments file)")
    }),
)]
pub struct VenueArgs {
    #[command(flatten)]
    pub chain: ChainArgs,
    #[command(flatten)]
    pub key: KeyArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub factory: FactoryArgs,
}

#[derive(Debug, clap::Args)]
pub struct MarketCreateArgs {
    #[command(flatten)]
    pub venue: VenueArgs,
    /// The event the market asks about, 1 to 280 bytes ("Will ETH close above 3,000 USD on
    /// 2027-01-31?"). It is published on chain and shown to the model verbatim.
    #[arg(long)]
    pub question: String,
    /// Seconds of chain time from the current head to the market's expiry.
    #[arg(long)]
    pub expiry_in: u64,
    /// Price grid, in 1e6 units (`tick × lot` must be a multiple of 1e6; 1000 = 0.001).
    #[arg(long, default_value_t = crate::commands::market::DEFAULT_TICK)]
    pub tick: u64,
    /// Quantity grid, in collateral base units.
    #[arg(long, default_value_t = crate::commands::market::DEFAULT_LOT)]
    pub lot: u64,
    /// Smallest order quantity, in collateral base units (the default lets a gate with
    /// `keeper deploy`'s default bounds buy: its rule 20 needs at least 390,625).
    #[arg(long, default_value_t = crate::commands::market::DEFAULT_MIN_QTY)]
    pub min_qty: u64,
    /// The market's resolver (default: the key's address). A gate trades only markets whose
    /// resolver it trusts.
    #[arg(long)]
    pub resolver: Option<Address>,
}

#[derive(Debug, clap::Args)]
pub struct MarketQuoteArgs {
    #[command(flatten)]
    pub venue: VenueArgs,
    /// The market to quote on.
    #[arg(long)]
    pub market: Address,
    /// Which token --bid and --ask price (1e6 units): `up`, or `down` (a DOWN bid at p rests as
    /// an UP ask at 1e6 − p, and the reverse).
    #[arg(long, value_enum, default_value_t = SideArg::Up)]
    pub side: SideArg,
    /// Price of the resting bid for the side's token.
    #[arg(long)]
    pub bid: Option<u64>,
    /// Price of the resting ask for the side's token.
    #[arg(long)]
    pub ask: Option<u64>,
    /// Quantity of each order, in collateral base units of payout (a multiple of the lot).
    #[arg(long)]
    pub qty: u64,
}

#[derive(Debug, clap::Args)]
pub struct MarketResolveArgs {
    #[command(flatten)]
    pub venue: VenueArgs,
    /// The market to resolve.
    #[arg(long)]
    pub market: Address,
    /// The winning side.
    #[arg(long, value_enum)]
    pub outcome: SideArg,
}

impl VenueArgs {
    pub fn to_config(&self) -> Result<VenueConfig> {
        Ok(VenueConfig {
            chain: self.chain.to_config()?,
            keystore: self.key.keystore.clone(),
            gate: self.gate.gate,
            factory: self.factory.factory,
        })
    }
}

impl MarketCommand {
    /// A market error, not only a config one: a quote's orders are checked here, before the
    /// endpoint, so a malformed quote is named first and never reaches the chain.
    pub fn to_config(&self) -> market::Result<MarketConfig> {
        Ok(match self {
            MarketCommand::Create(a) => MarketConfig::Create(CreateConfig {
                question: market::question(&a.question)?,
                venue: a.venue.to_config()?,
                expiry_in: a.expiry_in,
                tick: a.tick,
                lot: a.lot,
                min_qty: a.min_qty,
                resolver: a.resolver,
            }),
            MarketCommand::Quote(a) => {
                let orders = market::up_orders(a.side.into(), a.bid, a.ask, a.qty)?;
                MarketConfig::Quote(QuoteConfig {
                    venue: a.venue.to_config()?,
                    market: a.market,
                    orders,
                })
            }
            MarketCommand::Resolve(a) => MarketConfig::Resolve(ResolveConfig {
                venue: a.venue.to_config()?,
                market: a.market,
                outcome: a.outcome.into(),
            }),
        })
    }
}
