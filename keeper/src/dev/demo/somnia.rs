//! The consensus demo gate (issue 36), on its own chain with its own record in
//! `results/consensus/`: a gate that takes decisions only from its verdict source, a
//! `SomniaVerdictSource` over the stand-in platform (`SomniaAgentsStandIn`: Somnia's platform
//! cannot run here, see docs/somnia.md). No keeper submits anything. Anyone asks (`ask`, paid
//! from the source's balance, built on chain from the market's book at that block); three
//! validators, played by three test keys, each read the request's payload from the platform's
//! `RequestCreated` log, ask the bundled language model (one llama.cpp server on loopback) with
//! the prompt and system text the payload holds, and send `respond(abi.encode(answer))`. Two
//! sample at temperature 0, the third at another temperature and seed, so it sometimes answers
//! otherwise. The platform finalizes when all three answered (Threshold, 3 of 3); the source
//! counts byte-identical answers itself and the gate publishes the verdict, or 22 when they
//! split. One request is left to time out (one validator answers, the others never do; anyone
//! calls `expire` after the timeout): the gate publishes 23.
//!
//! The record is written from the chain alone (`keeper report`'s code), then checked as
//! `make test-record` checks it (`report --check --check-prompts`). The validators answer one
//! after another in a fixed order, each respond mined in its own block, and the model samples
//! with fixed seeds on one server slot, so the record is the same run to run.

use super::{DemoError, Progress, Result};
use crate::{
    chain,
    commands::report,
    dev::world::{
        attestor_address, confirm, question_for, Actor, SourcePlan, World, WorldError,
        ATTESTOR_ACCOUNTS,
    },
    domain::config::{ChainConfig, ReportConfig, ReportSource},
    inference::{openai::OpenAiClient, prompt::system_text, Prompt},
    kit::bindings::{
        reason, IRiskGate, ISomniaAgentsStandIn, ISomniaLlmAgent, ISomniaVerdictSource,
    },
};
use alloy::{
    primitives::{Address, U256},
    providers::DynProvider,
    rpc::types::TransactionReceipt,
    sol_types::{SolCall, SolEvent, SolValue},
};
use std::{collections::BTreeSet, path::Path, time::Duration};
use tokio_util::sync::CancellationToken;

/// The consensus demo's record, under the demo's results folder.
pub const CONSENSUS_DIR: &str = "consensus";
/// Validators asked per request, and identical answers a verdict needs: all three.
const SUBCOMMITTEE: u8 = 3;
const THRESHOLD: u8 = 3;
/// The platform's consensus type: Threshold (finalize once `THRESHOLD` answered, agreeing or
/// not), so a split reaches the source, which counts agreement itself.
const THRESHOLD_CONSENSUS: u8 = 1;
/// Blocks an answer may come after its read: three responds, one block each, fit.
const MAX_READ_AGE: u32 = 12;
const MAX_SLIPPAGE_BPS: u16 = 200;
/// Seconds a request may stay pending before anyone may expire it.
const TIMEOUT_SECS: u64 = 60;
/// Somnia testnet's LLM agent id (any id does on the stand-in).
const AGENT_ID: u64 = 12_847_293_847_561_029_384;
/// The stand-in's prices, in wei: the LLM agent's 0.07 per validator (Somnia's documented
/// price), and a deposit floor of 0.01 per validator (the stand-in's choice).
const PRICE_PER_AGENT: u64 = 70_000_000_000_000_000;
const DEPOSIT_PER_AGENT: u64 = 10_000_000_000_000_000;
/// Gas for a validator's respond and for `expire`, which run the source's callback and the
/// gate's decision inside them: an estimate would stop at the least gas with which the
/// platform's own call succeeds, and the platform does not revert when its callback runs out.
const CALLBACK_TX_GAS: u64 = 3_000_000;
/// Fees of the transactions the record names (each respond, `expire`, the redeems): fixed, so
/// the record is the same run to run. A filled-in estimate reads the head, and anvil has been
/// seen to answer a read right after a receipt from the block before it; the price paid is the
/// block's base fee plus the tip either way.
const MAX_FEE_PER_GAS: u128 = 10_000_000_000;
const PRIORITY_FEE_PER_GAS: u128 = 1;
/// Blocks from one ask about a market to the next (the source's budget guard): the demo asks
/// each market once.
const ASK_INTERVAL: u32 = 100;
/// Fresh markets asked about with every validator answering.
const MARKETS: usize = 6;
/// The third validator's sampling.
const ODD_TEMPERATURE: f32 = 1.5;
const ODD_SEED: u64 = 7;

