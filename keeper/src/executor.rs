//! Executor: turns a model answer and its quote into a signed `submitVerdict` transaction, and
//! keeps every transaction it signs exactly-once:
//! - it signs locally, with a nonce it allocates, so the transaction's hash is known (and
//!   journalled) before anything is sent;
//! - a stuck transaction is re-signed at the SAME nonce with bumped fees, never at a new one;
//! - nonce errors resynchronise from the chain, and a nonce gap left by a transaction the node
//!   dropped is filled, so one lost transaction never stalls the key.
//!
//! It sends the raw answer exactly as the model returned it; a revert is decoded into the gate's
//! error enum so a log names the error and its values.

use crate::{
    bindings::IRiskGate::{self, Quote},
    decision::DecisionId,
    journal::Attempt,
};
use alloy::{
    consensus::TxEnvelope,
    eips::{eip2718::Encodable2718, BlockId},
    network::{EthereumWallet, TransactionBuilder},
    primitives::{Address, Bytes, TxHash, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::{TransactionReceipt, TransactionRequest},
    signers::local::PrivateKeySigner,
    sol_types::{SolCall, SolEvent},
    transports::TransportError,
};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(transparent)]
    Reverted(#[from] CallFailed),
    #[error("the node refused transaction {tx} (nonce {nonce}): {refusal}")]
    Refused { tx: TxHash, nonce: u64, refusal: Refusal },
    #[error("no receipt for {tx} after {waited:?}")]
    NoReceipt { tx: TxHash, waited: Duration },
    #[error("RPC call failed")]
    Rpc(#[source] Box<TransportError>),
    #[error("signing a transaction failed")]
    Sign(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("no signer: a dry run sends nothing")]
    NoSigner,
}

pub type Result<T> = std::result::Result<T, ExecError>;

fn rpc(e: TransportError) -> ExecError {
    ExecError::Rpc(Box::new(e))
}

/// Why a node refused a raw transaction, from its error text (nodes agree on these phrases:
/// geth, reth, anvil, erigon).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The same transaction is already in its pool: as good as sent.
    #[error("already known")]
    AlreadyKnown,
    /// The nonce is used (by this transaction mined earlier, or by another).
    #[error("nonce too low")]
    NonceTooLow,
    /// A replacement at a used nonce without enough fee bump, or a fee under the base fee.
    #[error("underpriced")]
    Underpriced,
    /// Anything else (insufficient funds, gas limit, a filter): nothing is in flight.
    #[error("{0}")]
    Other(String),
}

impl Refusal {
    pub fn classify(text: &str) -> Self {
        let t = text.to_ascii_lowercase();
        if t.contains("already known")
            || t.contains("known transaction")
            || t.contains("already imported")
        {
            Self::AlreadyKnown
        } else if t.contains("nonce too low")
            || t.contains("nonce is too low")
            || t.contains("oldnonce")
        {
            Self::NonceTooLow
        } else if t.contains("underpriced")
            || t.contains("fee cap less than block base fee")
            || t.contains("max fee per gas less than block base fee")
        {
            Self::Underpriced
        } else {
            Self::Other(crate::chain::short(text))
        }
    }
}

/// Fees for one signing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fees {
    pub max_fee_per_gas: u128,
    pub max_priority_fee_per_gas: u128,
}

/// Headroom over the node's estimate of the next base fee: a cycle's transactions should not
/// stall on an ordinary base-fee rise (EIP-1559 lets it rise 12.5 % per block).
pub const BASE_FEE_HEADROOM: u128 = 2;

pub async fn current_fees(provider: &DynProvider) -> Result<Fees> {
    let est = provider.estimate_eip1559_fees().await.map_err(rpc)?;
    Ok(Fees {
        max_fee_per_gas: est.max_fee_per_gas.saturating_mul(BASE_FEE_HEADROOM),
        max_priority_fee_per_gas: est.max_priority_fee_per_gas,
    })
}

/// Nodes accept a replacement at a used nonce only if both fee fields rise by at least 10 %
/// (geth's default price bump); 12.5 % leaves room for rounding.
pub const BUMP_NUMERATOR: u128 = 9;
pub const BUMP_DENOMINATOR: u128 = 8;

/// Fees for a replacement of `old`: each field raised by 12.5 % (rounded up, plus one wei),
/// and never below what the chain asks for now (`now`), so a base-fee spike is met.
pub fn bumped(old: Fees, now: Fees) -> Fees {
    let bump =
        |x: u128| x.saturating_mul(BUMP_NUMERATOR).div_ceil(BUMP_DENOMINATOR).saturating_add(1);
    let priority = bump(old.max_priority_fee_per_gas).max(now.max_priority_fee_per_gas);
    let max_fee = bump(old.max_fee_per_gas).max(now.max_fee_per_gas).max(priority);
    Fees { max_fee_per_gas: max_fee, max_priority_fee_per_gas: priority }
}

