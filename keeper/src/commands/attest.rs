//! `keeper attest`: one attestor of one attested gate (issue 35). A separate process with its
//! own key, its own RPC and its own model. On `POST /attest {chainId, gate, market, readBlock}`
//! it reads the market and its book at `readBlock` itself, renders the prompt with the code
//! `report --check-prompts` re-renders published prompts with, asks its model, and signs the
//! EIP-712 `Answer` the gate checks. It never takes a prompt, a book or an answer from the
//! caller, and refuses, naming why, another chain or gate, a read block in the future or older
//! than the gate accepts, and a market the gate does not trust.
//!
//! Adversary: a compromised keeper asking it to sign something of its choosing. All it can
//! choose is the market and the read block, both checked here and again by the gate.

use crate::{
    chain::{self, attestation, reads, reads::MarketInfo, ChainError},
    domain::config::AttestConfig,
    inference::{prompt::ReadAt, Model},
    kit::bindings::{IBinaryMarket, IMarketFactory, IRiskGate},
    record::rederive,
};
use alloy::{
    primitives::Address,
    providers::{DynProvider, Provider},
    signers::local::PrivateKeySigner,
};
use axum::{
    extract::{rejection::JsonRejection, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use std::{collections::HashMap, net::SocketAddr, path::Path, sync::Arc};
use tokio_util::sync::CancellationToken;

/// Venue logs this many blocks behind the head are kept between requests (no reorg reaches
/// them); the blocks after are read again each time.
const VENUE_LOGS_DEPTH: u64 = 64;
/// The most markets whose venue logs an attestor keeps (the one read longest ago goes first).
const VENUE_LOGS_MARKETS: usize = 1_024;

#[derive(Debug, thiserror::Error)]
pub enum AttestError {
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error(transparent)]
    Reads(#[from] reads::CollectError),
    #[error(transparent)]
    Model(#[from] crate::inference::InferenceError),
    #[error("gate {gate} on chain {chain_id} is {mode}, not attested: it takes no attested answers, so there is nothing to sign for it; point --gate at an attested gate")]
    NotAttested { gate: Address, chain_id: u64, mode: chain::GateMode },
    #[error("reading gate {gate}'s attestor set failed")]
    Set {
        gate: Address,
        #[source]
        source: Box<alloy::contract::Error>,
    },
    #[error("this key's address {signer} is not one of gate {gate}'s attestors ({listed}): wrong key or wrong gate?")]
    NotAnAttestor { signer: Address, gate: Address, listed: String },
    #[error("the gate's attestor set reports EIP-712 domain separator {onchain}, this attestor computes {local}: not the gate this code signs for")]
    Domain { onchain: alloy::primitives::B256, local: alloy::primitives::B256 },
    #[error(
        "--listen {0} is not a loopback address: an attestor listens on 127.0.0.1 or ::1 only"
    )]
    NotLoopback(SocketAddr),
    #[error("cannot listen on {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("serving failed")]
    Serve(#[source] std::io::Error),
}

impl crate::domain::exit::Classify for AttestError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            Self::Chain(e) => e.fault(),
            Self::Reads(e) => e.fault(),
            Self::Model(e) => e.fault(),
            // The gate named is not one this key attests for.
            Self::NotAttested { .. }
            | Self::NotAnAttestor { .. }
            | Self::Domain { .. }
            | Self::NotLoopback(_) => Input,
            Self::Set { .. } | Self::Bind { .. } | Self::Serve(_) => Runtime,
        }
    }
}

/// What every request reads: fixed at start.
struct Attestor {
    provider: DynProvider,
    signer: PrivateKeySigner,
    chain_id: u64,
    gate: Address,
    factory: Address,
    max_read_age: u64,
    model: Model,
    strategy: String,
    answer_ttl_secs: u64,
    log_range: u64,
    /// The first block searched for a market's `MarketCreated`.
    from_block: u64,
    /// Each trusted market's `MarketCreated`, immutable: checked and searched for once.
    created: tokio::sync::Mutex<HashMap<Address, (MarketInfo, u64)>>,
    /// The venue logs of the markets asked about, kept once settled: a request reads only the
    /// blocks since the last one (it replayed the market's whole history every time).
    venue: rederive::VenueLogCache,
}