/// The consensus gate's bounds: the attested demo gate's.
pub fn params() -> IRiskGate::Params {
    super::k_of_n::params()
}

/// The verdict source the demo deploys: three validators (anvil's dev accounts 6 to 8, in
/// order), all three needed, the fixed system text with no strategy.
pub fn plan(anvil: &crate::kit::anvil::Anvil) -> Result<SourcePlan> {
    let validators = (0..ATTESTOR_ACCOUNTS.len())
        .map(|i| attestor_address(anvil, i))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(SourcePlan {
        validators,
        deposit_per_agent: U256::from(DEPOSIT_PER_AGENT),
        settings: ISomniaVerdictSource::Settings {
            gate: Address::ZERO,
            platform: Address::ZERO,
            agentId: U256::from(AGENT_ID),
            pricePerAgent: U256::from(PRICE_PER_AGENT),
            subcommitteeSize: SUBCOMMITTEE,
            threshold: THRESHOLD,
            consensusType: THRESHOLD_CONSENSUS,
            timeout: U256::from(TIMEOUT_SECS),
            askInterval: ASK_INTERVAL,
            maxReadAge: MAX_READ_AGE,
            maxSlippageBps: MAX_SLIPPAGE_BPS,
            system: system_text(""),
        },
    })
}

fn check(step: &str, ok: bool, what: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(DemoError::Check { step: step.to_string(), what: what() })
    }
}

/// A call or transaction of `what` that failed, its revert decoded.
fn failed(what: &'static str) -> impl Fn(alloy::contract::Error) -> DemoError {
    move |e| WorldError::from(chain::sender::CallFailed::on(what)(e)).into()
}

/// One validator: a test key and the bundled model, sampled its own way.
struct Validator {
    rpc: DynProvider,
    model: OpenAiClient,
}

impl Validator {
    /// Reads the request's payload as the platform published it, asks the model with the prompt
    /// and system text it holds, and responds with the answer ABI-encoded, as the LLM agent's
    /// `inferString` returns it. Returns the answer and the respond's receipt.
    async fn answer(
        &self,
        platform: Address,
        request: &Request,
    ) -> Result<(String, TransactionReceipt)> {
        let call = ISomniaLlmAgent::inferStringCall::abi_decode(&request.payload).map_err(|e| {
            DemoError::Check {
                step: "consensus: a validator reads the payload".into(),
                what: e.to_string(),
            }
        })?;
        let prompt = Prompt { system: call.system, user: call.prompt };
        let reply = self.model.ask(&prompt).await?;
        let p = ISomniaAgentsStandIn::new(platform, &self.rpc);
        let tx = p
            .respond(request.id, reply.text.abi_encode().into())
            .gas(CALLBACK_TX_GAS)
            .max_fee_per_gas(MAX_FEE_PER_GAS)
            .max_priority_fee_per_gas(PRIORITY_FEE_PER_GAS)
            .send()
            .await
            .map_err(failed("respond"))?;
        let receipt = confirm(&self.rpc, "respond", *tx.tx_hash()).await?;
        Ok((reply.text, receipt))
    }
}

/// A request as the platform's `RequestCreated` published it.
struct Request {
    id: U256,
    payload: Vec<u8>,
}

/// The reason the source's `Answered` in `receipt` logged, if any.
fn answered(receipt: &TransactionReceipt) -> Option<u8> {
    receipt
        .inner
        .logs()
        .iter()
        .find_map(|l| ISomniaVerdictSource::Answered::decode_log(&l.inner).ok())
        .map(|a| a.reason)
}

