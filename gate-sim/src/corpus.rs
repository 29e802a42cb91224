//! The hostile corpus (`gate-sim/corpus/answers.txt`): answer strings with the outcome the
//! specification requires, run against the reference model and the compiled contract. Every
//! hostile string must be refused (with the exact `UnknownVerdict(length, head)` data) and
//! every valid trimmed form accepted as its verdict, by both.

use crate::{
    abi,
    artifact::GateArtifact,
    diff,
    evm::{self, Chain, Deployed, Outcome},
    model::{self, Bounds, GateConfig, Verdict},
};
use alloy::primitives::{Address, Bytes, FixedBytes, U256};
use alloy::sol_types::SolError;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read corpus {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}:{line}: {reason}")]
    Syntax { path: PathBuf, line: usize, reason: String },
    #[error(transparent)]
    Evm(#[from] evm::Error),
    #[error(transparent)]
    Fixture(#[from] diff::Error),
    #[error("the corpus gate did not deploy: {0:?}")]
    Deploy(Deployed),
}

pub type Result<T> = std::result::Result<T, Error>;

pub fn default_corpus_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/answers.txt")
}

/// What the specification requires of one answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Refuse,
    Accept(Verdict),
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub line: usize,
    pub expect: Expect,
    pub raw: Vec<u8>,
}

pub fn load(path: &Path) -> Result<Vec<Entry>> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
    parse(&text).map_err(|(line, reason)| Error::Syntax { path: path.to_path_buf(), line, reason })
}

/// `EXPECT <TAB> json-string [<TAB> *N]` per line; `#` comments and blank lines skipped.
pub fn parse(text: &str) -> std::result::Result<Vec<Entry>, (usize, String)> {
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split('\t');
        let expect = match fields.next() {
            Some("REFUSE") => Expect::Refuse,
            Some("ABSTAIN") => Expect::Accept(Verdict::Abstain),
            Some("BUY_UP") => Expect::Accept(Verdict::BuyUp),
            Some("BUY_DOWN") => Expect::Accept(Verdict::BuyDown),
            other => return Err((n, format!("unknown expectation {other:?}"))),
        };
        let json = fields.next().ok_or((n, "missing the answer string".to_string()))?;
        let s: String =
            serde_json::from_str(json).map_err(|e| (n, format!("bad JSON string: {e}")))?;
        let repeat = match fields.next() {
            None => 1,
            Some(r) => r
                .strip_prefix('*')
                .and_then(|r| r.parse::<usize>().ok())
                .ok_or((n, format!("bad repeat field {r:?}, want *N")))?,
        };
        entries.push(Entry { line: n, expect, raw: s.as_bytes().repeat(repeat) });
    }
    Ok(entries)
}

/// Counts for one implementation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub hostile: usize,
    pub hostile_refused: usize,
    pub valid: usize,
    pub valid_accepted: usize,
    /// Lines whose outcome was wrong, for the report.
    pub wrong: Vec<(usize, String)>,
}

impl Tally {
    pub fn all_right(&self) -> bool {
        self.hostile_refused == self.hostile
            && self.valid_accepted == self.valid
            && self.wrong.is_empty()
    }

    fn record(&mut self, entry: &Entry, right: bool, got: String) {
        match entry.expect {
            Expect::Refuse => {
                self.hostile += 1;
                self.hostile_refused += usize::from(right);
            }
            Expect::Accept(_) => {
                self.valid += 1;
                self.valid_accepted += usize::from(right);
            }
        }
        if !right {
            self.wrong.push((entry.line, got));
        }
    }

    pub fn summary(&self, who: &str) -> String {
        format!(
            "{who}: hostile refused {}/{} ({:.1} %), valid accepted {}/{} ({:.1} %)",
            self.hostile_refused,
            self.hostile,
            percent(self.hostile_refused, self.hostile),
            self.valid_accepted,
            self.valid,
            percent(self.valid_accepted, self.valid)
        )
    }
}

fn percent(a: usize, b: usize) -> f64 {
    if b == 0 {
        100.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

/// The reference model against the corpus.
pub fn run_reference(entries: &[Entry]) -> Tally {
    let mut tally = Tally::default();
    for e in entries {
        let got = model::parse_verdict(&e.raw);
        let right = match e.expect {
            Expect::Refuse => got.is_err(),
            Expect::Accept(v) => got == Ok(v),
        };
        tally.record(e, right, format!("{got:?}"));
    }
    tally
}

/// The revert data the specification requires for a refused answer, built here from the raw
/// bytes (not through the reference model): `UnknownVerdict(raw length, first 32 raw bytes
/// right-padded with zeros)`.
fn required_refusal(raw: &[u8]) -> Bytes {
    let mut head = [0u8; 32];
    let n = raw.len().min(32);
    head[..n].copy_from_slice(&raw[..n]);
    abi::IRiskGate::UnknownVerdict { length: U256::from(raw.len()), head: FixedBytes(head) }
        .abi_encode()
        .into()
}

/// The compiled contract against `entries`, on `chain`, through a gate deployed for the purpose.
pub fn run_contract(
    chain: &mut dyn Chain,
    artifact: &GateArtifact,
    entries: &[Entry],
) -> Result<Tally> {
    let bounds = Bounds {
        min_price: U256::from(10_000u64),
        max_price: U256::from(990_000u64),
        max_size: U256::from(1_000_000u64),
        min_headroom_secs: model::MIN_HEADROOM_FLOOR_SECS,
        max_concurrent: 1,
        max_notional: U256::from(1_000_000u64),
        max_horizon_secs: model::MIN_HEADROOM_FLOOR_SECS,
        max_drawdown: U256::from(1_000_000u64),
        write_off_grace_secs: model::WRITE_OFF_GRACE_FLOOR_SECS,
        min_fill_bps: 1,
    };
    let config = GateConfig {
        bounds,
        trusted_resolvers: vec![Address::with_last_byte(1)],
        trusted_creators: vec![Address::with_last_byte(2)],
        keeper: abi::DUMMY_KEEPER,
        collateral: abi::DUMMY_COLLATERAL,
        factory_collateral: abi::DUMMY_COLLATERAL,
    };
    let fixture = diff::Fixture::deploy(chain, artifact)?;
    let gate = match chain.deploy(artifact.initcode(&config, fixture.factory))? {
        Deployed::At(a) => a,
        other => return Err(Error::Deploy(other)),
    };
    let mut tally = Tally::default();
    for e in entries {
        let got = chain.call(gate, abi::parse_verdict_calldata(&e.raw))?;
        let want = match e.expect {
            Expect::Refuse => Outcome::Reverted(required_refusal(&e.raw)),
            Expect::Accept(v) => Outcome::Returned(abi::verdict_return_data(v.code())),
        };
        let right = got == want;
        tally.record(e, right, format!("{got:?}"));
    }
    Ok(tally)
}
