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
    chain::journal::Attempt,
    domain::decision::DecisionId,
    kit::bindings::IRiskGate::{self, Quote},
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
    #[error("{call} returned {} bytes, not one uint8 reason: {returned}", returned.len())]
    Undecodable { call: &'static str, returned: Bytes },
    #[error("signing a transaction failed")]
    Sign(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("no signer: a dry run sends nothing")]
    NoSigner,
    /// `eth_estimateGas` on the pending state says the call reverts: nothing was signed.
    #[error("{call} would revert (eth_estimateGas on the pending state): {revert}; nothing was signed or sent")]
    WouldRevert { call: &'static str, revert: String },
    /// The estimate is above the worst case the keeper allows for the call: nothing was signed.
    #[error("{call} needs {estimate} gas on the pending state, above the {cap} the worst case allows ({why}); nothing was signed or sent")]
    AboveCap { call: &'static str, estimate: u64, cap: u64, why: &'static str },
}

impl crate::domain::exit::Classify for ExecError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            // A dry run asked to send: the command's flags contradict it.
            Self::NoSigner => Input,
            Self::Reverted(_)
            | Self::Refused { .. }
            | Self::NoReceipt { .. }
            | Self::Rpc(_)
            | Self::Undecodable { .. }
            | Self::Sign(_)
            | Self::WouldRevert { .. }
            | Self::AboveCap { .. } => Runtime,
        }
    }
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

/// The most gas one `submitVerdict` can need before its answer's bytes: one IOC at the venue's
/// match cap in the worst book there is. Derivation: the venue matches at most
/// `MAX_MATCHES_PER_TAKE` = 64 resting orders per take; the dearest match is one that empties
/// a price level of its own and mints to a maker no earlier match touched (cold slots for the
/// maker's balance, the order, the level and its links), plus one cancelled remainder refunded
/// to yet another cold maker. Issue 14 measured 2.44M for 64 distinct makers at one level and
/// 3.26M across levels; `keeper/tests/gas.rs` builds that book (64 makers at distinct
/// addresses on 64 distinct levels, then real liquidity inside the limit): the keeper's mined
/// PASS used 2,670,487 gas after the refunds of the 64 deleted orders (`cargo test -p keeper
/// --test gas -- --nocapture` prints it, and the limit it was signed with), and its estimate, the
/// gas that must be AVAILABLE for the self-call (63/64 forwarding, refunds paid only at the
/// end), was above 3,176,000 (its limit was capped, so estimate × 1.25 + 30,000 > the cap).
/// The cap is the 3.26M plus about 23 % for the gate's paths around the take
/// (account settling, events), a cancelled remainder's refund and opcode repricing: 4,000,000.
/// Below every public chain's block gas limit (30M+).
pub const SUBMIT_GAS_WORST_IOC: u64 = 4_000_000;

/// Per byte of answer on top of [`SUBMIT_GAS_WORST_IOC`]: calldata at EIP-7623's floor (40
/// gas per non-zero byte), the copy and the keccak256 over it (the gate logs only 64 bytes of
/// it, never the whole answer).
pub const SUBMIT_GAS_PER_ANSWER_BYTE: u64 = 48;

/// The cap on one `submitVerdict`'s gas: the worst case of one IOC at the match cap plus the
/// answer's bytes. A submission is signed with less whenever its estimate allows
/// ([`gas_with_margin`]); this is the most it is ever signed with.
pub fn submit_gas_cap(raw: &str) -> u64 {
    SUBMIT_GAS_WORST_IOC + SUBMIT_GAS_PER_ANSWER_BYTE * raw.len() as u64
}

/// Per attested answer on top of [`SUBMIT_GAS_WORST_IOC`]: its signature recovered (ecrecover's
/// 3,000 and the EIP-712 hashing around it), 65 bytes of signature and the ABI words around it
/// and its answer in call data, its entry in the packed vote and the log bytes of it. Two
/// answers cost about 51,200 over the relayed PASS (282,426 against 231,250 in
/// `forge test --match-contract RiskGateAttestedGasTest -vv` and the relayed gas test): about
/// 25,600 each; this leaves room for the cold reads of a first decision.
pub const ATTESTED_GAS_PER_ANSWER: u64 = 30_000;

