//! `keeper serve`: the floor, a read-only web view of one gate's record.
//!
//! - It holds no key and sends nothing: it follows the gate on a node (or a saved chain state
//!   reloaded into a local anvil) through [`track::Tracker`], which reads the record with the
//!   code `keeper report` uses, so the page and the report cannot disagree.
//! - It binds loopback only, answers GET (and HEAD) only, and every response carries a strict
//!   Content-Security-Policy: no inline script or style, nothing from another origin.
//! - Model answers and market questions are attacker-controlled text: the pages escape them
//!   ([`html::text`]) and the live script writes them with `textContent`.
//! - Queries are bounded and parsed strictly ([`view::FeedQuery`]); a bad one is a 400 that
//!   says what was wrong.
//!
//! Routes: `/` (status, gate card, feed), `/decision/{block}/{log_index}`, `/market/{address}`,
//! `/models`, `/charts`, `/chart/decisions.svg`, and behind them `/api/status`, `/api/gate`,
//! `/api/decisions`, `/api/decision/{block}/{log_index}`, `/api/market/{address}`,
//! `/api/models`, `/api/calibration`, `/api/offchain`; `/events` streams new heads, decisions
//! and settlements (server-sent events).

pub mod html;
pub mod plots;
pub mod track;
pub mod view;

use crate::{
    commands::report::{self, ReportError},
    domain::config::{ReportSource, ServeConfig},
};
use axum::{
    extract::{Path as UrlPath, Query, RawQuery, State},
    http::{header, HeaderValue, Request, StatusCode},
    middleware::{self, Next},
    response::{
        sse::{Event, KeepAlive, Sse},
        Html, IntoResponse, Response,
    },
    routing::get,
    Json, Router,
};
use std::{
    collections::VecDeque, convert::Infallible, net::SocketAddr, path::Path, sync::Arc,
    time::Duration,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use track::{Snapshot, Source, Tracker};
use view::FeedQuery;

/// Every response's Content-Security-Policy: scripts, styles, images and the event stream from
/// this origin only, no inline script or style, no frames, no plugins, forms to this origin.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                       connect-src 'self'; base-uri 'none'; form-action 'self'; \
                       frame-ancestors 'none'";
/// The longest request target accepted (path and query), in bytes.
pub const MAX_TARGET_BYTES: usize = 4_096;

const CSS: &str = include_str!("assets/floor.css");
const JS: &str = include_str!("assets/floor.js");

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Track(#[from] track::TrackError),
    #[error(
        "--listen {0}: the floor binds a loopback address only (127.0.0.1 or ::1); put a reverse \
         proxy in front of it to publish it"
    )]
    NotLoopback(SocketAddr),
    #[error("binding {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("serving the floor")]
    Serve(#[source] std::io::Error),
}

impl crate::domain::exit::Classify for ServeError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            Self::Report(e) => e.fault(),
            Self::Track(e) => e.fault(),
            Self::NotLoopback(_) => Input,
            Self::Bind { .. } | Self::Serve(_) => Runtime,
        }
    }
}

#[derive(Clone)]
struct App {
    snap: watch::Receiver<Arc<Snapshot>>,
    provider: alloy::providers::DynProvider,
    cancel: CancellationToken,
    /// What a decision page's check reads: the gate's first block, the widest log range, and
    /// the results folder holding the published strategy texts.
    from: u64,
    log_range: u64,
    results: std::path::PathBuf,
    /// Decision pages' checks already made (bounded): a row and its closing rows checked once
    /// are not read from the node again while they stand as they are.
    checked: Arc<std::sync::Mutex<CheckCache>>,
}

/// How many decision rows' checks the floor keeps.
const CHECKS_KEPT: usize = 512;

/// Checks of decision rows, by a hash of the row and its closing rows as the record holds
/// them (a reorg or a new closing row changes it, so it is checked again), the oldest dropped
/// first past [`CHECKS_KEPT`]. Only checks that ran to the end are kept: a node that failed is
/// asked again next time.
#[derive(Default)]
struct CheckCache {
    map: std::collections::HashMap<alloy::primitives::B256, report::RowCheck>,
    order: std::collections::VecDeque<alloy::primitives::B256>,
}

