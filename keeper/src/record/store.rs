//! The keeper's state beside its record: `state.sqlite` (SQLite, WAL) in the results folder.
//!
//! It is state, not the published record: it is not committed, and it is rebuilt from the chain,
//! the journal and the feed on disk if it is lost ([`Store::open`] says which it did). It holds
//! what a restart would otherwise re-derive from the whole history:
//! - `meta`: the owner (chain id and gate, refused for another), the follower's checkpoints and
//!   scan cursor, the feed's state (bytes, lines, last row's key, head hash), the journal's
//!   checkpoint, and the aggregates RESULTS.md and the chart are rendered from;
//! - `markets`: every market the follower knows, inserted once;
//! - `logs`: the gate's logs whose rows are not yet in the feed, or whose position is open (the
//!   hot set: what the in-memory record is rebuilt from, so a closing row can name the
//!   decisions it closes);
//! - `decisions` and `offchain`: every row appended to the feed, with the columns the floor
//!   filters on, and off-chain rows waiting for the feed to reach their block;
//! - `last_asked`: chain time of the latest decision per market (the re-ask timer);
//! - `closings`: every settlement, write-off and late payout row appended to the feed.
//!
//! With the released off-chain rows, `decisions` and `closings` are the feed's rows
//! ([`Store::rows`]).
//!
//! One write per cycle, in one transaction: after a crash the state is the previous cycle's or
//! this one's, never half of each.

use alloy::primitives::Address;
use rusqlite::{params, Connection, OptionalExtension};
use serde::{de::DeserializeOwned, Serialize};
use std::path::{Path, PathBuf};

/// File name of the state database inside a results folder.
pub const STATE_FILE: &str = "state.sqlite";

/// Bumped when the tables change; a database of another version is rebuilt from the chain.
const SCHEMA: i64 = 4;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state database {path}: {action}")]
    Sql {
        path: String,
        action: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("state database {path} holds a {what} value that does not decode")]
    Decode {
        path: String,
        what: String,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "state database {path} belongs to {found}, not {expected}: point --results at this \
         gate's folder (the default is results/<chain-id>/<gate>/)"
    )]
    Foreign { path: String, found: String, expected: String },
    #[error("state database {path} cannot be read as this keeper's: {why}")]
    Unusable { path: String, why: String },
}

impl crate::domain::exit::Classify for StoreError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            // --results names another gate's folder, or a database this keeper cannot use.
            Self::Foreign { .. } | Self::Unusable { .. } | Self::Decode { .. } => Input,
            Self::Sql { .. } => Runtime,
        }
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

impl StoreError {
    /// A value read from the store that does not decode as `what`.
    pub fn decode(what: &str, source: serde_json::Error) -> Self {
        Self::Decode { path: STATE_FILE.into(), what: what.into(), source }
    }
}

/// How [`Store::open`] found the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// It was there, of this gate and schema: the keeper resumes from it.
    Resumed,
    /// There was none (a first start, or it was lost): the caller rebuilds it.
    Created,
    /// It was of another schema version, or unreadable: moved aside and rebuilt.
    Replaced,
}

pub struct Store {
    pub(super) conn: Connection,
    /// Shown in errors (":memory:" for a keeper that keeps no record).
    pub(super) name: String,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("name", &self.name).finish()
    }
}

fn owner_text(chain_id: u64, gate: Address) -> String {
    format!("chain {chain_id}, gate {}", gate.to_checksum(None))
}

impl Store {
    /// Opens (creating) `dir/state.sqlite` for `gate` on `chain_id`. A database of another
    /// chain or gate is refused; one of another schema (or that SQLite cannot read) is moved
    /// aside as `state.sqlite.old` and a new one created, to be rebuilt by the caller.
    pub fn open(dir: &Path, chain_id: u64, gate: Address) -> Result<(Self, Opened)> {
        let path = dir.join(STATE_FILE);
        let existed = path.exists();
        match Self::open_path(&path, chain_id, gate, existed) {
            Ok(s) => Ok(s),
            Err(e @ StoreError::Foreign { .. }) => Err(e),
            Err(e) if existed => {
                tracing::warn!(state = %path.display(), error = %crate::error_chain(&e), "the state database is unreadable or of another version: moved aside and rebuilt from the chain and the journal");
                let aside = PathBuf::from(format!("{}.old", path.display()));
                for suffix in ["", "-wal", "-shm"] {
                    let from = PathBuf::from(format!("{}{suffix}", path.display()));
                    let to = PathBuf::from(format!("{}{suffix}", aside.display()));
                    let _ = std::fs::rename(&from, &to);
                }
                let (s, _) = Self::open_path(&path, chain_id, gate, false)?;
                Ok((s, Opened::Replaced))
            }
            Err(e) => Err(e),
        }
    }

