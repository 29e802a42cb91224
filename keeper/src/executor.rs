//! Executor: turns a model answer and its quote into a `submitVerdict` transaction, waits for
//! receipts, redeems final markets and writes off positions whose market never settled. It
//! sends the raw answer exactly as the provider returned it; a revert is decoded into the gate's
//! error enum so a log names the error and its values.

use crate::bindings::IRiskGate::{self, IRiskGateErrors, Quote};
use alloy::{
    primitives::{Address, TxHash, B256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionReceipt,
};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("gate reverted: {0}")]
    Reverted(String),
    #[error("sending the transaction failed: {0}")]
    Send(String),
    #[error("no receipt for {tx} after {waited:?}")]
    NoReceipt { tx: TxHash, waited: Duration },
    #[error("RPC call failed: {0}")]
    Rpc(String),
}

pub type Result<T> = std::result::Result<T, ExecError>;

/// Fees fixed once per cycle so each send needs no fee query of its own.
#[derive(Debug, Clone, Copy)]
pub struct Fees {
    pub max_fee_per_gas: u128,
    pub max_priority_fee_per_gas: u128,
}

pub async fn current_fees(provider: &DynProvider) -> Result<Fees> {
    let est = provider.estimate_eip1559_fees().await.map_err(|e| ExecError::Rpc(short(&e)))?;
    // Headroom over the estimate: a cycle's transactions should not stall on a base fee bump.
    Ok(Fees {
        max_fee_per_gas: est.max_fee_per_gas.saturating_mul(2),
        max_priority_fee_per_gas: est.max_priority_fee_per_gas,
    })
}

/// Gas limit for one submitVerdict. A PASS against one level measures about 250k and the venue
/// matches a bounded number of resting orders per call, so 2M leaves room for a fill across many
/// levels; the answer adds calldata (EIP-7623 floor: 40 gas per non-zero byte) and hashing, never
/// a log of its own (the gate logs 64 bytes of it).
pub fn submit_gas_limit(raw: &str) -> u64 {
    2_000_000 + 48 * raw.len() as u64
}

/// Describes a contract error, decoded into the gate's error enum when it is one.
pub fn describe(e: &alloy::contract::Error) -> String {
    if let Some(decoded) = e.as_decoded_interface_error::<IRiskGateErrors>() {
        return format!("{decoded:?}");
    }
    short(e)
}

/// Sends one submitVerdict and returns its hash without waiting.
pub async fn send_submit(
    provider: &DynProvider,
    gate: Address,
    market: Address,
    raw: &str,
    prompt_hash: B256,
    quote: &Quote,
    fees: Fees,
) -> Result<TxHash> {
    let contract = IRiskGate::new(gate, provider);
    let pending = contract
        .submitVerdict(market, raw.to_string(), prompt_hash, quote.clone())
        .gas(submit_gas_limit(raw))
        .max_fee_per_gas(fees.max_fee_per_gas)
        .max_priority_fee_per_gas(fees.max_priority_fee_per_gas)
        .send()
        .await
        .map_err(|e| ExecError::Send(describe(&e)))?;
    Ok(*pending.tx_hash())
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
        .map_err(|e| ExecError::Reverted(describe(&e)))
}

/// Polls for a receipt (every 25 ms, up to `timeout`).
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
                    return Err(ExecError::Rpc(short(&e)));
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

/// Redeems the gate's position in a final market.
pub async fn send_redeem(provider: &DynProvider, gate: Address, market: Address) -> Result<TxHash> {
    let contract = IRiskGate::new(gate, provider);
    // Simulate first so a revert is reported decoded instead of burning a transaction.
    contract.redeem(market).call().await.map_err(|e| ExecError::Reverted(describe(&e)))?;
    let pending = contract
        .redeem(market)
        .gas(500_000)
        .send()
        .await
        .map_err(|e| ExecError::Send(describe(&e)))?;
    Ok(*pending.tx_hash())
}

/// Writes off the gate's position in a market that did not finalize by `expiry +
/// writeOffGrace` (anyone may; it frees the slot and keeps the claim).
pub async fn send_write_off(
    provider: &DynProvider,
    gate: Address,
    market: Address,
) -> Result<TxHash> {
    let contract = IRiskGate::new(gate, provider);
    // Simulated first, like redeem: too early, already final or already written off is
    // reported decoded (`WriteOffTooEarly { .. }`) instead of burning a transaction.
    contract.writeOff(market).call().await.map_err(|e| ExecError::Reverted(describe(&e)))?;
    let pending = contract
        .writeOff(market)
        .gas(300_000)
        .send()
        .await
        .map_err(|e| ExecError::Send(describe(&e)))?;
    Ok(*pending.tx_hash())
}

fn short(e: &impl std::fmt::Display) -> String {
    crate::chain::short(&e.to_string())
}