impl CheckCache {
    fn get(&self, key: &alloy::primitives::B256) -> Option<report::RowCheck> {
        self.map.get(key).cloned()
    }

    fn put(&mut self, key: alloy::primitives::B256, check: report::RowCheck) {
        if self.map.insert(key, check).is_none() {
            self.order.push_back(key);
            while self.order.len() > CHECKS_KEPT {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
    }
}

impl App {
    fn now(&self) -> Arc<Snapshot> {
        self.snap.borrow().clone()
    }
}

/// `keeper serve`: reads the record, binds, prints `keeper serve: http://ADDR/` on stdout, and
/// serves until `cancel`.
pub async fn run(
    cfg: &ServeConfig,
    root: &Path,
    anvil_bin: &Path,
    cancel: CancellationToken,
) -> Result<(), ServeError> {
    if !cfg.listen.ip().is_loopback() {
        return Err(ServeError::NotLoopback(cfg.listen));
    }
    let (chain, gate, from, results, saved, mode, tag) = match &cfg.source {
        ReportSource::Chain { chain, gate } => {
            let results = cfg.results.clone();
            (chain.clone(), *gate, cfg.from_block, results, None, "live".to_string(), None)
        }
        ReportSource::LoadState { state, gate } => {
            let s = report::start_saved(state, cfg.results.clone(), anvil_bin).await?;
            let from = Some(cfg.from_block.unwrap_or(s.meta.deploy_block));
            let gate = Some(gate.unwrap_or(s.meta.gate));
            let name = state.file_name().map(|n| n.to_string_lossy().to_string());
            let mode = format!("saved state {}", name.unwrap_or_default());
            // Each saved chain gets its own state folder: another demo's chain reloads under the
            // same chain id and gate address.
            let bytes = std::fs::read(state)
                .map_err(|source| ReportError::Io { path: state.display().to_string(), source })?;
            let tag = format!("saved-{}", &alloy::primitives::keccak256(&bytes).to_string()[2..14]);
            (s.chain.clone(), gate, from, Some(s.results.clone()), Some(s.anvil), mode, Some(tag))
        }
    };
    let out = serve_chain(cfg, root, chain, gate, from, results, mode, tag, cancel).await;
    if let Some(anvil) = saved {
        anvil.stop().await;
    }
    out
}

#[allow(clippy::too_many_arguments)]
async fn serve_chain(
    cfg: &ServeConfig,
    root: &Path,
    chain: crate::domain::config::ChainConfig,
    gate: Option<alloy::primitives::Address>,
    from: Option<u64>,
    results: Option<std::path::PathBuf>,
    mode: String,
    tag: Option<String>,
    cancel: CancellationToken,
) -> Result<(), ServeError> {
    let (provider, chain_id) =
        crate::chain::connect_checked(&chain).await.map_err(ReportError::from)?;
    let gate = report::saved_gate(root, chain_id, gate)?;
    let from = match from {
        Some(b) => b,
        None => report::saved_deploy_block(root, chain_id, gate)?.unwrap_or(0),
    };
    let results =
        results.unwrap_or_else(|| crate::record::default_results_dir(root, chain_id, gate));
    let confirmations =
        cfg.confirmations.unwrap_or_else(|| crate::domain::config::default_confirmations(chain_id));
    let strategies = results.clone();
    let keeper = if cfg.own_state {
        Err("--own-state".to_string())
    } else {
        track::keeper_state(&results, chain_id, gate).map(|_| ())
    };
    let state = match keeper {
        Ok(()) => {
            tracing::info!(results = %results.display(), "the floor reads the keeper's state database in the results folder (read-only)");
            track::StateDir::Keeper(results)
        }
        Err(why) => {
            let cache = cfg.cache.clone().unwrap_or_else(|| {
                let dir = default_cache(root, chain_id, gate);
                match tag {
                    Some(t) => {
                        prune_saved_caches(&dir, &t, SAVED_CACHES_KEPT);
                        dir.join(t)
                    }
                    None => dir,
                }
            });
            tracing::info!(results = %results.display(), state = %cache.display(), reason = %why, "no keeper's state to read: the floor follows the gate into its own state folder (a first start reads the whole record; later ones resume)");
            track::StateDir::Own { cache, seed: results }
        }
    };
    let src = Source {
        provider: provider.clone(),
        chain_id,
        gate,
        from,
        confirmations,
        log_range: cfg.log_range,
        state,
        mode,
    };
    let started = std::time::Instant::now();
    let mut tracker = Tracker::start(src, root).await?;
    let first = tracker.update().await?.expect("a tracker's first update always makes a snapshot");
    tracing::info!(
        gate = %gate,
        chain_id,
        decisions = first.status.decisions,
        head = first.status.head,
        secs = format!("{:.2}", started.elapsed().as_secs_f64()),
        "the floor read the record"
    );
    let (tx, rx) = watch::channel(Arc::new(first));

    let listener = tokio::net::TcpListener::bind(cfg.listen)
        .await
        .map_err(|source| ServeError::Bind { addr: cfg.listen, source })?;
    let addr = listener.local_addr().map_err(ServeError::Serve)?;
    println!("keeper serve: http://{addr}/");
    tracing::info!(%addr, "the floor is listening");
    let app = App {
        snap: rx,
        provider,
        cancel: cancel.clone(),
        from,
        log_range: cfg.log_range,
        results: strategies,
        checked: Default::default(),
    };
    let stop = cancel.clone();
    // The server runs on the runtime's workers; the follower (whose own state database
    // connection stays on one task) runs here until the floor stops.
    let served = tokio::spawn(async move {
        axum::serve(listener, router(app))
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
            .map_err(ServeError::Serve)
    });
    // The follower returns only once cancelled (a signal).
    follow(tracker, tx, cfg.poll, cancel.clone()).await;
    cancel.cancel();
    served.await.unwrap_or_else(|e| Err(ServeError::Serve(std::io::Error::other(e))))?;
    tracing::info!(%addr, "the floor stopped on a signal");
    Ok(())
}

/// How many saved chains' state folders the floor keeps per chain id and gate address under
/// `.cache/floor/` (each `make demo` makes a new saved chain at the same address): the ones
/// used most recently, this one included.
pub const SAVED_CACHES_KEPT: usize = 3;
/// The file whose time says when a saved chain's state folder was last used.
const USED_MARK: &str = "last-used";

/// Marks `dir/keep` as used now and removes the other `saved-*` folders of `dir` beyond the
/// `kept - 1` used most recently: without it every saved chain the floor was ever started on
/// left a full state database behind. Failures are logged, never fatal (a cache is a cache).
pub fn prune_saved_caches(dir: &Path, keep: &str, kept: usize) {
    let mark = dir.join(keep).join(USED_MARK);
    if let Err(e) =
        std::fs::create_dir_all(dir.join(keep)).and_then(|()| std::fs::write(&mark, b""))
    {
        tracing::warn!(path = %mark.display(), error = %e, "could not mark the floor's state folder as used");
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut others: Vec<(std::time::SystemTime, std::path::PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.starts_with("saved-") && name != keep && e.path().is_dir()
        })
        .map(|e| {
            let used = std::fs::metadata(e.path().join(USED_MARK))
                .or_else(|_| e.metadata())
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            (used, e.path())
        })
        .collect();
    others.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    for (_, stale) in others.into_iter().skip(kept.saturating_sub(1)) {
        match std::fs::remove_dir_all(&stale) {
            Ok(()) => {
                tracing::info!(path = %stale.display(), "removed the state folder of a saved chain not used recently")
            }
            Err(e) => {
                tracing::warn!(path = %stale.display(), error = %e, "could not remove an old state folder")
            }
        }
    }
}

/// Where the floor keeps its own state of a gate it follows without a keeper's:
/// `.cache/floor/<chain-id>/<gate>/` under the project root.
pub fn default_cache(
    root: &Path,
    chain_id: u64,
    gate: alloy::primitives::Address,
) -> std::path::PathBuf {
    root.join(".cache").join("floor").join(chain_id.to_string()).join(gate.to_checksum(None))
}

/// Polls the node and publishes each new snapshot; a failed read is logged and retried, the
/// last snapshot standing meanwhile.
async fn follow(
    mut tracker: Tracker,
    tx: watch::Sender<Arc<Snapshot>>,
    poll: Duration,
    cancel: CancellationToken,
) {
    let mut failing = false;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(poll) => {}
        }
        match tracker.update().await {
            Ok(Some(s)) => {
                failing = false;
                tx.send_replace(Arc::new(s));
            }
            Ok(None) => failing = false,
            Err(e) => {
                if !failing {
                    tracing::warn!(error = %crate::error_chain(&e), "the floor could not read the record; the page shows the last one read, and it retries");
                }
                failing = true;
            }
        }
    }
}