/// The consensus gate's scenarios, then its record written from chain and checked; returns the
/// reasons its record holds.
pub(super) async fn scenarios(
    w: &World,
    root: &Path,
    results: &Path,
    p: &Progress,
    cancel: &CancellationToken,
) -> Result<BTreeSet<u8>> {
    let Some(c) = w.consensus else {
        return Err(DemoError::Check {
            step: "consensus".into(),
            what: "the world has no verdict source".into(),
        });
    };
    w.mint(w.deployment.gate, U256::from(100_000_000u64)).await?;
    p.step("consensus gate: the bundled model for three validators (one llama.cpp server on 127.0.0.1)");
    let (client, server) = OpenAiClient::bundled(
        root,
        Duration::from_secs(300),
        super::bundled_options(),
        None,
        super::ONE_SLOT,
    )
    .await?;
    let mut validators = Vec::new();
    for i in 0..ATTESTOR_ACCOUNTS.len() {
        let signer = chain::dev_signer(w.attestor_key(i)?).map_err(WorldError::from)?;
        let rpc = chain::signing_provider(&w.anvil.url, signer).map_err(WorldError::from)?;
        let odd = i + 1 == ATTESTOR_ACCOUNTS.len();
        let model = if odd {
            client.clone().with_sampling(ODD_TEMPERATURE, Some(ODD_SEED))
        } else {
            client.clone()
        };
        validators.push(Validator { rpc, model });
    }
    let outcome = ask_all(w, c.platform, c.source, &validators, p, cancel).await;
    server.stop().await;
    let (agreed, split, timed_out) = outcome?;
    check("consensus: three validators agree", agreed > 0, || {
        format!("no request of {MARKETS} where all three validators agreed")
    })?;
    check("consensus: the odd validator splits the vote", split > 0, || {
        format!(
            "no request of {MARKETS} the third validator (temperature {ODD_TEMPERATURE}, seed \
             {ODD_SEED}) split"
        )
    })?;
    check(
        "consensus: a request times out",
        timed_out == Some(reason::NO_CONSENSUS_IN_TIME),
        || format!("the expired request published {timed_out:?}, expected Some(23)"),
    )?;

    p.step(
        "consensus gate: record written from chain alone, then checked as make test-record does",
    );
    let chain = ChainConfig {
        rpc_url: w.anvil.url.clone(),
        expected_chain_id: Some(w.deployment.chain_id),
    };
    let mut cfg = ReportConfig {
        source: ReportSource::Chain { chain, gate: Some(w.deployment.gate) },
        check: false,
        check_prompts: false,
        from_block: Some(w.deployment.deploy_block),
        log_range: 10_000,
        results: Some(results.to_path_buf()),
        confirmations: Some(0),
    };
    let anvil_bin = Path::new("");
    report::run(&cfg, root, anvil_bin).await.map_err(|e| report_failed("write", e))?;
    cfg.check = true;
    cfg.check_prompts = true;
    let checked =
        report::run(&cfg, root, anvil_bin).await.map_err(|e| report_failed("check", e))?;
    for line in checked.verified.iter().filter(|l| l.contains("consensus") || l.contains("prompts"))
    {
        eprintln!("demo: consensus gate: {line}");
    }
    let feed = results.join(crate::record::FEED_FILE);
    let rows = crate::record::feed::read_feed_for(&feed, w.deployment.chain_id, w.deployment.gate)?;
    let codes = rows
        .iter()
        .filter_map(|r| match r {
            crate::record::feed::FeedRow::Decision(d) => Some(d.reason),
            _ => None,
        })
        .collect();
    Ok(codes)
}

fn report_failed(what: &str, e: report::ReportError) -> DemoError {
    DemoError::Check { step: format!("consensus: {what} the record"), what: crate::error_chain(&e) }
}