/// Starts the attestor: checks the chain, the gate, its mode and that this key is one of its
/// attestors, then serves until `cancel`.
pub async fn run(
    cfg: &AttestConfig,
    root: &Path,
    cancel: CancellationToken,
) -> Result<(), AttestError> {
    if !cfg.listen.ip().is_loopback() {
        return Err(AttestError::NotLoopback(cfg.listen));
    }
    let signer = chain::load_attestor_signer(cfg.keystore.as_deref())?;
    let (provider, chain_id) = chain::connect_checked(&cfg.chain).await?;
    let gate = cfg.gate;
    chain::check_gate(&provider, gate, chain_id).await?;
    let set_err = |source| AttestError::Set { gate, source: Box::new(source) };
    let settings = match chain::gate_mode(&provider, gate).await? {
        chain::GateMode::Attested(settings) => settings,
        mode => return Err(AttestError::NotAttested { gate, chain_id, mode }),
    };
    if !settings.signers.contains(&signer.address()) {
        let listed = settings.signers.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ");
        return Err(AttestError::NotAnAttestor { signer: signer.address(), gate, listed });
    }
    let onchain = attestation::IAttestorSetView::new(settings.set, &provider)
        .domainSeparator()
        .call()
        .await
        .map_err(set_err)?;
    let local = attestation::domain(chain_id, gate).separator();
    if onchain != local {
        return Err(AttestError::Domain { onchain, local });
    }
    let factory = reads::gate_factory(&provider, gate).await?;
    let (model, _model_server) = Model::start(&cfg.model, cfg.inference_timeout, root).await?;
    let state = Arc::new(Attestor {
        provider,
        signer,
        chain_id,
        gate,
        factory,
        max_read_age: u64::from(settings.max_read_age),
        model,
        strategy: cfg.strategy_text.clone(),
        answer_ttl_secs: cfg.answer_ttl_secs,
        log_range: cfg.log_range,
        from_block: cfg.from_block,
        created: Default::default(),
        venue: rederive::VenueLogCache::new(VENUE_LOGS_DEPTH, VENUE_LOGS_MARKETS),
    });
    let listener = tokio::net::TcpListener::bind(cfg.listen)
        .await
        .map_err(|source| AttestError::Bind { addr: cfg.listen, source })?;
    let addr = listener.local_addr().map_err(AttestError::Serve)?;
    println!("keeper attest: http://{addr}/");
    tracing::info!(
        %addr,
        signer = %state.signer.address(),
        %gate,
        chain_id,
        threshold = settings.threshold,
        attestors = settings.signers.len(),
        max_read_age = state.max_read_age,
        model = state.model.name(),
        "the attestor is listening"
    );
    let state_signer = state.signer.address();
    let app = Router::new()
        .route("/attest", post(attest))
        .route("/health", get(health))
        .with_state(state);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { cancel.cancelled().await })
        .await
        .map_err(AttestError::Serve)?;
    tracing::info!(%addr, signer = %state_signer, "the attestor stopped on a signal");
    Ok(())
}

async fn health(State(a): State<Arc<Attestor>>) -> Response {
    Json(serde_json::json!({
        "signer": a.signer.address(),
        "chainId": a.chain_id,
        "gate": a.gate,
    }))
    .into_response()
}

/// A refusal: its status and one sentence.
fn refuse(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(serde_json::json!({ "error": message.into() }))).into_response()
}

async fn attest(
    State(a): State<Arc<Attestor>>,
    body: Result<Json<attestation::AttestRequest>, JsonRejection>,
) -> Response {
    let req = match body {
        Ok(Json(r)) => r,
        Err(e) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("the body must be {{\"chainId\", \"gate\", \"market\", \"readBlock\"}} and nothing else: {}", e.body_text()),
            )
        }
    };
    match sign(&a, req).await {
        Ok(signed) => {
            tracing::info!(
                market = %signed.market,
                read_block = signed.read_block,
                prompt_hash = %signed.read.prompt_hash,
                verdict = crate::domain::decision::gate_verdict(&signed.raw),
                "attested"
            );
            Json(signed).into_response()
        }
        Err((status, why)) => {
            tracing::warn!(market = %req.market, read_block = req.read_block, reason = %why, "refused to attest");
            refuse(status, why)
        }
    }
}

type Refusal = (StatusCode, String);

fn unavailable(what: &str, e: impl std::fmt::Display) -> Refusal {
    (StatusCode::BAD_GATEWAY, format!("{what}: {e}"))
}

/// Checks the request against the chain, reads, asks and signs.
async fn sign(
    a: &Attestor,
    req: attestation::AttestRequest,
) -> Result<attestation::Attested, Refusal> {
    if req.chain_id != a.chain_id {
        return Err((
            StatusCode::BAD_REQUEST,
            format!("this attestor signs for chain {}, not {}", a.chain_id, req.chain_id),
        ));
    }
    if req.gate != a.gate {
        return Err((
            StatusCode::BAD_REQUEST,
            format!("this attestor signs for gate {}, not {}", a.gate, req.gate),
        ));
    }
    // The head and the read block, both at once (one round trip, not two).
    let (head, block) = tokio::join!(
        a.provider.get_block_number(),
        a.provider.get_block_by_number(req.read_block.into())
    );
    let head = head.map_err(|e| unavailable("the node", e))?;
    if req.read_block > head {
        return Err((
            StatusCode::BAD_REQUEST,
            format!("readBlock {} is in the future: the head is {head}", req.read_block),
        ));
    }
    if head - req.read_block > a.max_read_age {
        return Err((
            StatusCode::BAD_REQUEST,
            format!(
                "readBlock {} is {} blocks old: the gate accepts reads at most {} blocks behind (head {head})",
                req.read_block,
                head - req.read_block,
                a.max_read_age
            ),
        ));
    }
    let block = block
        .map_err(|e| unavailable("the node", e))?
        .ok_or_else(|| unavailable("the node", format!("no block {}", req.read_block)))?;
    let created = trusted_market(a, req.market, head).await?;
    let at = ReadAt { block: req.read_block, time: block.header.timestamp };
    let (prompt, state) = rederive::prompt_at(
        &a.provider,
        req.market,
        &created,
        at,
        &a.strategy,
        a.log_range,
        &a.venue,
        head,
    )
    .await
    .map_err(|e| (StatusCode::UNPROCESSABLE_ENTITY, format!("rendering the prompt: {e}")))?;
    let reply = a
        .model
        .ask(&prompt, &state)
        .await
        .map_err(|e| unavailable("the model", crate::error_chain(&e)))?;
    let read = attestation::Read {
        prompt_hash: prompt.hash(),
        best_bid: state.best_bid,
        best_ask: state.best_ask,
    };
    let deadline = deadline_base(a, &req, &block.header).await?.saturating_add(a.answer_ttl_secs);
    let answer = attestation::answer(req.market, req.read_block, &read, &reply.text, deadline);
    let signature = attestation::sign(&a.signer, a.chain_id, a.gate, &answer)
        .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, format!("signing: {e}")))?;
    Ok(attestation::Attested {
        signer: a.signer.address(),
        chain_id: a.chain_id,
        gate: a.gate,
        market: req.market,
        read_block: req.read_block,
        read,
        deadline,
        raw: reply.text,
        signature,
        model: a.model.model(),
    })
}