impl From<Attempt> for Fees {
    fn from(a: Attempt) -> Self {
        Self {
            max_fee_per_gas: a.max_fee_per_gas,
            max_priority_fee_per_gas: a.max_priority_fee_per_gas,
        }
    }
}

/// Gas limit for one submitVerdict. A PASS against one level measures about 250k and the venue
/// matches a bounded number of resting orders per call, so 2M leaves room for a fill across many
/// levels; the answer adds calldata (EIP-7623 floor: 40 gas per non-zero byte) and hashing, never
/// a log of its own (the gate logs 64 bytes of it).
pub fn submit_gas_limit(raw: &str) -> u64 {
    2_000_000 + 48 * raw.len() as u64
}

/// Gas limits of the keeper's other calls (measured well under these on anvil).
pub const REDEEM_GAS: u64 = 500_000;
pub const WRITE_OFF_GAS: u64 = 300_000;
/// A plain transfer to self, used to fill a nonce gap.
pub const GAP_FILL_GAS: u64 = 21_000;

/// The calldata of one submitVerdict: the answer verbatim.
pub fn submit_calldata(market: Address, raw: &str, prompt_hash: B256, quote: &Quote) -> Bytes {
    IRiskGate::submitVerdictCall {
        market,
        raw: raw.to_string(),
        promptHash: prompt_hash,
        quote: quote.clone(),
    }
    .abi_encode()
    .into()
}

/// Describes a contract error, decoded into the gate's (or the venue's) error enum when it is
/// one: the one implementation, shared with gate-sim.
pub use riskgate_kit::revert::{describe, CallFailed};

/// A transaction signed and ready to broadcast.
#[derive(Debug, Clone)]
pub struct Signed {
    pub attempt: Attempt,
    pub nonce: u64,
    pub bytes: Bytes,
}

/// The keeper's key and nonce: the only place transactions are signed.
pub struct Sender {
    rpc: DynProvider,
    wallet: EthereumWallet,
    pub from: Address,
    chain_id: u64,
    next_nonce: u64,
}

impl Sender {
    /// A sender whose next nonce is the chain's pending count, or `floor` if higher (nonces a
    /// journalled submission may still use).
    pub async fn new(
        rpc: DynProvider,
        signer: PrivateKeySigner,
        chain_id: u64,
        floor: u64,
    ) -> Result<Self> {
        let from = signer.address();
        let mut s =
            Self { rpc, wallet: EthereumWallet::from(signer), from, chain_id, next_nonce: 0 };
        s.resync(floor).await?;
        Ok(s)
    }

    /// Re-reads the nonce from the chain: the next one is the pending count, or `floor` if
    /// higher.
    pub async fn resync(&mut self, floor: u64) -> Result<u64> {
        let pending = self.rpc.get_transaction_count(self.from).pending().await.map_err(rpc)?;
        self.next_nonce = pending.max(floor);
        Ok(self.next_nonce)
    }

    pub fn next_nonce(&self) -> u64 {
        self.next_nonce
    }

    /// Takes the next nonce (after the transaction using it was journalled).
    pub fn take_nonce(&mut self) -> u64 {
        let n = self.next_nonce;
        self.next_nonce += 1;
        n
    }

    /// Gives back the nonce just taken, when the node refused its transaction outright.
    pub fn give_back(&mut self, nonce: u64) {
        if self.next_nonce == nonce + 1 {
            self.next_nonce = nonce;
        }
    }

    /// Signs a call to `to` at `nonce`.
    pub async fn sign(
        &self,
        to: Address,
        input: Bytes,
        gas: u64,
        nonce: u64,
        fees: Fees,
        value: U256,
    ) -> Result<Signed> {
        let req = TransactionRequest::default()
            .with_from(self.from)
            .with_to(to)
            .with_input(input)
            .with_value(value)
            .with_nonce(nonce)
            .with_chain_id(self.chain_id)
            .with_gas_limit(gas)
            .with_max_fee_per_gas(fees.max_fee_per_gas)
            .with_max_priority_fee_per_gas(fees.max_priority_fee_per_gas);
        let env: TxEnvelope =
            req.build(&self.wallet).await.map_err(|e| ExecError::Sign(Box::new(e)))?;
        let attempt = Attempt {
            tx: *env.tx_hash(),
            max_fee_per_gas: fees.max_fee_per_gas,
            max_priority_fee_per_gas: fees.max_priority_fee_per_gas,
        };
        Ok(Signed { attempt, nonce, bytes: env.encoded_2718().into() })
    }