fn router(app: App) -> Router {
    Router::new()
        .route("/", get(floor_page))
        .route("/decision/{block}/{log_index}", get(decision_page))
        .route("/market/{address}", get(market_page))
        .route("/models", get(models_page))
        .route("/charts", get(charts_page))
        .route("/chart/decisions.svg", get(chart_svg))
        .route("/chart/{name}", get(chart_named))
        .route("/api/charts", get(api_charts))
        .route("/assets/floor.css", get(|| async { asset("text/css; charset=utf-8", CSS) }))
        .route("/assets/floor.js", get(|| async { asset("text/javascript; charset=utf-8", JS) }))
        .route("/api/status", get(api_status))
        .route("/api/gate", get(api_gate))
        .route("/api/decisions", get(api_decisions))
        .route("/api/decision/{block}/{log_index}", get(api_decision))
        .route("/api/market/{address}", get(api_market))
        .route("/api/models", get(api_models))
        .route("/api/calibration", get(api_calibration))
        .route("/api/offchain", get(api_offchain))
        .route("/events", get(events))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such page") })
        .layer(middleware::from_fn(guard))
        .with_state(app)
}

/// On every response: the CSP and the other headers that keep the page to itself. A request
/// target longer than [`MAX_TARGET_BYTES`] is refused before routing.
async fn guard(req: Request<axum::body::Body>, next: Next) -> Response {
    let long = req.uri().path_and_query().map_or(0, |p| p.as_str().len()) > MAX_TARGET_BYTES;
    let mut res = if long {
        error(
            StatusCode::URI_TOO_LONG,
            &format!("the request target is longer than {MAX_TARGET_BYTES} bytes"),
        )
    } else {
        next.run(req).await
    };
    let h = res.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    h.entry(header::CACHE_CONTROL).or_insert(HeaderValue::from_static("no-store"));
    res
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// An error as a page for a browser and as `{"error": …}` for the API.
fn error(status: StatusCode, message: &str) -> Response {
    (status, Html(html::error_page(status.as_u16(), message))).into_response()
}

fn api_error(status: StatusCode, message: &str) -> Response {
    (status, Json(serde_json::json!({ "error": message }))).into_response()
}

type Pairs = Result<Query<Vec<(String, String)>>, axum::extract::rejection::QueryRejection>;

/// The feed query of a request, or what was wrong with it.
fn feed_query(q: Pairs, reasons: usize) -> Result<FeedQuery, String> {
    let Query(pairs) = q.map_err(|e| format!("the query does not parse: {}", e.body_text()))?;
    FeedQuery::parse(&pairs, reasons).map_err(|e| e.0)
}

/// A JSON route that takes no query: `value()` as JSON, or a 400 for any query.
fn json_of<T: serde::Serialize>(q: &RawQuery, value: impl FnOnce() -> T) -> Response {
    match no_query(q) {
        Ok(()) => Json(value()).into_response(),
        Err(e) => api_error(StatusCode::BAD_REQUEST, &e),
    }
}

/// No query parameters are taken: any is a 400.
fn no_query(q: &RawQuery) -> Result<(), String> {
    match q.0.as_deref() {
        None | Some("") => Ok(()),
        Some(_) => Err("this route takes no query parameters".into()),
    }
}

/// A read of the state database that failed: a 500 that says so (the floor logs it).
fn unreadable(e: &crate::record::store::StoreError) -> (StatusCode, String) {
    tracing::warn!(error = %crate::error_chain(e), "the floor could not read the state database");
    (StatusCode::INTERNAL_SERVER_ERROR, "the record could not be read; see the floor's log".into())
}

/// The page `q` asks for, from the state database.
fn feed_page(s: &Snapshot, q: &FeedQuery) -> Result<view::Page, (StatusCode, String)> {
    let filter = q.filter();
    let got =
        s.db.read(|db| db.decisions_page(&filter, q.offset(), q.per_page as u64))
            .map_err(|e| unreadable(&e))?;
    let mut questions = std::collections::HashMap::new();
    for d in &got.rows {
        if !questions.contains_key(&d.market) {
            if let Some(text) = s.db.question(&d.market) {
                questions.insert(d.market.clone(), text);
            }
        }
    }
    Ok(view::page(got.total, &got.rows, q, &s.facts.labels, &questions, &s.symbol))
}

async fn floor_page(State(app): State<App>, q: Pairs) -> Response {
    let s = app.now();
    match feed_query(q, s.facts.labels.len()) {
        Ok(q) => match feed_page(&s, &q) {
            Ok(page) => Html(html::floor(&s, &q, &page)).into_response(),
            Err((code, e)) => error(code, &e),
        },
        Err(e) => error(StatusCode::BAD_REQUEST, &e),
    }
}

/// The decision at `(block, log_index)`, or the reason there is none.
fn find(
    s: &Snapshot,
    block: &str,
    log_index: &str,
) -> Result<crate::domain::decision::DecisionRow, (StatusCode, String)> {
    let parse = |v: &str, what: &str| {
        v.parse::<u64>()
            .map_err(|_| (StatusCode::BAD_REQUEST, format!("{what} {:?} is not a number", cut(v))))
    };
    let (b, l) = (parse(block, "block")?, parse(log_index, "log index")?);
    s.db.read(|db| db.decision_at((b, l)))
        .map_err(|e| unreadable(&e))?
        .ok_or_else(|| (StatusCode::NOT_FOUND, format!("no decision at block {b}, log {l}")))
}

fn cut(v: &str) -> String {
    v.chars().take(40).collect()
}

async fn decision_page(
    State(app): State<App>,
    UrlPath((block, log_index)): UrlPath<(String, String)>,
    q: RawQuery,
) -> Response {
    let s = app.now();
    if let Err(e) = no_query(&q) {
        return error(StatusCode::BAD_REQUEST, &e);
    }
    match find(&s, &block, &log_index) {
        Ok(d) => {
            let question = s.db.question(&d.market);
            let check = check_row(&app, &s, &d).await;
            Html(html::decision(&s, &d, question.as_deref(), &check)).into_response()
        }
        Err((code, e)) => error(code, &e),
    }
}

/// What `report --check` finds for this row and its closing rows, read again from the node at
/// the snapshot's confirmed block; Err says why it could not be checked.
async fn check_row(
    app: &App,
    s: &Snapshot,
    d: &crate::domain::decision::DecisionRow,
) -> Result<report::RowCheck, String> {
    let appended = s.db.read(|db| db.appended_at((d.block, d.log_index)));
    let (row, closings) = match appended {
        Ok(Some(found)) => found,
        Ok(None) => return Err("the row left the record (a reorg)".into()),
        Err(e) => return Err(crate::error_chain(&e)),
    };
    let key = serde_json::to_vec(&(&row, &closings))
        .map(alloy::primitives::keccak256)
        .map_err(|e| format!("the row does not serialise: {e}"))?;
    if let Some(done) = app.checked.lock().ok().and_then(|c| c.get(&key)) {
        return Ok(done);
    }
    let check = report::check_row(
        &app.provider,
        &s.facts,
        app.from,
        s.status.confirmed,
        app.log_range,
        &row,
        &closings,
        &app.results,
    )
    .await
    .map_err(|e| crate::error_chain(&e))?;
    if let Ok(mut c) = app.checked.lock() {
        c.put(key, check.clone());
    }
    Ok(check)
}

async fn api_decision(
    State(app): State<App>,
    UrlPath((block, log_index)): UrlPath<(String, String)>,
    q: RawQuery,
) -> Response {
    let s = app.now();
    if let Err(e) = no_query(&q) {
        return api_error(StatusCode::BAD_REQUEST, &e);
    }
    match find(&s, &block, &log_index) {
        Ok(d) => {
            let question = s.db.question(&d.market);
            let view = view::DecisionView::new(&d, &s.facts.labels, question.as_deref(), &s.symbol);
            Json(serde_json::json!({ "decision": view, "row": d })).into_response()
        }
        Err((code, e)) => api_error(code, &e),
    }
}

/// A market address from the path, checksummed, or a 400.
fn market_of(address: &str) -> Result<alloy::primitives::Address, String> {
    address.parse().map_err(|_| format!("{:?} is not an address", cut(address)))
}

/// The market's decisions, newest first (every one: a market has few).
fn market_rows(
    s: &Snapshot,
    market: alloy::primitives::Address,
) -> Result<view::Page, (StatusCode, String)> {
    let q = FeedQuery { market: Some(market), per_page: usize::MAX, ..Default::default() };
    let mut p = feed_page(s, &q)?;
    p.per_page = p.total;
    p.pages = 1;
    Ok(p)
}

async fn read_book(
    app: &App,
    s: &Snapshot,
    info: Option<&crate::chain::reads::MarketInfo>,
) -> Option<crate::chain::reads::MarketState> {
    crate::chain::reads::read_market(&app.provider, info?, s.status.head).await.ok()
}

async fn market_page(
    State(app): State<App>,
    UrlPath(address): UrlPath<String>,
    q: RawQuery,
) -> Response {
    let s = app.now();
    if let Err(e) = no_query(&q) {
        return error(StatusCode::BAD_REQUEST, &e);
    }
    let market = match market_of(&address) {
        Ok(m) => m,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    let key = market.to_checksum(None);
    let info = s.db.market(&key).map(|k| k.info);
    let book = read_book(&app, &s, info.as_ref()).await;
    let rows = match market_rows(&s, market) {
        Ok(r) => r,
        Err((code, e)) => return error(code, &e),
    };
    if rows.total == 0 && info.is_none() {
        return error(StatusCode::NOT_FOUND, &format!("the gate made no decision on {key}"));
    }
    Html(html::market(&s, &key, info.as_ref(), book.as_ref(), &rows)).into_response()
}

async fn api_market(
    State(app): State<App>,
    UrlPath(address): UrlPath<String>,
    q: RawQuery,
) -> Response {
    let s = app.now();
    if let Err(e) = no_query(&q) {
        return api_error(StatusCode::BAD_REQUEST, &e);
    }
    let market = match market_of(&address) {
        Ok(m) => m,
        Err(e) => return api_error(StatusCode::BAD_REQUEST, &e),
    };
    let key = market.to_checksum(None);
    let info = s.db.market(&key).map(|k| k.info);
    let rows = match market_rows(&s, market) {
        Ok(r) => r,
        Err((code, e)) => return api_error(code, &e),
    };
    if rows.total == 0 && info.is_none() {
        return api_error(StatusCode::NOT_FOUND, &format!("the gate made no decision on {key}"));
    }
    let book = read_book(&app, &s, info.as_ref()).await.map(|b| {
        let level = |l: &(alloy::primitives::U256, alloy::primitives::U256)| {
            serde_json::json!({ "price": view::prob(&l.0.to_string()), "quantity": l.1.to_string() })
        };
        serde_json::json!({
            "block": s.status.head,
            "finalized": b.finalized,
            "bids": b.bids.iter().map(level).collect::<Vec<_>>(),
            "asks": b.asks.iter().map(level).collect::<Vec<_>>(),
        })
    });
    Json(serde_json::json!({
        "market": key,
        "info": info,
        "book": book,
        "decisions": rows.decisions,
    }))
    .into_response()
}

async fn models_page(State(app): State<App>, q: RawQuery) -> Response {
    if let Err(e) = no_query(&q) {
        return error(StatusCode::BAD_REQUEST, &e);
    }
    Html(html::models(&app.now())).into_response()
}

async fn charts_page(State(app): State<App>, q: RawQuery) -> Response {
    if let Err(e) = no_query(&q) {
        return error(StatusCode::BAD_REQUEST, &e);
    }
    Html(html::charts(&app.now())).into_response()
}

async fn chart_svg(State(app): State<App>) -> Response {
    let s = app.now();
    let max = i128::try_from(s.facts.bounds.maxDrawdown).unwrap_or(i128::MAX);
    let svg = crate::record::chart::render_svg(&s.summary, &s.facts.labels, &s.facts.symbol, max);
    ([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response()
}

async fn chart_named(State(app): State<App>, UrlPath(name): UrlPath<String>) -> Response {
    let s = app.now();
    let series = &s.charts;
    let labels = &s.facts.labels;
    let svg = match name.as_str() {
        "pnl.svg" => plots::pnl_svg(series, &s.symbol),
        "drawdown.svg" => plots::drawdown_svg(series, &s.symbol),
        "reasons.svg" => plots::reasons_svg(series, labels),
        "rules.svg" => plots::rules_svg(series, labels),
        "calibration.svg" => plots::calibration_svg(&s.summary.calibration.view()),
        _ => return error(StatusCode::NOT_FOUND, "no such chart"),
    };
    ([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response()
}

async fn api_charts(State(app): State<App>, q: RawQuery) -> Response {
    json_of(&q, || app.now().charts.as_ref().clone())
}

async fn api_status(State(app): State<App>, q: RawQuery) -> Response {
    json_of(&q, || app.now().status.clone())
}

async fn api_gate(State(app): State<App>, q: RawQuery) -> Response {
    json_of(&q, || app.now().card.clone())
}

async fn api_decisions(State(app): State<App>, q: Pairs) -> Response {
    let s = app.now();
    match feed_query(q, s.facts.labels.len()) {
        Ok(q) => match feed_page(&s, &q) {
            Ok(page) => Json(page).into_response(),
            Err((code, e)) => api_error(code, &e),
        },
        Err(e) => api_error(StatusCode::BAD_REQUEST, &e),
    }
}

async fn api_models(State(app): State<App>, q: RawQuery) -> Response {
    json_of(&q, || serde_json::json!({ "models": app.now().summary.models_ranked() }))
}

async fn api_calibration(State(app): State<App>, q: RawQuery) -> Response {
    json_of(&q, || app.now().summary.calibration.view())
}

async fn api_offchain(State(app): State<App>, q: RawQuery) -> Response {
    if let Err(e) = no_query(&q) {
        return api_error(StatusCode::BAD_REQUEST, &e);
    }
    match app.now().db.read(|db| db.offchain_rows()) {
        Ok(rows) => {
            let rows: Vec<view::OffchainView> = rows.iter().rev().map(Into::into).collect();
            Json(serde_json::json!({ "total": rows.len(), "offchain": rows })).into_response()
        }
        Err(e) => {
            let (code, msg) = unreadable(&e);
            api_error(code, &msg)
        }
    }
}

/// What one `/events` connection has sent.
struct Stream {
    rx: watch::Receiver<Arc<Snapshot>>,
    cancel: CancellationToken,
    /// The newest decision sent (or there at the start).
    last: Option<(u64, u64)>,
    /// The newest row closing a position whose decisions were sent as settled (or there at the
    /// start).
    last_closing: Option<(u64, u64)>,
    queue: VecDeque<Event>,
}

/// Rows read from the state database per query while a stream catches up.
const STREAM_BATCH: u64 = 200;

impl Stream {
    fn new(rx: watch::Receiver<Arc<Snapshot>>, cancel: CancellationToken) -> Self {
        let s = rx.borrow().clone();
        let last = s.last_decision;
        let last_closing = s.db.read(|db| db.last_closing()).ok().flatten();
        let mut queue = VecDeque::new();
        queue.push_back(json_event("head", &s.status));
        Self { rx, cancel, last, last_closing, queue }
    }

    /// Queues what `s` holds that this connection has not been sent: the head, each new
    /// decision (oldest first), each decision a new row settled or wrote off. Rows are read
    /// from the state database after the last one sent, never the whole record.
    fn diff(&mut self, s: &Snapshot) {
        self.queue.push_back(json_event("head", &s.status));
        let labels = &s.facts.labels;
        let view = |d: &crate::domain::decision::DecisionRow| {
            let q = s.db.question(&d.market);
            view::DecisionView::new(d, labels, q.as_deref(), &s.symbol)
        };
        while self.last < s.last_decision {
            let Ok(rows) = s.db.read(|db| db.decisions_after(self.last, STREAM_BATCH)) else {
                break;
            };
            let Some(newest) = rows.last().map(|d| (d.block, d.log_index)) else { break };
            for d in &rows {
                self.queue.push_back(json_event("decision", &view(d)));
            }
            self.last = Some(newest);
        }
        loop {
            let Ok((rows, key)) = s.db.read(|db| db.closed_after(self.last_closing, STREAM_BATCH))
            else {
                break;
            };
            if key == self.last_closing {
                break;
            }
            for d in &rows {
                self.queue.push_back(json_event("settled", &view(d)));
            }
            self.last_closing = key;
        }
    }
}

fn json_event<T: serde::Serialize>(kind: &str, v: &T) -> Event {
    Event::default().event(kind).data(serde_json::to_string(v).unwrap_or_default())
}

async fn events(State(app): State<App>, q: RawQuery) -> Response {
    if let Err(e) = no_query(&q) {
        return api_error(StatusCode::BAD_REQUEST, &e);
    }
    let state = Stream::new(app.snap.clone(), app.cancel.clone());
    let stream = futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(e) = st.queue.pop_front() {
                return Some((Ok::<_, Infallible>(e), st));
            }
            tokio::select! {
                _ = st.cancel.cancelled() => return None,
                changed = st.rx.changed() => {
                    changed.ok()?;
                    let s = st.rx.borrow_and_update().clone();
                    st.diff(&s);
                }
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decision pages' check cache holds at most CHECKS_KEPT rows, dropping the oldest.
    #[test]
    fn the_check_cache_is_bounded() {
        let mut c = CheckCache::default();
        let check = report::RowCheck {
            event_problems: vec![],
            not_yet_appended: 0,
            answer_matches: None,
            prompt: Ok(()),
            settlement: None,
            consensus: None,
        };
        let key = |i: usize| alloy::primitives::keccak256(i.to_be_bytes());
        for i in 0..CHECKS_KEPT + 10 {
            c.put(key(i), check.clone());
            c.put(key(i), check.clone()); // a second put of one row takes no second place
        }
        assert_eq!(c.map.len(), CHECKS_KEPT);
        assert_eq!(c.order.len(), CHECKS_KEPT);
        assert!(c.get(&key(9)).is_none(), "the oldest went first");
        assert!(c.get(&key(10)).is_some() && c.get(&key(CHECKS_KEPT + 9)).is_some());
    }

    /// Six saved chains started one after another (each `make demo` makes one): only the three
    /// used last remain, the one starting now among them; a folder that is not a saved chain's
    /// is never touched.
    #[test]
    fn old_saved_chain_folders_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("mine")).unwrap();
        for i in 0..6u64 {
            let name = format!("saved-{i}");
            prune_saved_caches(dir.path(), &name, SAVED_CACHES_KEPT);
            std::fs::write(dir.path().join(&name).join("state.sqlite"), b"x").unwrap();
            // Distinct use times, oldest first, without waiting on the clock.
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000 + i);
            std::fs::File::options()
                .write(true)
                .open(dir.path().join(&name).join(USED_MARK))
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        left.sort();
        // At the sixth start: itself plus the two used last before it (saved-4, saved-3).
        assert_eq!(left, ["mine", "saved-3", "saved-4", "saved-5"]);
    }

    #[tokio::test]
    async fn the_floor_refuses_to_listen_beyond_loopback() {
        let chain = crate::domain::config::ChainConfig {
            rpc_url: "http://127.0.0.1:1".parse().unwrap(),
            expected_chain_id: None,
        };
        for listen in ["0.0.0.0:8080", "[::]:8080", "192.168.1.10:8080"] {
            let cfg = ServeConfig {
                source: ReportSource::Chain { chain: chain.clone(), gate: None },
                listen: listen.parse().unwrap(),
                results: None,
                from_block: None,
                log_range: 5_000,
                confirmations: None,
                poll: Duration::from_millis(250),
                cache: None,
                own_state: false,
            };
            // Refused before anything is read or bound (the RPC above is never asked).
            let e = run(&cfg, Path::new("."), Path::new("anvil"), CancellationToken::new())
                .await
                .unwrap_err();
            assert!(matches!(e, ServeError::NotLoopback(_)), "{listen}: {e}");
            assert!(e.to_string().contains("loopback address only"), "{e}");
        }
    }
}