/// The cap on one `submitAttested`'s gas: the worst IOC plus each answer's fixed cost and bytes.
pub fn submit_attested_gas_cap(raws: &[String]) -> u64 {
    let bytes: u64 = raws.iter().map(|r| r.len() as u64).sum();
    SUBMIT_GAS_WORST_IOC
        + ATTESTED_GAS_PER_ANSWER * raws.len() as u64
        + SUBMIT_GAS_PER_ANSWER_BYTE * bytes
}

/// The margin over an `eth_estimateGas` figure, as a fraction (numerator over 4: +25 %) and a
/// fixed part. Why: the estimate is taken on the pending state, and the transaction runs on
/// the state it is mined on. The book may have changed in between (another order matched, a
/// level emptied by someone else, a cold slot warm no longer), and each extra match of a
/// distinct maker costs about 45,000 gas; the fixed 30,000 covers the first such difference on
/// any estimate, the 25 % a sweep that grew in proportion. Node estimators already account for
/// the 63/64 of gas a call forwards (they search for the least gas that succeeds), so the
/// margin is for state drift only. A change bigger than the margin runs out of gas and reverts
/// (a status-0 receipt, recorded off chain with its cause); a capped limit bounds what that
/// can ever cost.
pub const GAS_MARGIN_QUARTERS: u64 = 1;
pub const GAS_MARGIN_FIXED: u64 = 30_000;

/// `estimate` plus the margin ([`GAS_MARGIN_QUARTERS`], [`GAS_MARGIN_FIXED`]), capped at `cap`.
/// An estimate above the cap is refused (the cap is the worst case: a higher figure means the
/// call is not what the keeper thinks it is), and nothing is signed.
pub fn gas_with_margin(call: &'static str, estimate: u64, cap: u64) -> Result<u64> {
    if estimate > cap {
        return Err(ExecError::AboveCap {
            call,
            estimate,
            cap,
            why: "one IOC at the venue's match cap plus the answer's bytes",
        });
    }
    let with = estimate
        .saturating_add(estimate.saturating_mul(GAS_MARGIN_QUARTERS) / 4)
        .saturating_add(GAS_MARGIN_FIXED);
    Ok(with.min(cap))
}

/// Caps of the keeper's other calls. `redeem` pays out one position (the market's redeem, a
/// transfer, the account settled twice); `writeOff` of a final market tries the market's redeem
/// once and undoes it. Measured under 200,000 each on anvil; these are the worst cases the
/// keeper allows them, estimates plus margin are what they are signed with.
pub const REDEEM_GAS_CAP: u64 = 500_000;
pub const WRITE_OFF_GAS_CAP: u64 = 500_000;
/// A plain transfer to self, used to fill a nonce gap.
pub const GAP_FILL_GAS: u64 = 21_000;

/// The calldata of one submitVerdict: the answer verbatim.
pub fn submit_calldata(
    market: Address,
    raw: &str,
    prompt_hash: B256,
    read_block: u64,
    quote: &Quote,
) -> Bytes {
    IRiskGate::submitVerdictCall {
        market,
        raw: raw.to_string(),
        promptHash: prompt_hash,
        readBlock: read_block,
        quote: quote.clone(),
    }
    .abi_encode()
    .into()
}

/// One element of a `submitVerdicts` batch: `submitVerdict`'s arguments.
pub fn batch_element(
    market: Address,
    raw: &str,
    prompt_hash: B256,
    read_block: u64,
    quote: &Quote,
) -> IRiskGate::Submission {
    IRiskGate::Submission {
        market,
        raw: raw.to_string(),
        promptHash: prompt_hash,
        readBlock: read_block,
        quote: quote.clone(),
    }
}

/// The calldata of one `submitVerdicts`: the elements in the order the gate decides them.
pub fn submit_batch_calldata(batch: Vec<IRiskGate::Submission>) -> Bytes {
    IRiskGate::submitVerdictsCall { batch }.abi_encode().into()
}