    fn open_path(
        path: &Path,
        chain_id: u64,
        gate: Address,
        existed: bool,
    ) -> Result<(Self, Opened)> {
        let name = path.display().to_string();
        let shown = name.clone();
        let sql = move |action| {
            let path = shown.clone();
            move |source| StoreError::Sql { path, action, source }
        };
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let conn = Connection::open(path).map_err(sql("open"))?;
        // WAL: a cycle's write is one transaction appended to the log; FULL: it is on disk when
        // the commit returns (the feed it describes was fsynced before).
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql("set WAL mode"))?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(sql("set synchronous"))?;
        let store = Self { conn, name };
        let version: i64 = store
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(sql("read version"))?;
        if existed && version != SCHEMA {
            return Err(StoreError::Sql {
                path: store.name.clone(),
                action: "schema version",
                source: rusqlite::Error::InvalidQuery,
            });
        }
        store.create()?;
        let expected = owner_text(chain_id, gate);
        match store.meta::<String>("owner")? {
            Some(found) if found != expected => {
                return Err(StoreError::Foreign { path: store.name.clone(), found, expected })
            }
            Some(_) if existed && store.meta::<bool>("complete")?.unwrap_or(false) => {
                return Ok((store, Opened::Resumed));
            }
            _ => {}
        }
        // New, or a rebuild that never completed: start empty.
        store.clear()?;
        store.set_meta("owner", &expected)?;
        Ok((store, Opened::Created))
    }

    /// A store in memory (a keeper that keeps no record; `report`'s rebuild).
    pub fn in_memory(chain_id: u64, gate: Address) -> Result<Self> {
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Sql {
            path: ":memory:".into(),
            action: "open",
            source,
        })?;
        let store = Self { conn, name: ":memory:".into() };
        store.create()?;
        store.set_meta("owner", &owner_text(chain_id, gate))?;
        Ok(store)
    }

    pub(super) fn err(&self, action: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |source| StoreError::Sql { path: self.name.clone(), action, source }
    }

    fn create(&self) -> Result<()> {
        self.conn
            .execute_batch(
                "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS markets (address TEXT PRIMARY KEY, seen_at INTEGER NOT NULL, info TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS logs (block INTEGER NOT NULL, log_index INTEGER NOT NULL, hot INTEGER NOT NULL DEFAULT 1, log TEXT NOT NULL, PRIMARY KEY (block, log_index));
                 CREATE INDEX IF NOT EXISTS logs_hot ON logs (hot, block, log_index);
                 CREATE TABLE IF NOT EXISTS decisions (
                    block INTEGER NOT NULL, log_index INTEGER NOT NULL, tx TEXT NOT NULL,
                    market TEXT NOT NULL, verdict INTEGER NOT NULL, reason INTEGER NOT NULL,
                    model TEXT, scenario TEXT, time INTEGER NOT NULL, drawdown INTEGER,
                    row TEXT NOT NULL,
                    PRIMARY KEY (block, log_index));
                 CREATE INDEX IF NOT EXISTS decisions_reason ON decisions (reason, block, log_index);
                 CREATE INDEX IF NOT EXISTS decisions_verdict ON decisions (verdict, block, log_index);
                 CREATE INDEX IF NOT EXISTS decisions_market ON decisions (market, block, log_index);
                 CREATE INDEX IF NOT EXISTS decisions_model ON decisions (model, block, log_index);
                 CREATE INDEX IF NOT EXISTS decisions_scenario ON decisions (scenario, block, log_index);
                 CREATE INDEX IF NOT EXISTS decisions_time ON decisions (time, reason);
                 CREATE INDEX IF NOT EXISTS decisions_drawdown ON decisions (time, drawdown) WHERE drawdown IS NOT NULL;
                 CREATE INDEX IF NOT EXISTS decisions_tx ON decisions (tx);
                 CREATE TABLE IF NOT EXISTS closes (tx TEXT NOT NULL, log_index INTEGER NOT NULL, closing_block INTEGER NOT NULL, closing_index INTEGER NOT NULL, PRIMARY KEY (tx, log_index, closing_block, closing_index));
                 CREATE INDEX IF NOT EXISTS closes_closing ON closes (closing_block, closing_index);
                 CREATE TABLE IF NOT EXISTS offchain (seq INTEGER PRIMARY KEY, block INTEGER NOT NULL, row TEXT NOT NULL, released INTEGER NOT NULL DEFAULT 0);
                 CREATE TABLE IF NOT EXISTS last_asked (market TEXT PRIMARY KEY, time INTEGER NOT NULL);
                 CREATE TABLE IF NOT EXISTS closings (block INTEGER NOT NULL, log_index INTEGER NOT NULL, row TEXT NOT NULL, PRIMARY KEY (block, log_index));",
            )
            .map_err(self.err("create tables"))?;
        self.conn.pragma_update(None, "user_version", SCHEMA).map_err(self.err("set version"))
    }

    /// Forgets everything but the owner (the state is rebuilt).
    pub fn clear_all(&self) -> Result<()> {
        let owner: Option<String> = self.meta("owner")?;
        self.clear()?;
        if let Some(o) = owner {
            self.set_meta("owner", &o)?;
        }
        Ok(())
    }

    fn clear(&self) -> Result<()> {
        self.conn
            .execute_batch(
                "DELETE FROM meta; DELETE FROM markets; DELETE FROM logs; DELETE FROM decisions;
                 DELETE FROM offchain; DELETE FROM last_asked; DELETE FROM closings;
                 DELETE FROM closes;",
            )
            .map_err(self.err("clear"))
    }

    /// A value of `meta`, JSON-decoded.
    pub fn meta<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(self.err("read meta"))?;
        text.map(|t| self.decode(key, &t)).transpose()
    }

    pub fn set_meta<T: Serialize + ?Sized>(&self, key: &str, value: &T) -> Result<()> {
        let text = serde_json::to_string(value).expect("state values always serialize");
        self.conn
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![key, text],
            )
            .map_err(self.err("write meta"))?;
        Ok(())
    }

    pub(super) fn decode<T: DeserializeOwned>(&self, what: &str, text: &str) -> Result<T> {
        serde_json::from_str(text).map_err(|source| StoreError::Decode {
            path: self.name.clone(),
            what: what.to_string(),
            source,
        })
    }

    /// Runs `f` in one transaction: all of its writes land, or none do.
    pub fn atomically<T>(&mut self, f: impl FnOnce(&Store) -> Result<T>) -> Result<T> {
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(self.err("begin"))?;
        match f(self) {
            Ok(v) => {
                self.conn.execute_batch("COMMIT").map_err(self.err("commit"))?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    // --- markets -------------------------------------------------------------------------

    pub fn add_market<T: Serialize>(&self, address: Address, seen_at: u64, info: &T) -> Result<()> {
        let text = serde_json::to_string(info).expect("markets always serialize");
        self.conn
            .execute(
                "INSERT OR REPLACE INTO markets (address, seen_at, info) VALUES (?1, ?2, ?3)",
                params![address.to_string(), sqlint(seen_at), text],
            )
            .map_err(self.err("write a market"))?;
        Ok(())
    }

    /// One market, if known.
    pub fn market<T: DeserializeOwned>(&self, address: Address) -> Result<Option<T>> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT info FROM markets WHERE address = ?1",
                params![address.to_string()],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.err("read a market"))?;
        text.map(|t| self.decode("market", &t)).transpose()
    }

    /// Every market known, with the block it was seen at, oldest first.
    pub fn markets<T: DeserializeOwned>(&self) -> Result<Vec<(u64, T)>> {
        let mut q = self
            .conn
            .prepare("SELECT seen_at, info FROM markets ORDER BY rowid")
            .map_err(self.err("read markets"))?;
        let rows = q
            .query_map([], |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?)))
            .map_err(self.err("read markets"))?;
        let mut out = Vec::new();
        for row in rows {
            let (seen, text) = row.map_err(self.err("read markets"))?;
            out.push((seen, self.decode("market", &text)?));
        }
        Ok(out)
    }

    pub fn forget_markets_after(&self, block: u64) -> Result<()> {
        self.conn
            .execute("DELETE FROM markets WHERE seen_at > ?1", [sqlint(block)])
            .map_err(self.err("forget markets"))?;
        Ok(())
    }

    // --- the gate's logs ----------------------------------------------------------------

    /// Keeps one of the gate's logs (hot: the collector holds it in memory).
    pub fn add_log(&self, log: &alloy::rpc::types::Log) -> Result<()> {
        let text = serde_json::to_string(log).expect("logs always serialize");
        let (b, i) = (log.block_number.unwrap_or_default(), log.log_index.unwrap_or_default());
        self.conn
            .execute(
                "INSERT OR REPLACE INTO logs (block, log_index, hot, log) VALUES (?1, ?2, 1, ?3)",
                params![sqlint(b), sqlint(i), text],
            )
            .map_err(self.err("write a log"))?;
        Ok(())
    }

    /// The log at (`block`, `log_index`) left memory.
    pub fn cool_log(&self, block: u64, log_index: u64) -> Result<()> {
        self.conn
            .execute(
                "UPDATE logs SET hot = 0 WHERE block = ?1 AND log_index = ?2",
                params![sqlint(block), sqlint(log_index)],
            )
            .map_err(self.err("cool a log"))?;
        Ok(())
    }

    fn read_logs(&self, sql: &str, arg: i64) -> Result<Vec<alloy::rpc::types::Log>> {
        let mut q = self.conn.prepare(sql).map_err(self.err("read logs"))?;
        let rows = q.query_map([arg], |r| r.get::<_, String>(0)).map_err(self.err("read logs"))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(self.decode("log", &row.map_err(self.err("read logs"))?)?);
        }
        Ok(out)
    }

    /// The hot logs, in chain order.
    pub fn hot_logs(&self) -> Result<Vec<alloy::rpc::types::Log>> {
        self.read_logs("SELECT log FROM logs WHERE hot = ?1 ORDER BY block, log_index", 1)
    }

    /// Every log up to `block`, in chain order.
    pub fn all_logs(&self, block: u64) -> Result<Vec<alloy::rpc::types::Log>> {
        self.read_logs(
            "SELECT log FROM logs WHERE block <= ?1 ORDER BY block, log_index",
            sqlint(block),
        )
    }

    pub fn forget_logs_after(&self, block: u64) -> Result<()> {
        self.conn
            .execute("DELETE FROM logs WHERE block > ?1", [sqlint(block)])
            .map_err(self.err("forget logs"))?;
        Ok(())
    }

    /// Opens `dir/state.sqlite` to read only (a view of a running keeper's record, a test);
    /// None when there is none.
    pub fn open_read(dir: &Path) -> Result<Option<Self>> {
        let path = dir.join(STATE_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let name = path.display().to_string();
        let conn =
            Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .map_err(|source| StoreError::Sql { path: name.clone(), action: "open", source })?;
        Ok(Some(Self { conn, name }))
    }

    /// Opens `dir/state.sqlite` to read only, if it is a complete state of `gate` on
    /// `chain_id` in this keeper's schema (a view of a running keeper's record): None when there
    /// is none, an error saying what is wrong with one that is not.
    pub fn open_state(dir: &Path, chain_id: u64, gate: Address) -> Result<Option<Self>> {
        let Some(store) = Self::open_read(dir)? else { return Ok(None) };
        let unusable = |why: String| StoreError::Unusable { path: store.name.clone(), why };
        let version: i64 = store
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(store.err("read version"))?;
        if version != SCHEMA {
            return Err(unusable(format!(
                "it is of schema {version}, this keeper's is {SCHEMA} (the keeper rebuilds it on \
                 its next start)"
            )));
        }
        let expected = owner_text(chain_id, gate);
        match store.meta::<String>("owner")? {
            Some(found) if found == expected => {}
            found => {
                return Err(unusable(format!(
                    "it belongs to {}, not {expected}",
                    found.unwrap_or_else(|| "no gate".into())
                )))
            }
        }
        if !store.meta::<bool>("complete")?.unwrap_or(false) {
            return Err(unusable("its first build has not completed".into()));
        }
        Ok(Some(store))
    }

    /// The feed's state as the last write recorded it (its length, last row and head hash), as
    /// text: it changes exactly when rows are appended or the feed is rewritten.
    pub fn feed_mark(&self) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = 'feed'", [], |r| r.get(0))
            .optional()
            .map_err(self.err("read the feed's state"))
    }

    /// SQLite's data version: it moves whenever another connection commits a write.
    pub fn data_version(&self) -> Result<i64> {
        self.conn
            .pragma_query_value(None, "data_version", |r| r.get(0))
            .map_err(self.err("read the data version"))
    }

    /// The feed's rows, in feed order, as the state database holds them: decisions, the rows
    /// closing their positions, and the off-chain rows appended.
    pub fn rows(&self) -> Result<Vec<crate::domain::decision::FeedRow>> {
        use crate::domain::decision::FeedRow;
        use crate::domain::decision::{DecisionRow, OffchainRow};
        fn decode<T: DeserializeOwned>(what: &str, t: &str) -> Result<T> {
            serde_json::from_str(t).map_err(|e| StoreError::decode(what, e))
        }
        let mut rows = Vec::new();
        for t in self.decision_rows(0)? {
            rows.push(FeedRow::Decision(decode::<DecisionRow>("decision row", &t)?));
        }
        for t in
            self.texts("SELECT row FROM closings ORDER BY block, log_index", "read closing rows")?
        {
            rows.push(decode::<FeedRow>("closing row", &t)?);
        }
        for t in self.texts(
            "SELECT row FROM offchain WHERE released = 1 ORDER BY seq",
            "read off-chain rows",
        )? {
            rows.push(FeedRow::Offchain(decode::<OffchainRow>("off-chain row", &t)?));
        }
        // Stable: off-chain rows of one block keep their order, after its chain rows.
        rows.sort_by_key(FeedRow::sort_key);
        Ok(rows)
    }

    /// The one text column of each row `sql` selects.
    fn texts(&self, sql: &str, action: &'static str) -> Result<Vec<String>> {
        let mut q = self.conn.prepare(sql).map_err(self.err(action))?;
        let rows = q.query_map([], |r| r.get::<_, String>(0)).map_err(self.err(action))?;
        rows.collect::<std::result::Result<_, _>>().map_err(self.err(action))
    }

    /// Records a settlement, write-off or late payout row appended to the feed, `text` its
    /// JSON, and which decisions it closes (for a view to join them).
    pub fn add_closing(
        &self,
        closing: &crate::domain::decision::FeedRow,
        text: &str,
    ) -> Result<()> {
        let (block, _, index) = closing.sort_key();
        self.conn
            .execute(
                "INSERT OR REPLACE INTO closings (block, log_index, row) VALUES (?1, ?2, ?3)",
                params![sqlint(block), sqlint(index), text],
            )
            .map_err(self.err("write a closing row"))?;
        for r in closing.closes() {
            self.conn
                .execute(
                    "INSERT OR IGNORE INTO closes (tx, log_index, closing_block, closing_index)
                     VALUES (?1, ?2, ?3, ?4)",
                    params![r.tx, sqlint(r.log_index), sqlint(block), sqlint(index)],
                )
                .map_err(self.err("write what a closing row closes"))?;
        }
        Ok(())
    }

    // --- rows in the feed ----------------------------------------------------------------

    /// Records a decision row appended to the feed (`text`, its JSON).
    pub fn add_decision(&self, d: &crate::domain::decision::DecisionRow, text: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO decisions (block, log_index, tx, market, verdict, reason, model, scenario, time, drawdown, row)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    sqlint(d.block),
                    sqlint(d.log_index),
                    d.tx,
                    d.market,
                    d.verdict,
                    d.reason,
                    d.note.model,
                    d.note.scenario,
                    sqlint(d.time),
                    crate::record::summary::drawdown(d)
                        .map(|v| i64::try_from(v).unwrap_or(i64::MAX)),
                    text
                ],
            )
            .map_err(self.err("write a decision"))?;
        Ok(())
    }

    /// Decision rows in the feed, in feed order (for a rebuild of the aggregates or a view).
    pub fn decision_rows(&self, after_block: u64) -> Result<Vec<String>> {
        let mut q = self
            .conn
            .prepare("SELECT row FROM decisions WHERE block > ?1 ORDER BY block, log_index")
            .map_err(self.err("read decisions"))?;
        let rows = q
            .query_map([sqlint(after_block)], |r| r.get::<_, String>(0))
            .map_err(self.err("read decisions"))?;
        rows.collect::<std::result::Result<_, _>>().map_err(self.err("read decisions"))
    }

    pub fn decision_count(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM decisions", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.err("count decisions"))
    }

    /// Whether the decision published by `tx` is in the feed.
    pub fn has_decision_tx(&self, tx: &str) -> Result<bool> {
        self.conn
            .query_row("SELECT 1 FROM decisions WHERE tx = ?1 LIMIT 1", [tx], |_| Ok(()))
            .optional()
            .map(|o| o.is_some())
            .map_err(self.err("find a decision"))
    }

    /// Drops decision rows after `block` (a reorg deeper than the feed).
    pub fn forget_decisions_after(&self, block: u64) -> Result<Vec<String>> {
        let mut q = self
            .conn
            .prepare("SELECT tx FROM decisions WHERE block > ?1")
            .map_err(self.err("forget decisions"))?;
        let txs: Vec<String> = q
            .query_map([sqlint(block)], |r| r.get(0))
            .map_err(self.err("forget decisions"))?
            .collect::<std::result::Result<_, _>>()
            .map_err(self.err("forget decisions"))?;
        self.conn
            .execute("DELETE FROM decisions WHERE block > ?1", [sqlint(block)])
            .map_err(self.err("forget decisions"))?;
        self.conn
            .execute("DELETE FROM closings WHERE block > ?1", [sqlint(block)])
            .map_err(self.err("forget closing rows"))?;
        self.conn
            .execute("DELETE FROM closes WHERE closing_block > ?1", [sqlint(block)])
            .map_err(self.err("forget closing rows"))?;
        Ok(txs)
    }

    // --- off-chain rows ------------------------------------------------------------------

    /// Keeps an off-chain row, once: `at` is the offset of its journal line, its identity.
    pub fn add_offchain(&self, at: u64, block: u64, row: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO offchain (seq, block, row) VALUES (?1, ?2, ?3)",
                params![sqlint(at), sqlint(block), row],
            )
            .map_err(self.err("write an off-chain row"))?;
        Ok(())
    }

    /// Off-chain rows not yet in the feed, in the order they happened.
    pub fn waiting_offchain(&self) -> Result<Vec<(i64, String)>> {
        let mut q = self
            .conn
            .prepare("SELECT seq, row FROM offchain WHERE released = 0 ORDER BY seq")
            .map_err(self.err("read off-chain rows"))?;
        let rows = q
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.err("read off-chain rows"))?;
        rows.collect::<std::result::Result<_, _>>().map_err(self.err("read off-chain rows"))
    }

    pub fn release_offchain(&self, seq: i64) -> Result<()> {
        self.conn
            .execute("UPDATE offchain SET released = 1 WHERE seq = ?1", [seq])
            .map_err(self.err("release an off-chain row"))?;
        Ok(())
    }

    /// Off-chain rows already in the feed after `block` go back to waiting (the feed was cut
    /// back to `block`).
    pub fn unrelease_offchain_after(&self, block: u64) -> Result<()> {
        self.conn
            .execute("UPDATE offchain SET released = 0 WHERE block > ?1", [sqlint(block)])
            .map_err(self.err("reopen off-chain rows"))?;
        Ok(())
    }

    pub fn offchain_count(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM offchain", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.err("count off-chain rows"))
    }

    // --- the re-ask timer ----------------------------------------------------------------

    pub fn set_last_asked(&self, market: Address, time: u64) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO last_asked (market, time) VALUES (?1, ?2)
                 ON CONFLICT(market) DO UPDATE SET time = max(time, excluded.time)",
                params![market.to_string(), sqlint(time)],
            )
            .map_err(self.err("write a re-ask time"))?;
        Ok(())
    }

    /// Sets a market's re-ask time back to `time` (a reorg removed the later decisions; 0:
    /// never asked).
    pub fn reset_last_asked(&self, market: Address, time: u64) -> Result<()> {
        self.conn
            .execute("DELETE FROM last_asked WHERE market = ?1", [market.to_string()])
            .map_err(self.err("reset a re-ask time"))?;
        if time > 0 {
            self.set_last_asked(market, time)?;
        }
        Ok(())
    }

    pub fn last_asked(&self) -> Result<Vec<(Address, u64)>> {
        let mut q = self
            .conn
            .prepare("SELECT market, time FROM last_asked")
            .map_err(self.err("read re-ask times"))?;
        let rows = q
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))
            .map_err(self.err("read re-ask times"))?;
        let mut out = Vec::new();
        for row in rows {
            let (m, t) = row.map_err(self.err("read re-ask times"))?;
            if let Ok(m) = m.parse() {
                out.push((m, t));
            }
        }
        Ok(out)
    }

    /// The database's size on disk, the WAL included (for the bench).
    pub fn disk_bytes(dir: &Path) -> u64 {
        ["", "-wal"]
            .iter()
            .filter_map(|s| std::fs::metadata(dir.join(format!("{STATE_FILE}{s}"))).ok())
            .map(|m| m.len())
            .sum()
    }

    /// Marks the state complete: a later open resumes from it instead of rebuilding.
    pub fn mark_complete(&self) -> Result<()> {
        self.set_meta("complete", &true)
    }
}

/// A block number, index or time as SQLite's integer: values past i64::MAX (u64::MAX for "every
/// block") saturate instead of wrapping negative.
pub(super) fn sqlint(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
