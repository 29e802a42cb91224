//! Reads of the state database for a view of the record (the floor): a page of the feed's
//! decisions under a filter, one decision, what arrived after a key, and the aggregates a chart
//! draws. Each decision comes back with the rows closing its position attached, by the feed's
//! own join ([`feed::joined`]), so a view and `report` cannot disagree about a row.
//!
//! Every read here is bounded by what it returns, not by the record's length, except
//! [`Store::reason_buckets`] and [`Store::drawdown_line`], which walk one small index (two
//! integers a row) and are read once per change of the record, never per request.

use super::{
    feed,
    store::{sqlint, Result, Store},
};
use crate::domain::decision::{DecisionRow, FeedRow, OffchainRow};
use rusqlite::{params_from_iter, types::Value, OptionalExtension};
use std::collections::BTreeMap;

/// Which decisions a view asks for; each field left None filters nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowFilter {
    pub reason: Option<u8>,
    pub verdict: Option<u8>,
    /// The market, checksummed as the rows hold it.
    pub market: Option<String>,
    pub model: Option<String>,
    pub scenario: Option<String>,
}

impl RowFilter {
    /// The WHERE clause and its values.
    fn clause(&self) -> (String, Vec<Value>) {
        let mut parts = Vec::new();
        let mut values = Vec::new();
        let mut add = |column: &str, v: Value| {
            values.push(v);
            parts.push(format!("{column} = ?{}", values.len()));
        };
        if let Some(r) = self.reason {
            add("reason", Value::Integer(r.into()));
        }
        if let Some(v) = self.verdict {
            add("verdict", Value::Integer(v.into()));
        }
        if let Some(m) = &self.market {
            add("market", Value::Text(m.clone()));
        }
        if let Some(m) = &self.model {
            add("model", Value::Text(m.clone()));
        }
        if let Some(s) = &self.scenario {
            add("scenario", Value::Text(s.clone()));
        }
        let clause =
            if parts.is_empty() { String::new() } else { format!("WHERE {}", parts.join(" AND ")) };
        (clause, values)
    }
}

/// One page of decisions, newest first, and how many pass the filter.
#[derive(Debug, Clone, Default)]
pub struct RowsPage {
    pub total: u64,
    pub rows: Vec<DecisionRow>,
}

/// A decision's place in the feed: (block, log index).
pub type RowKey = (u64, u64);

impl Store {
    /// `limit` decisions passing `filter`, newest first, after skipping `offset` of them.
    pub fn decisions_page(&self, filter: &RowFilter, offset: u64, limit: u64) -> Result<RowsPage> {
        let (clause, values) = filter.clause();
        let total: i64 = self
            .conn
            .query_row(
                &format!("SELECT COUNT(*) FROM decisions {clause}"),
                params_from_iter(values.iter()),
                |r| r.get(0),
            )
            .map_err(self.err("count decisions"))?;
        let n = values.len();
        let mut all = values;
        all.push(Value::Integer(sqlint(limit)));
        all.push(Value::Integer(sqlint(offset)));
        let texts = self.row_texts(
            &format!(
                "SELECT row FROM decisions {clause} ORDER BY block DESC, log_index DESC \
                 LIMIT ?{} OFFSET ?{}",
                n + 1,
                n + 2
            ),
            all,
        )?;
        let mut rows = self.joined(texts)?;
        rows.reverse();
        Ok(RowsPage { total: total as u64, rows })
    }

    /// The decision at `key`, with what closed its position.
    pub fn decision_at(&self, key: RowKey) -> Result<Option<DecisionRow>> {
        let texts = self.row_texts(
            "SELECT row FROM decisions WHERE block = ?1 AND log_index = ?2",
            vec![Value::Integer(sqlint(key.0)), Value::Integer(sqlint(key.1))],
        )?;
        Ok(self.joined(texts)?.pop())
    }

    /// The decision at `key` as the feed holds it, and the rows closing its position, as the
    /// feed holds them (what a check compares with the chain).
    pub fn appended_at(&self, key: RowKey) -> Result<Option<(DecisionRow, Vec<FeedRow>)>> {
        let texts = self.row_texts(
            "SELECT row FROM decisions WHERE block = ?1 AND log_index = ?2",
            vec![Value::Integer(sqlint(key.0)), Value::Integer(sqlint(key.1))],
        )?;
        let Some(text) = texts.first() else { return Ok(None) };
        let d: DecisionRow = self.decode("decision row", text)?;
        let mut closings = Vec::new();
        for c in self.closing_texts(&d)? {
            closings.push(self.decode::<FeedRow>("closing row", &c)?);
        }
        closings.sort_by_key(FeedRow::sort_key);
        Ok(Some((d, closings)))
    }