    /// Signs a replacement of `last` at the same `nonce`: both fees bumped past it (see
    /// [`bumped`]) and never below what the chain asks now. The one way any of the keeper's
    /// stuck transactions is re-signed.
    pub async fn sign_replacement(
        &self,
        to: Address,
        input: Bytes,
        gas: u64,
        nonce: u64,
        last: Attempt,
    ) -> Result<Signed> {
        let fees = bumped(last.into(), current_fees(&self.rpc).await?);
        self.sign(to, input, gas, nonce, fees, U256::ZERO).await
    }

    /// Broadcasts a signed transaction. `Ok` when the node holds it (accepted now, or already
    /// known); a transport failure is NOT a refusal (the node may hold it: the caller keeps it
    /// pending and follows it); a refusal is decoded.
    pub async fn broadcast(&self, signed: &Signed) -> std::result::Result<(), BroadcastError> {
        match self.rpc.send_raw_transaction(&signed.bytes).await {
            Ok(_) => Ok(()),
            Err(TransportError::ErrorResp(resp)) => match Refusal::classify(&resp.message) {
                Refusal::AlreadyKnown => Ok(()),
                r => Err(BroadcastError::Refused(r)),
            },
            Err(e) => Err(BroadcastError::Transport(Box::new(e))),
        }
    }

    pub fn rpc(&self) -> &DynProvider {
        &self.rpc
    }

    /// The account's nonce as of `block`: every nonce below it is used.
    pub async fn nonce_at(&self, block: u64) -> Result<u64> {
        self.rpc
            .get_transaction_count(self.from)
            .block_id(BlockId::number(block))
            .await
            .map_err(rpc)
    }

    /// The account's pending nonce (mined transactions plus the node's pool).
    pub async fn pending_nonce(&self) -> Result<u64> {
        self.rpc.get_transaction_count(self.from).pending().await.map_err(rpc)
    }

