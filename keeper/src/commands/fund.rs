//! `keeper fund`: deposits collateral into a gate from the key's address (approve, then the
//! gate's `deposit`), so funding a gate needs no `cast` (whose 1.7.1 sends calls carrying both
//! `input` and `data`, which some nodes refuse).
//!
//! The amount is given in whole tokens as a decimal (`500`, `12.5`) and converted with the
//! token's own `decimals()`; more fractional digits than the token has is refused, never
//! rounded. On an open-faucet TestCollateral a short balance is minted first (a local or test
//! chain); on any other token a short balance is refused with what the key holds. `deposit`
//! raises the gate's high-water mark `H` by what arrived (docs/lifetime-bound.md): funding
//! never refills a used drawdown, and anyone may fund a gate.

use crate::{
    chain::IErc20View,
    commands::{deploy, market},
    domain::config::ChainConfig,
    domain::format::token_symbol,
    kit::bindings::IRiskGate,
};
use alloy::{
    primitives::{Address, TxHash, U256},
    providers::{DynProvider, Provider},
    sol_types::SolEvent,
};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The most decimals a token may declare for `--amount` to be converted (10^77 < 2^256).
const MAX_DECIMALS: u8 = 77;

#[derive(Debug, thiserror::Error)]
pub enum FundError {
    #[error(transparent)]
    Market(#[from] market::MarketError),
    #[error(transparent)]
    Deploy(#[from] deploy::DeployError),
    #[error("--amount {0:?} is not an amount: give whole tokens as a decimal, e.g. 500 or 12.5")]
    BadAmount(String),
    #[error("--amount must be more than 0")]
    ZeroAmount,
    #[error("--amount {amount} has {given} decimals; {symbol} has {decimals}")]
    TooPrecise { amount: String, given: usize, symbol: String, decimals: u8 },
    #[error("--amount {amount} is too large for a uint256 at {decimals} decimals")]
    TooLarge { amount: String, decimals: u8 },
    #[error("no gate: pass --gate, or deploy first so deployments/{chain_id}.json names one")]
    NoGate { chain_id: u64 },
    #[error("{gate} has no code on chain {chain_id}: not a deployed gate")]
    NotAGate { gate: Address, chain_id: u64 },
    #[error("cannot read {what} of collateral {token}")]
    Token {
        what: &'static str,
        token: Address,
        #[source]
        source: Box<alloy::contract::Error>,
    },
    #[error("collateral {token} declares {decimals} decimals, more than {MAX_DECIMALS}")]
    Decimals { token: Address, decimals: u8 },
    #[error("reading the gate's code failed")]
    Rpc(#[source] Box<alloy::transports::TransportError>),
}

impl crate::domain::exit::Classify for FundError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            Self::Market(e) => e.fault(),
            Self::Deploy(e) => e.fault(),
            // --amount or --gate names what cannot be funded.
            Self::BadAmount(_)
            | Self::ZeroAmount
            | Self::TooPrecise { .. }
            | Self::TooLarge { .. }
            | Self::NoGate { .. }
            | Self::NotAGate { .. } => Input,
            Self::Token { .. } | Self::Decimals { .. } | Self::Rpc(_) => Runtime,
        }
    }
}

pub type Result<T> = std::result::Result<T, FundError>;

/// An amount of whole tokens as typed: digits with at most one `.`, checked before any
/// endpoint is contacted; converted to base units once the token's decimals are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amount {
    whole: String,
    fraction: String,
}

impl Amount {
    /// Parses `text` (`500`, `12.5`, `0.000001`); refuses signs, exponents, spaces, empty
    /// parts and zero.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = || FundError::BadAmount(text.to_string());
        let (whole, fraction) = match text.split_once('.') {
            Some((w, f)) => (w, f),
            None => (text, ""),
        };
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !digits(whole) || !digits(fraction) {
            return Err(bad());
        }
        if text.ends_with('.') {
            return Err(bad());
        }
        if whole.bytes().chain(fraction.bytes()).all(|b| b == b'0') {
            return Err(FundError::ZeroAmount);
        }
        Ok(Self { whole: whole.to_string(), fraction: fraction.to_string() })
    }

    /// In base units of a token with `decimals` decimals called `symbol` (for the message).
    pub fn base_units(&self, decimals: u8, symbol: &str) -> Result<U256> {
        let shown = self.to_string();
        let fraction = self.fraction.trim_end_matches('0');
        if fraction.len() > usize::from(decimals) {
            return Err(FundError::TooPrecise {
                amount: shown,
                given: fraction.len(),
                symbol: symbol.to_string(),
                decimals,
            });
        }
        let padded = format!("{}{:0<width$}", self.whole, fraction, width = usize::from(decimals));
        U256::from_str_radix(&padded, 10)
            .map_err(|_| FundError::TooLarge { amount: shown, decimals })
    }
}

impl std::fmt::Display for Amount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.fraction.is_empty() {
            write!(f, "{}", self.whole)
        } else {
            write!(f, "{}.{}", self.whole, self.fraction)
        }
    }
}