    /// Up to `limit` decisions after `key` (all from the first without one), oldest first.
    pub fn decisions_after(&self, key: Option<RowKey>, limit: u64) -> Result<Vec<DecisionRow>> {
        let (b, i) = key.map_or((-1, -1), |(b, i)| (sqlint(b), sqlint(i)));
        let texts = self.row_texts(
            "SELECT row FROM decisions WHERE (block, log_index) > (?1, ?2)
             ORDER BY block, log_index LIMIT ?3",
            vec![Value::Integer(b), Value::Integer(i), Value::Integer(sqlint(limit))],
        )?;
        self.joined(texts)
    }

    /// The decisions whose positions rows after `key` closed (up to `limit` closing rows),
    /// oldest first with those rows attached, and the key of the last closing row read.
    pub fn closed_after(
        &self,
        key: Option<RowKey>,
        limit: u64,
    ) -> Result<(Vec<DecisionRow>, Option<RowKey>)> {
        let (b, i) = key.map_or((-1, -1), |(b, i)| (sqlint(b), sqlint(i)));
        let mut q = self
            .conn
            .prepare(
                "SELECT d.row, x.closing_block, x.closing_index FROM closes x
                 JOIN decisions d ON d.tx = x.tx AND d.log_index = x.log_index
                 WHERE (x.closing_block, x.closing_index) > (?1, ?2)
                   AND (x.closing_block, x.closing_index) IN (
                     SELECT block, log_index FROM closings WHERE (block, log_index) > (?1, ?2)
                     ORDER BY block, log_index LIMIT ?3)
                 ORDER BY x.closing_block, x.closing_index, d.block, d.log_index",
            )
            .map_err(self.err("read closed decisions"))?;
        let rows = q
            .query_map(rusqlite::params![b, i, sqlint(limit)], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as u64))
            })
            .map_err(self.err("read closed decisions"))?;
        let mut texts = Vec::new();
        let mut last = key;
        for row in rows {
            let (text, cb, ci) = row.map_err(self.err("read closed decisions"))?;
            last = Some((cb, ci));
            if !texts.contains(&text) {
                texts.push(text);
            }
        }
        let mut joined = self.joined(texts)?;
        joined.sort_by_key(|d| (d.block, d.log_index));
        Ok((joined, last))
    }

    /// The newest decision's key and chain time.
    pub fn last_decision(&self) -> Result<Option<(RowKey, u64)>> {
        self.conn
            .query_row(
                "SELECT block, log_index, time FROM decisions ORDER BY block DESC, log_index DESC LIMIT 1",
                [],
                |r| {
                    Ok((
                        (r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64),
                        r.get::<_, i64>(2)? as u64,
                    ))
                },
            )
            .optional()
            .map_err(self.err("read the last decision"))
    }

    /// The newest closing row's key.
    pub fn last_closing(&self) -> Result<Option<RowKey>> {
        self.conn
            .query_row(
                "SELECT block, log_index FROM closings ORDER BY block DESC, log_index DESC LIMIT 1",
                [],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
            )
            .optional()
            .map_err(self.err("read the last closing row"))
    }

    /// The model labels the decisions name, sorted, at most `limit` of them.
    pub fn model_names(&self, limit: u64) -> Result<Vec<String>> {
        let mut q = self
            .conn
            .prepare(
                "SELECT DISTINCT model FROM decisions WHERE model IS NOT NULL ORDER BY model LIMIT ?1",
            )
            .map_err(self.err("read model labels"))?;
        let rows = q
            .query_map([sqlint(limit)], |r| r.get::<_, String>(0))
            .map_err(self.err("read model labels"))?;
        rows.collect::<std::result::Result<_, _>>().map_err(self.err("read model labels"))
    }

    /// The off-chain rows in the feed, in feed order.
    pub fn offchain_rows(&self) -> Result<Vec<OffchainRow>> {
        let mut q = self
            .conn
            .prepare("SELECT row FROM offchain WHERE released = 1 ORDER BY block, seq")
            .map_err(self.err("read off-chain rows"))?;
        let rows =
            q.query_map([], |r| r.get::<_, String>(0)).map_err(self.err("read off-chain rows"))?;
        let mut out = Vec::new();
        for t in rows {
            out.push(self.decode("off-chain row", &t.map_err(self.err("read off-chain rows"))?)?);
        }
        Ok(out)
    }

    /// Off-chain rows in the feed.
    pub fn offchain_in_feed(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM offchain WHERE released = 1", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .map_err(self.err("count off-chain rows"))
    }

    /// Decisions per reason code in `buckets` spans of `span` chain seconds from `t0` (the
    /// last bucket takes everything after it).
    pub fn reason_buckets(
        &self,
        t0: u64,
        span: u64,
        buckets: usize,
    ) -> Result<BTreeMap<u8, Vec<u64>>> {
        let mut q = self
            .conn
            .prepare(
                "SELECT reason, min((time - ?1) / ?2, ?3), COUNT(*) FROM decisions
                 GROUP BY reason, min((time - ?1) / ?2, ?3)",
            )
            .map_err(self.err("count decisions by reason and time"))?;
        let rows = q
            .query_map(
                rusqlite::params![sqlint(t0), sqlint(span.max(1)), sqlint(buckets as u64 - 1)],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)),
            )
            .map_err(self.err("count decisions by reason and time"))?;
        let mut out: BTreeMap<u8, Vec<u64>> = BTreeMap::new();
        for row in rows {
            let (reason, bucket, n) =
                row.map_err(self.err("count decisions by reason and time"))?;
            let bucket = usize::try_from(bucket.max(0)).unwrap_or(0).min(buckets - 1);
            out.entry(reason as u8).or_insert_with(|| vec![0; buckets])[bucket] += n as u64;
        }
        Ok(out)
    }

    /// H − balance read at each decision that read the book, in feed order: every point up to
    /// `max_points`; past it, the record cut into `max_points` runs of rows and the highest
    /// point of each kept (so no peak is lost), and the last point.
    pub fn drawdown_line(&self, max_points: usize) -> Result<Vec<(u64, i128)>> {
        let n: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM decisions WHERE drawdown IS NOT NULL", [], |r| {
                r.get(0)
            })
            .map_err(self.err("read the drawdown line"))?;
        let run = (n as usize).div_ceil(max_points.max(1)).max(1);
        let mut q = self
            .conn
            .prepare(
                "SELECT time, drawdown FROM decisions WHERE drawdown IS NOT NULL
                 ORDER BY block, log_index",
            )
            .map_err(self.err("read the drawdown line"))?;
        let rows = q
            .query_map([], |r| Ok((r.get::<_, i64>(0)? as u64, i128::from(r.get::<_, i64>(1)?))))
            .map_err(self.err("read the drawdown line"))?;
        let mut out = Vec::new();
        let mut best: Option<(u64, i128)> = None;
        let mut last = None;
        for (i, row) in rows.enumerate() {
            let p = row.map_err(self.err("read the drawdown line"))?;
            if best.is_none_or(|b| p.1 > b.1) {
                best = Some(p);
            }
            last = Some(p);
            if (i + 1) % run == 0 {
                out.extend(best.take());
            }
        }
        out.extend(best);
        if let Some(l) = last {
            if out.last() != Some(&l) {
                out.push(l);
            }
        }
        Ok(out)
    }

    /// The rows `sql` selects (one text column), with `values` bound.
    fn row_texts(&self, sql: &str, values: Vec<Value>) -> Result<Vec<String>> {
        let mut q = self.conn.prepare(sql).map_err(self.err("read decisions"))?;
        let rows = q
            .query_map(params_from_iter(values.iter()), |r| r.get::<_, String>(0))
            .map_err(self.err("read decisions"))?;
        rows.collect::<std::result::Result<_, _>>().map_err(self.err("read decisions"))
    }

    /// The closing rows (JSON) naming `d`.
    fn closing_texts(&self, d: &DecisionRow) -> Result<Vec<String>> {
        let mut q = self
            .conn
            .prepare_cached(
                "SELECT c.row FROM closes x JOIN closings c
                   ON c.block = x.closing_block AND c.log_index = x.closing_index
                 WHERE x.tx = ?1 AND x.log_index = ?2",
            )
            .map_err(self.err("read closing rows"))?;
        let found = q
            .query_map(rusqlite::params![d.tx, sqlint(d.log_index)], |r| r.get::<_, String>(0))
            .map_err(self.err("read closing rows"))?;
        found.collect::<std::result::Result<_, _>>().map_err(self.err("read closing rows"))
    }

    /// Decision rows (JSON) with the closing rows naming each attached, in feed order.
    fn joined(&self, texts: Vec<String>) -> Result<Vec<DecisionRow>> {
        let mut rows: Vec<FeedRow> = Vec::new();
        let mut closings: Vec<String> = Vec::new();
        for t in texts {
            let d: DecisionRow = self.decode("decision row", &t)?;
            for c in self.closing_texts(&d)? {
                if !closings.contains(&c) {
                    closings.push(c);
                }
            }
            rows.push(FeedRow::Decision(d));
        }
        for c in &closings {
            rows.push(self.decode::<FeedRow>("closing row", c)?);
        }
        rows.sort_by_key(FeedRow::sort_key);
        Ok(feed::joined(rows).0)
    }
}