    /// Fills the nonce `nonce` with a zero-value transfer to self, so that later transactions
    /// held behind a gap can be mined.
    pub async fn fill_gap(&self, nonce: u64, fees: Fees) -> Result<TxHash> {
        let signed =
            self.sign(self.from, Bytes::new(), GAP_FILL_GAS, nonce, fees, U256::ZERO).await?;
        match self.broadcast(&signed).await {
            Ok(()) => Ok(signed.attempt.tx),
            Err(BroadcastError::Refused(r)) => {
                Err(ExecError::Refused { tx: signed.attempt.tx, nonce, refusal: r })
            }
            Err(BroadcastError::Transport(e)) => Err(ExecError::Rpc(e)),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BroadcastError {
    #[error("the node refused it: {0}")]
    Refused(Refusal),
    #[error("the node could not be reached; it may hold the transaction")]
    Transport(#[source] Box<TransportError>),
}

/// The gate's `Decision` for one submission, decoded from that transaction's own receipt: the
/// identity a decision keeps from the read to its row.
#[derive(Debug, Clone)]
pub struct MinedDecision {
    pub id: DecisionId,
    pub block: u64,
    pub block_hash: B256,
    pub event: IRiskGate::Decision,
}

/// What one transaction's receipt says.
#[derive(Debug, Clone)]
pub enum Mined {
    Decision(Box<MinedDecision>),
    /// Mined, reverted: nothing published.
    Reverted {
        tx: TxHash,
        block: u64,
    },
    /// Mined and successful but no `Decision` from `gate` in it (not a submission).
    Other {
        tx: TxHash,
        block: u64,
    },
}

impl Mined {
    pub fn block(&self) -> u64 {
        match self {
            Self::Decision(d) => d.block,
            Self::Reverted { block, .. } | Self::Other { block, .. } => *block,
        }
    }

    pub fn tx(&self) -> TxHash {
        match self {
            Self::Decision(d) => d.id.tx,
            Self::Reverted { tx, .. } | Self::Other { tx, .. } => *tx,
        }
    }
}

/// Decodes a receipt.
pub fn decode_receipt(gate: Address, r: &TransactionReceipt) -> Mined {
    let tx = r.transaction_hash;
    let block = r.block_number.unwrap_or_default();
    if !r.status() {
        return Mined::Reverted { tx, block };
    }
    r.inner
        .logs()
        .iter()
        .filter(|l| l.address() == gate)
        .find_map(|l| {
            let ev = IRiskGate::Decision::decode_log(&l.inner).ok()?;
            Some(Mined::Decision(Box::new(MinedDecision {
                id: DecisionId { tx, log_index: l.log_index.unwrap_or_default() },
                block,
                block_hash: r.block_hash.unwrap_or_default(),
                event: ev.data,
            })))
        })
        .unwrap_or(Mined::Other { tx, block })
}

/// The receipt of `tx`, if mined.
pub async fn receipt(provider: &DynProvider, tx: TxHash) -> Result<Option<TransactionReceipt>> {
    provider.get_transaction_receipt(tx).await.map_err(rpc)
}

/// Whether the node knows `tx` at all (mined or in its pool).
pub async fn known(provider: &DynProvider, tx: TxHash) -> Result<bool> {
    Ok(provider.get_transaction_by_hash(tx).await.map_err(rpc)?.is_some())
}

/// Simulates one submitVerdict from `from` (dry run): the reason it would publish, or the
/// decoded revert.
pub async fn simulate_submit(
    provider: &DynProvider,
    gate: Address,
    from: Address,
    market: Address,
    raw: &str,
    prompt_hash: B256,
    quote: &Quote,
) -> Result<u8> {
    IRiskGate::new(gate, provider)
        .submitVerdict(market, raw.to_string(), prompt_hash, quote.clone())
        .from(from)
        .call()
        .await
        .map_err(|e| CallFailed::new("submitVerdict", e).into())
}

/// Polls for a receipt (every 25 ms doubling to 500 ms, up to `timeout`).
pub async fn wait_receipt(
    provider: &DynProvider,
    tx: TxHash,
    timeout: Duration,
) -> Result<TransactionReceipt> {
    let start = std::time::Instant::now();
    let mut delay = Duration::from_millis(25);
    loop {
        match provider.get_transaction_receipt(tx).await {
            Ok(Some(r)) => return Ok(r),
            Ok(None) => {}
            Err(e) => {
                if start.elapsed() >= timeout {
                    return Err(rpc(e));
                }
            }
        }
        if start.elapsed() >= timeout {
            return Err(ExecError::NoReceipt { tx, waited: timeout });
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_millis(500));
    }
}

/// The calldata of `redeem(market)`, after simulating it so a revert is reported decoded
/// instead of burning a transaction.
pub async fn redeem_calldata(
    provider: &DynProvider,
    gate: Address,
    market: Address,
) -> Result<Bytes> {
    let c = IRiskGate::new(gate, provider);
    c.redeem(market).call().await.map_err(CallFailed::on("redeem"))?;
    Ok(IRiskGate::redeemCall { market }.abi_encode().into())
}

/// The calldata of `writeOff(market)`, simulated first like redeem: too early, already final
/// or already written off is reported decoded (`WriteOffTooEarly { .. }`).
pub async fn write_off_calldata(
    provider: &DynProvider,
    gate: Address,
    market: Address,
) -> Result<Bytes> {
    let c = IRiskGate::new(gate, provider);
    c.writeOff(market).call().await.map_err(CallFailed::on("writeOff"))?;
    Ok(IRiskGate::writeOffCall { market }.abi_encode().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replacement_raises_both_fees_by_at_least_ten_percent_and_meets_the_chain() {
        let old = Fees { max_fee_per_gas: 2_000_000_000, max_priority_fee_per_gas: 1_000_000_000 };
        let calm = Fees { max_fee_per_gas: 1, max_priority_fee_per_gas: 1 };
        let b = bumped(old, calm);
        // 2e9 * 9 / 8 = 2.25e9, + 1 wei; 1e9 * 9 / 8 = 1.125e9, + 1 wei.
        assert_eq!(b.max_fee_per_gas, 2_250_000_001);
        assert_eq!(b.max_priority_fee_per_gas, 1_125_000_001);
        assert!(b.max_fee_per_gas * 10 >= old.max_fee_per_gas * 11);
        // A base-fee spike: the chain now asks 40 gwei; the bump alone would not be mined.
        let spike = Fees { max_fee_per_gas: 40_000_000_000, max_priority_fee_per_gas: 1 };
        assert_eq!(bumped(old, spike).max_fee_per_gas, 40_000_000_000);
        // A zero-priority transaction still rises (0 * 9 / 8 + 1 = 1).
        let zero = Fees { max_fee_per_gas: 8, max_priority_fee_per_gas: 0 };
        assert_eq!(bumped(zero, calm), Fees { max_fee_per_gas: 10, max_priority_fee_per_gas: 1 });
    }

    #[test]
    fn refusals_are_classified_from_the_nodes_words() {
        assert_eq!(Refusal::classify("already known"), Refusal::AlreadyKnown);
        assert_eq!(
            Refusal::classify("nonce too low: next nonce 7, tx nonce 5"),
            Refusal::NonceTooLow
        );
        assert_eq!(Refusal::classify("replacement transaction underpriced"), Refusal::Underpriced);
        assert!(matches!(
            Refusal::classify("insufficient funds for gas * price + value"),
            Refusal::Other(_)
        ));
    }
}