/// The cap on a `submitVerdicts`' gas: each element's own cap ([`submit_gas_cap`]), summed. A
/// batch is signed with its estimate plus the margin whenever that is lower, which it is by
/// far unless every element buys against the worst book.
pub fn submit_batch_gas_cap<'a>(raws: impl IntoIterator<Item = &'a str>) -> u64 {
    raws.into_iter().map(submit_gas_cap).sum()
}

/// The gas limit of the newest block: what a batch is sized against.
pub async fn block_gas_limit(provider: &DynProvider) -> Result<u64> {
    let block = provider
        .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
        .await
        .map_err(rpc)?
        .ok_or_else(|| {
            ExecError::Rpc(Box::new(TransportError::local_usage_str(
                "the node has no latest block",
            )))
        })?;
    Ok(block.header.gas_limit)
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
        gas_used: u64,
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

/// Decodes a receipt for the decision at `position` of its transaction (0 for a single
/// submission; a `submitVerdicts` batch publishes one `Decision` per element, in order), which
/// must be about `market`.
pub fn decode_receipt(
    gate: Address,
    position: usize,
    market: Address,
    r: &TransactionReceipt,
) -> Mined {
    let tx = r.transaction_hash;
    let block = r.block_number.unwrap_or_default();
    if !r.status() {
        return Mined::Reverted { tx, block, gas_used: r.gas_used };
    }
    r.inner
        .logs()
        .iter()
        .filter(|l| l.address() == gate)
        .filter_map(|l| Some((l, IRiskGate::Decision::decode_log(&l.inner).ok()?)))
        .nth(position)
        .filter(|(_, ev)| ev.data.market == market)
        .map(|(l, ev)| {
            Mined::Decision(Box::new(MinedDecision {
                id: DecisionId { tx, log_index: l.log_index.unwrap_or_default() },
                block,
                block_hash: r.block_hash.unwrap_or_default(),
                event: ev.data,
            }))
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

/// `eth_estimateGas` of a call from `from` to `to` on the PENDING state: the gas it needs, or
/// [`ExecError::WouldRevert`] with the revert decoded into the contracts' errors (`GatePaused`,
/// `WriteOffTooEarly { .. }`), so a call the keeper can see will fail is never signed. A
/// transport failure is [`ExecError::Rpc`].
pub async fn estimate(
    provider: &DynProvider,
    call: &'static str,
    from: Address,
    to: Address,
    input: &Bytes,
) -> Result<u64> {
    let req = TransactionRequest::default().with_from(from).with_to(to).with_input(input.clone());
    match provider.estimate_gas(req).pending().await {
        Ok(g) => Ok(g),
        Err(TransportError::ErrorResp(resp)) => {
            let revert = match resp.as_revert_data() {
                Some(data) => riskgate_kit::revert::describe_data(&data),
                None => crate::chain::short(&resp.message),
            };
            Err(ExecError::WouldRevert { call, revert })
        }
        Err(e) => Err(rpc(e)),
    }
}

/// The gas limit a call is signed with: its pending-state estimate plus the margin, capped at
/// `cap` ([`estimate`], [`gas_with_margin`]).
pub async fn gas_for(
    provider: &DynProvider,
    call: &'static str,
    from: Address,
    to: Address,
    input: &Bytes,
    cap: u64,
) -> Result<u64> {
    let est = estimate(provider, call, from, to, input).await?;
    gas_with_margin(call, est, cap)
}

/// Why a mined transaction of the keeper's reverted: the call replayed with its own sender,
/// input and gas limit on the state of the block it was mined in (`eth_call` at that block),
/// decoded into the contracts' errors; when the replay does not revert (the transactions
/// before it in its block changed what it saw), what the receipt alone says: the gas it used
/// of its limit.
pub async fn replay_revert(
    provider: &DynProvider,
    from: Address,
    to: Address,
    input: &Bytes,
    gas: u64,
    block: u64,
    gas_used: u64,
) -> String {
    let req = TransactionRequest::default()
        .with_from(from)
        .with_to(to)
        .with_input(input.clone())
        .with_gas_limit(gas);
    let used = format!("it used {gas_used} of its gas limit {gas}");
    match provider.call(req).block(BlockId::number(block)).await {
        Ok(_) => format!(
            "reverted on chain ({used}); replayed on block {block}'s state it does not revert, so              the state it ran on differed"
        ),
        Err(TransportError::ErrorResp(resp)) => match resp.as_revert_data() {
            Some(data) if !data.is_empty() => {
                format!("{} ({used})", riskgate_kit::revert::describe_data(&data))
            }
            _ => format!("{} ({used})", crate::chain::short(&resp.message)),
        },
        Err(e) => format!(
            "reverted on chain ({used}); replaying it on block {block} failed: {}",
            crate::chain::short(&e.to_string())
        ),
    }
}

/// Simulates one submitVerdict from `from` (dry run): the reason it would publish, or the
/// decoded revert.
#[allow(clippy::too_many_arguments)]
pub async fn simulate_submit(
    provider: &DynProvider,
    gate: Address,
    from: Address,
    input: &Bytes,
    call: &'static str,
) -> Result<u8> {
    let req = TransactionRequest::default().with_from(from).with_to(gate).with_input(input.clone());
    let out = provider.call(req).await.map_err(|e| {
        ExecError::from(CallFailed::new(call, alloy::contract::Error::TransportError(e)))
    })?;
    // Both entry points return one `uint8 reason`: a word whose last byte it is.
    match out.len() {
        32 if out[..31].iter().all(|&b| b == 0) => Ok(out[31]),
        _ => Err(ExecError::Undecodable { call, returned: out }),
    }
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

/// The calldata of `redeem(market)` from `from` and the gas to sign it with: estimated on the
/// pending state first, so a revert is reported decoded instead of burning a transaction.
pub async fn redeem_calldata(
    provider: &DynProvider,
    gate: Address,
    from: Address,
    market: Address,
) -> Result<(Bytes, u64)> {
    let input: Bytes = IRiskGate::redeemCall { market }.abi_encode().into();
    let gas = gas_for(provider, "redeem", from, gate, &input, REDEEM_GAS_CAP).await?;
    Ok((input, gas))
}

/// The calldata of `writeOff(market)` and its gas, estimated first like redeem: too early,
/// redeemable or already written off is reported decoded (`WriteOffTooEarly { .. }`,
/// `MarketRedeemable { .. }`).
pub async fn write_off_calldata(
    provider: &DynProvider,
    gate: Address,
    from: Address,
    market: Address,
) -> Result<(Bytes, u64)> {
    let input: Bytes = IRiskGate::writeOffCall { market }.abi_encode().into();
    let gas = gas_for(provider, "writeOff", from, gate, &input, WRITE_OFF_GAS_CAP).await?;
    Ok((input, gas))
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
    fn gas_is_the_estimate_plus_its_margin_under_the_worst_case_cap() {
        let cap = submit_gas_cap("BUY_UP");
        // 4,000,000 + 48 × 6 bytes.
        assert_eq!(cap, 4_000_288);
        // 200,000 + 200,000 / 4 + 30,000 = 280,000.
        assert_eq!(gas_with_margin("submitVerdict", 200_000, cap).unwrap(), 280_000);
        // 3,300,000 + 825,000 + 30,000 = 4,155,000 > cap: the cap.
        assert_eq!(gas_with_margin("submitVerdict", 3_300_000, cap).unwrap(), cap);
        // Exactly the cap is allowed (with no margin left); one more is refused.
        assert_eq!(gas_with_margin("submitVerdict", cap, cap).unwrap(), cap);
        let e = gas_with_margin("submitVerdict", cap + 1, cap).unwrap_err();
        assert!(matches!(e, ExecError::AboveCap { estimate, .. } if estimate == cap + 1));
        assert!(e.to_string().contains("nothing was signed or sent"), "{e}");
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
