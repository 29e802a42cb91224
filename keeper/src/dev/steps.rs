//! The demo's scripted steps: the stages driven one at a time, so a script can act between
//! reading, asking and submitting (advance the clock, move a book, replay a hostile answer).
//! The production cycle is [`Engine::cycle`]; these only compose the same stage methods.

use crate::{
    chain::reads::{MarketInfo, MarketState},
    domain::decision::{Answer, BlockRef, Submitted},
    engine::{Engine, Result},
};
use alloy::primitives::Address;
use tokio_util::sync::CancellationToken;

/// Follows the chain and reads the books of `markets` (those the follower knows) at its head;
/// final markets are dropped, failed reads are off-chain rows.
pub async fn read(
    engine: &mut Engine,
    markets: &[Address],
) -> Result<(Vec<MarketState>, BlockRef)> {
    let (collector, _, executor) = engine.stages();
    let head = collector.follow().await?.head;
    let infos: Vec<MarketInfo> =
        collector.markets().into_iter().filter(|m| markets.contains(&m.address)).collect();
    let (states, failed) = collector.read(&infos, head).await;
    executor.offchain(failed)?;
    Ok((states, head))
}

/// Asks the strategy's model about every state read at `head` and collects the answers in market order (so
/// a script submits in a fixed order); failures to answer are off-chain rows.
pub async fn ask_all(
    engine: &mut Engine,
    states: Vec<MarketState>,
    head: BlockRef,
    scenario: Option<&str>,
    cancel: &CancellationToken,
) -> Result<Vec<Answer>> {
    let (collector, strategy, executor) = engine.stages();
    let send_time = collector.next_block_time(head).await;
    let mut asks = strategy.asks(scenario, cancel);
    asks.send(states, head, send_time);
    let mut answers = Vec::new();
    while let Some(done) = asks.next().await {
        match done {
            Some(Ok(a)) => {
                strategy.answered(a.market);
                answers.push(a);
            }
            Some(Err(u)) => {
                executor.offchain([strategy.unanswered(u, head, send_time, asks.note())])?
            }
            None => {}
        }
        if let Some(waiting) = asks.waiting() {
            match collector.reread(waiting, head).await {
                Ok(book) => asks.send_one(book),
                Err(u) => {
                    executor.offchain([strategy.unanswered(u, head, send_time, asks.note())])?
                }
            }
        }
    }
    answers.sort_by_key(|a| a.market);
    Ok(answers)
}

/// Submits answers together (in `submitVerdicts` batches when there are several and the
/// engine batches), waits for them to be mined, follows the chain so the record holds them, and
/// returns the decisions they published.
pub async fn submit(engine: &mut Engine, answers: Vec<Answer>) -> Result<Vec<Submitted>> {
    let (_, _, executor) = engine.stages();
    executor.new_cycle();
    let ids = executor.submit_batch(answers).await?;
    let done = executor.await_mined(&ids).await?;
    engine.follow().await?;
    Ok(done)
}