/// The time an answer's deadline counts from: the keeper's `sendTime` when it lies between the
/// read block's time and the next block's time as this attestor's node sees it (so every
/// attestor signs the keeper's one value, and none a later one than its own clock allows), else
/// a refusal naming both; the read block's time when the keeper sent none. On a chain that
/// mines on demand the read block can be minutes old when the keeper sends: a deadline counted
/// from it would expire before the answer lands, every cycle, until something else mines.
async fn deadline_base(
    a: &Attestor,
    req: &attestation::AttestRequest,
    read: &alloy::rpc::types::Header,
) -> Result<u64, Refusal> {
    let Some(send) = req.send_time else { return Ok(read.timestamp) };
    if send < read.timestamp {
        return Err((
            StatusCode::BAD_REQUEST,
            format!(
                "sendTime {send} is before readBlock {}'s time {}",
                req.read_block, read.timestamp
            ),
        ));
    }
    let at = crate::chain::follower::BlockRef {
        number: read.number,
        hash: read.hash,
        time: read.timestamp,
    };
    let next = crate::chain::follower::next_block_time(&a.provider, &at).await;
    if send > next {
        return Err((
            StatusCode::BAD_REQUEST,
            format!(
                "sendTime {send} is ahead of the next block's time as this attestor's node sees                  it ({next}): the keeper's clock or node runs ahead of this attestor's"
            ),
        ));
    }
    Ok(send)
}

/// `market`'s `MarketCreated`, once the gate is seen to trust it, from the cache or searched for
/// from `--from-block` to `head`. Both are fixed for a market's life (its factory, creator and
/// resolver are immutable, and so are the gate's trusted lists), so each market is checked and
/// searched for once; a refused one is not kept.
async fn trusted_market(
    a: &Attestor,
    market: Address,
    head: u64,
) -> Result<(MarketInfo, u64), Refusal> {
    if let Some(known) = a.created.lock().await.get(&market) {
        return Ok(known.clone());
    }
    trusted(a, market).await?;
    let found =
        rederive::market_created(&a.provider, a.factory, market, a.from_block, head, a.log_range)
            .await
            .map_err(|e| (StatusCode::UNPROCESSABLE_ENTITY, format!("finding the market: {e}")))?;
    a.created.lock().await.insert(market, found.clone());
    Ok(found)
}

/// The gate trades `market` only if its factory made it, its creator is trusted and its
/// resolver is trusted: an attestor signs for no other.
async fn trusted(a: &Attestor, market: Address) -> Result<(), Refusal> {
    let creator = IMarketFactory::new(a.factory, &a.provider)
        .creatorOf(market)
        .call()
        .await
        .map_err(|e| unavailable("the factory", e))?;
    if creator == Address::ZERO {
        return Err((
            StatusCode::BAD_REQUEST,
            format!("{market} is not a market of the gate's factory {}", a.factory),
        ));
    }
    let g = IRiskGate::new(a.gate, &a.provider);
    if !g.isTrustedCreator(creator).call().await.map_err(|e| unavailable("the gate", e))? {
        return Err((
            StatusCode::BAD_REQUEST,
            format!("market {market}'s creator {creator} is not one the gate trusts"),
        ));
    }
    let resolver = IBinaryMarket::new(market, &a.provider)
        .resolver()
        .call()
        .await
        .map_err(|e| unavailable("the market", e))?;
    if !g.isTrustedResolver(resolver).call().await.map_err(|e| unavailable("the gate", e))? {
        return Err((
            StatusCode::BAD_REQUEST,
            format!("market {market}'s resolver {resolver} is not one the gate trusts"),
        ));
    }
    Ok(())
}