/// `keeper fund`, checked.
#[derive(Debug, Clone)]
pub struct FundConfig {
    pub chain: ChainConfig,
    pub keystore: Option<PathBuf>,
    /// None: the chain's default gate in deployments/<chain-id>.json.
    pub gate: Option<Address>,
    pub amount: Amount,
}

/// What `keeper fund` did, printed as JSON on stdout.
#[derive(Debug, Clone, Serialize)]
pub struct Funded {
    pub gate: Address,
    pub funder: Address,
    pub collateral: Address,
    pub symbol: String,
    /// As typed, in whole tokens.
    pub amount: String,
    /// In the token's base units, as a decimal string.
    pub amount_base_units: String,
    /// Test collateral minted first to cover a short balance (0 when none was).
    pub minted: String,
    /// An `approve` was sent (the allowance was short).
    pub approved: bool,
    /// The gate's high-water mark after the deposit, as `Deposited` published it.
    pub high_water_mark: String,
    pub block: u64,
    pub tx: TxHash,
}

/// `keeper fund`.
pub async fn run(cfg: &FundConfig, root: &Path) -> Result<Funded> {
    let (p, me, chain_id) = market::connect_signing(&cfg.chain, cfg.keystore.as_deref()).await?;
    let gate = match cfg.gate {
        Some(g) => g,
        None => match deploy::read_saved(root, chain_id)? {
            Some(saved) => saved.deployment.gate,
            None => return Err(FundError::NoGate { chain_id }),
        },
    };
    let code = p.get_code_at(gate).await.map_err(|e| FundError::Rpc(Box::new(e)))?;
    if code.is_empty() {
        return Err(FundError::NotAGate { gate, chain_id });
    }
    let g = IRiskGate::new(gate, &p);
    let decode = market::contract_err::<IRiskGate::IRiskGateErrors>;
    let token = g.collateral().call().await.map_err(decode("collateral"))?;
    let (decimals, symbol) = describe(&p, token).await?;
    let amount = cfg.amount.base_units(decimals, &symbol)?;
    let funding = market::hold_and_approve(&p, me, token, gate, amount).await?;
    const WHAT: &str = "deposit";
    let pending = g.deposit(amount).send().await.map_err(decode(WHAT))?;
    let receipt = market::mined(&p, WHAT, *pending.tx_hash()).await?;
    let tx = receipt.transaction_hash;
    let h = receipt
        .inner
        .logs()
        .iter()
        .find_map(|l| IRiskGate::Deposited::decode_log(&l.inner).ok())
        .map(|ev| ev.data.highWaterMark)
        .ok_or(market::MarketError::NoEvent { what: WHAT, tx, event: "Deposited" })?;
    tracing::info!(%gate, amount = %cfg.amount, %symbol, high_water_mark = %h, "funded the gate");
    Ok(Funded {
        gate,
        funder: me,
        collateral: token,
        symbol,
        amount: cfg.amount.to_string(),
        amount_base_units: amount.to_string(),
        minted: funding.minted.to_string(),
        approved: funding.approved,
        high_water_mark: h.to_string(),
        block: receipt.block_number.unwrap_or_default(),
        tx,
    })
}

/// The token's decimals and its symbol as the pages may show it.
async fn describe(p: &DynProvider, token: Address) -> Result<(u8, String)> {
    let view = IErc20View::new(token, p);
    let decimals = view.decimals().call().await.map_err(|e| FundError::Token {
        what: "decimals()",
        token,
        source: Box::new(e),
    })?;
    if decimals > MAX_DECIMALS {
        return Err(FundError::Decimals { token, decimals });
    }
    let symbol = view.symbol().call().await.ok();
    Ok((decimals, token_symbol(symbol.as_deref())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_convert_exactly_or_are_refused() {
        let units = |t: &str, d: u8| Amount::parse(t).and_then(|a| a.base_units(d, "tUSD"));
        // 500 tokens at 6 decimals: 500 x 10^6.
        assert_eq!(units("500", 6).unwrap(), U256::from(500_000_000u64));
        // 12.5 x 10^6 = 12,500,000; 0.000001 x 10^6 = 1 (the smallest unit).
        assert_eq!(units("12.5", 6).unwrap(), U256::from(12_500_000u64));
        assert_eq!(units("0.000001", 6).unwrap(), U256::from(1u64));
        // Trailing zeros past the token's decimals are exact, so accepted.
        assert_eq!(units("1.0000000", 6).unwrap(), U256::from(1_000_000u64));
        // One digit more than the token has would be rounded: refused, naming both.
        let e = units("0.0000001", 6).unwrap_err().to_string();
        assert_eq!(e, "--amount 0.0000001 has 7 decimals; tUSD has 6");
        for bad in ["", ".5", "5.", "-1", "1e6", "1 000", "0x10", "1.2.3", "+3", "１"] {
            assert!(
                matches!(Amount::parse(bad), Err(FundError::BadAmount(_))),
                "{bad:?} must be refused"
            );
        }
        assert!(matches!(Amount::parse("0.000"), Err(FundError::ZeroAmount)));
        // 2^256 is about 1.16 x 10^77: 10^78 tokens at 0 decimals do not fit.
        let huge = format!("1{}", "0".repeat(78));
        assert!(matches!(units(&huge, 0), Err(FundError::TooLarge { .. })));
    }
}