/// Asks about [`MARKETS`] fresh markets with every validator answering, then one more that
/// times out, then settles: returns how many requests three validators agreed on, how many
/// they split, and what the expired one published.
async fn ask_all(
    w: &World,
    platform: Address,
    source: Address,
    validators: &[Validator],
    p: &Progress,
    cancel: &CancellationToken,
) -> Result<(usize, usize, Option<u8>)> {
    let asker = w.signer(Actor::Outsider);
    let src = ISomniaVerdictSource::new(source, asker);
    let deposit = src.requestDeposit().call().await.map_err(failed("requestDeposit"))?;
    let now = w.chain_time().await?;
    let expiry = now + 7_200;
    let q = w.fillable_min_qty(100);
    let mut markets = Vec::new();
    for i in 0..=MARKETS as u64 {
        // Books from 0.20/0.15 up in steps of 0.12 (UP ask / UP bid).
        let ask = 200_000 + 120_000 * (i % 6);
        let question = question_for(100 + i, expiry);
        let m = w
            .create_market_asking(Actor::Maker, &question, 10_000, 100, q, expiry, w.maker_addr)
            .await?;
        w.ask(m, ask, 20_000_000).await?;
        w.bid(m, ask - 50_000, 20_000_000).await?;
        // The question lives only in MarketCreated's log: anyone supplies it to the source
        // once, checked against the market's questionHash.
        let tx = src.noteQuestion(m, question).send().await.map_err(failed("noteQuestion"))?;
        confirm(asker, "noteQuestion", *tx.tx_hash()).await?;
        markets.push(m);
    }
    let (asked, last) = markets.split_at(MARKETS);
    let (mut agreed, mut split) = (0, 0);
    for (i, m) in asked.iter().enumerate() {
        if cancel.is_cancelled() {
            return Err(DemoError::Cancelled);
        }
        p.step(&format!("consensus gate: request {} of {MARKETS}, three validators answer", i + 1));
        let request = ask(w, &src, *m, deposit).await?;
        let mut answers = Vec::new();
        let mut published = None;
        for v in validators {
            let (answer, receipt) = v.answer(platform, &request).await?;
            answers.push(answer);
            // The last respond finalizes the request: the callback runs inside it.
            published = answered(&receipt);
        }
        match published {
            Some(reason::ATTESTORS_DISAGREE) => split += 1,
            Some(r) if r != reason::NO_CONSENSUS_IN_TIME => agreed += 1,
            other => {
                return Err(DemoError::Check {
                    step: "consensus: three validators answer in time".into(),
                    what: format!(
                        "the last respond about {m} logged {other:?} from the source (answers \
                         {answers:?}): no decision, or 23"
                    ),
                })
            }
        }
    }

    p.step("consensus gate: a request only one validator answers, expired after its timeout");
    let m = last[0];
    let request = ask(w, &src, m, deposit).await?;
    validators[0].answer(platform, &request).await?;
    w.advance(TIMEOUT_SECS + 1).await?;
    let platform_rpc = ISomniaAgentsStandIn::new(platform, asker);
    let tx = platform_rpc
        .expire(request.id)
        .gas(CALLBACK_TX_GAS)
        .max_fee_per_gas(MAX_FEE_PER_GAS)
        .max_priority_fee_per_gas(PRIORITY_FEE_PER_GAS)
        .send()
        .await
        .map_err(failed("expire"))?;
    let receipt = confirm(asker, "expire", *tx.tx_hash()).await?;
    let timed_out = answered(&receipt);

    p.step("consensus gate: markets resolved, the gate's positions redeemed by anyone");
    w.advance(7_300).await?;
    let gate = IRiskGate::new(w.deployment.gate, asker);
    for (i, m) in markets.iter().enumerate() {
        w.resolve(*m, i % 2 == 0).await?;
        if gate.redeem(*m).call().await.is_err() {
            continue; // the gate holds nothing there
        }
        let tx = gate
            .redeem(*m)
            .gas(500_000)
            .max_fee_per_gas(MAX_FEE_PER_GAS)
            .max_priority_fee_per_gas(PRIORITY_FEE_PER_GAS)
            .send()
            .await
            .map_err(failed("redeem"))?;
        confirm(asker, "redeem", *tx.tx_hash()).await?;
    }
    Ok((agreed, split, timed_out))
}

/// `ask(market)` as anyone, paying the exact deposit; the request the platform published.
async fn ask(
    w: &World,
    src: &ISomniaVerdictSource::ISomniaVerdictSourceInstance<&DynProvider>,
    market: Address,
    deposit: U256,
) -> Result<Request> {
    let asker = w.signer(Actor::Outsider);
    let tx = src.ask(market).value(deposit).send().await.map_err(failed("ask"))?;
    let receipt = confirm(asker, "ask", *tx.tx_hash()).await?;
    receipt
        .inner
        .logs()
        .iter()
        .find_map(|l| ISomniaAgentsStandIn::RequestCreated::decode_log(&l.inner).ok())
        .map(|ev| Request { id: ev.requestId, payload: ev.data.payload.to_vec() })
        .ok_or_else(|| DemoError::Check {
            step: "consensus: ask".into(),
            what: format!("the ask about {market} created no request"),
        })
}
