//! Who answers on an attested gate (issue 35): not a model the keeper asks, but the gate's
//! attestors, each a `keeper attest` process with its own key, node and model. The keeper asks
//! every configured attestor at once about one market at one read block, each with a timeout,
//! checks what comes back the way the gate will (the signer is one of the gate's, the signature
//! recovers to it over what it claims to have signed, for this chain, gate, market and block),
//! and stops as soon as `k` of them answered the same verdict over the same read. With fewer than
//! `k` usable answers when the last one is in or timed out, nothing is submitted: the caller
//! writes an off-chain row naming every attestor that did not answer, and why.
//!
//! Adversary: a compromised or broken attestor (fewer than `k`). Whatever it returns (a forged
//! or malformed reply, another read, a signature of someone else) is left out and named; it can
//! delay a decision by the timeout at most, never make one.

use crate::{
    chain::attestation::{AttestRequest, Attested, Read},
    domain::decision::gate_verdict,
    kit::bindings::verdict,
};
use alloy::primitives::Address;
use futures::{stream::FuturesUnordered, StreamExt};
use std::{collections::BTreeMap, time::Duration};

/// The attestors of one gate, as the keeper reaches them.
#[derive(Debug, Clone)]
pub struct Panel {
    client: reqwest::Client,
    /// Each attestor's base URL (`POST {url}/attest`).
    urls: Vec<String>,
    chain_id: u64,
    gate: Address,
    /// The gate's attestors, as its set reports them.
    set: Vec<Address>,
    /// `k`: agreeing answers needed.
    threshold: usize,
    /// How long each attestor is given.
    timeout: Duration,
    /// Blocks a read may be behind the block that includes it (the gate's `maxReadAge`); None:
    /// not checked before sending (the gate checks it anyway).
    max_read_age: Option<u64>,
    /// Wait for every ask to end even once `k` agree, so the vote holds every answer given and
    /// does not depend on which attestors answered first (a record the same run to run).
    wait_for_all: bool,
}

/// An attestor whose answer is not in the call, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub attestor: String,
    pub why: String,
}

/// What the attestors gave about one market at one read block.
#[derive(Debug, Clone)]
pub struct Gathered {
    /// The answers to submit, ascending by signer (as the gate requires), all over one read
    /// and one deadline.
    pub answers: Vec<Attested>,
    /// Every asked attestor whose answer is not among them, with why (not waited for once `k`
    /// agreed is not missing).
    pub missing: Vec<Missing>,
}

impl Gathered {
    /// The read every answer signed (None when there is no answer).
    pub fn read(&self) -> Option<(Read, u64)> {
        self.answers.first().map(|a| (a.read, a.deadline))
    }

    /// The verdict at least `k` answers gave, when exactly one did.
    pub fn winner(&self, k: usize) -> Option<u8> {
        let mut counts = [0usize; 3];
        for a in &self.answers {
            if let Some(c) = counts.get_mut(usize::from(gate_verdict(&a.raw))) {
                *c += 1;
            }
        }
        let reached: Vec<u8> = (0u8..3).filter(|&v| counts[usize::from(v)] >= k.max(1)).collect();
        (reached.len() == 1).then(|| reached[0])
    }

    /// The answer the gate will show: the first (by signer) giving the verdict taken, else the
    /// first.
    pub fn shown(&self, k: usize) -> Option<&Attested> {
        match self.winner(k) {
            Some(v) => self.answers.iter().find(|a| gate_verdict(&a.raw) == v),
            None => self.answers.first(),
        }
    }

    /// The attestors left out, on one line.
    pub fn missing_line(&self) -> String {
        self.missing
            .iter()
            .map(|m| format!("{} ({})", m.attestor, m.why))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The end of one round of asks.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// At least `k` usable answers over one read: submit them (the gate decides, 22 included
    /// when they split).
    Ready(Gathered),
    /// Fewer than `k`: nothing to submit.
    Short(Gathered),
}

#[derive(Debug, thiserror::Error)]
pub enum PanelError {
    #[error("cannot build the attestors' HTTP client")]
    Client(#[source] reqwest::Error),
    #[error("no attestor configured for attested gate {gate}: give each one's URL with --attestor (its set holds {n} signers, {k} must agree)")]
    NoAttestors { gate: Address, n: usize, k: usize },
    #[error(transparent)]
    Url(#[from] crate::domain::config::ConfigError),
    #[error("{urls} attestors are configured, fewer than the gate's threshold {k}: no decision could ever be attested; give at least {k} with --attestor")]
    BelowThreshold { urls: usize, k: usize },
}

impl crate::domain::exit::Classify for PanelError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            Self::NoAttestors { .. } | Self::Url(_) | Self::BelowThreshold { .. } => Input,
            Self::Client(_) => Runtime,
        }
    }
}

impl Panel {
    /// The attestors at `urls` of `gate` (on `chain_id`), whose set holds `set` and needs
    /// `threshold` agreeing answers; each is given `timeout`.
    pub fn new(
        urls: Vec<String>,
        chain_id: u64,
        gate: Address,
        set: Vec<Address>,
        threshold: usize,
        timeout: Duration,
    ) -> Result<Self, PanelError> {
        if urls.is_empty() {
            return Err(PanelError::NoAttestors { gate, n: set.len(), k: threshold });
        }
        // One spelling per attestor, each once: two copies of one would pass the check below
        // and then count once in every vote.
        let clean = crate::domain::config::attestor_urls(&urls)?;
        if clean.len() < threshold {
            return Err(PanelError::BelowThreshold { urls: clean.len(), k: threshold });
        }
        let client =
            reqwest::Client::builder().timeout(timeout).build().map_err(PanelError::Client)?;
        Ok(Self {
            client,
            urls: clean,
            chain_id,
            gate,
            set,
            threshold,
            timeout,
            max_read_age: None,
            wait_for_all: false,
        })
    }

    /// The gate's `maxReadAge`: an answer whose read would be older when mined is not sent.
    pub fn with_max_read_age(mut self, blocks: u64) -> Self {
        self.max_read_age = Some(blocks);
        self
    }

    /// Submit only once every attestor has answered, refused or timed out (never as soon as
    /// `k` agree): slower by the slowest attestor, and the vote no longer depends on who was
    /// first.
    pub fn waiting_for_all(mut self) -> Self {
        self.wait_for_all = true;
        self
    }

    pub fn max_read_age(&self) -> Option<u64> {
        self.max_read_age
    }

    pub fn threshold(&self) -> usize {
        self.threshold
    }

    pub fn urls(&self) -> &[String] {
        &self.urls
    }

    /// Asks every attestor about `market` at `read_block`, all at once, and gathers their
    /// answers until `k` agree over one read (unless [`Panel::waiting_for_all`]) or every ask has
    /// ended (answered, refused or timed out).
    /// `send_time` is the chain time the keeper expects its transaction's block to carry: the
    /// attestors count the answer's deadline from it (see [`AttestRequest::send_time`]).
    pub async fn ask(&self, market: Address, read_block: u64, send_time: u64) -> Outcome {
        let req = AttestRequest {
            chain_id: self.chain_id,
            gate: self.gate,
            market,
            read_block,
            send_time: Some(send_time),
        };
        let mut inflight: FuturesUnordered<_> = self
            .urls
            .iter()
            .map(|url| async move { (url.clone(), self.ask_one(url, &req).await) })
            .collect();
        // Usable answers, grouped by what they signed besides the answer (read and deadline).
        let mut groups: BTreeMap<(Read, u64), Vec<(String, Attested)>> = BTreeMap::new();
        let mut missing = Vec::new();
        let mut seen: BTreeMap<Address, String> = BTreeMap::new();
        while let Some((url, got)) = inflight.next().await {
            let a = match got.and_then(|a| self.check(a, &req)) {
                Ok(a) => a,
                Err(why) => {
                    missing.push(Missing { attestor: url, why });
                    // No group can reach k even if every ask still out answered into it: stop
                    // waiting for them (the slowest attestor no longer holds up every market).
                    let largest = groups.values().map(Vec::len).max().unwrap_or(0);
                    if !self.wait_for_all && largest + inflight.len() < self.threshold {
                        break;
                    }
                    continue;
                }
            };
            if let Some(first) = seen.get(&a.signer) {
                let why = format!("signer {} already answered through {first}", a.signer);
                missing.push(Missing { attestor: url, why });
                continue;
            }
            seen.insert(a.signer, url.clone());
            let key = (a.read, a.deadline);
            let group = groups.entry(key).or_default();
            group.push((url, a));
            let v = gate_verdict(&group.last().expect("just pushed").1.raw);
            let agreeing = group.iter().filter(|(_, g)| gate_verdict(&g.raw) == v).count();
            if !self.wait_for_all && v != verdict::INVALID && agreeing >= self.threshold {
                return Outcome::Ready(self.gathered(groups, missing, key));
            }
        }
        // Asks still out when k became unreachable: named, not waited for.
        let cut_short =
            self.urls.len() - missing.len() - groups.values().map(Vec::len).sum::<usize>();
        if cut_short > 0 {
            let ended: std::collections::BTreeSet<&str> = missing
                .iter()
                .map(|m| m.attestor.as_str())
                .chain(groups.values().flatten().map(|(u, _)| u.as_str()))
                .collect();
            let why = format!(
                "not waited for: too few attestors answered for {} to agree",
                self.threshold
            );
            let left: Vec<Missing> = self
                .urls
                .iter()
                .filter(|u| !ended.contains(u.as_str()))
                .map(|u| Missing { attestor: u.clone(), why: why.clone() })
                .collect();
            missing.extend(left);
        }
        // Every ask ended, or k is out of reach: the largest group (ties: the one with the
        // lowest signer, so the choice does not depend on arrival order).
        let best = groups
            .iter()
            .max_by(|(_, x), (_, y)| x.len().cmp(&y.len()).then_with(|| lowest(y).cmp(&lowest(x))))
            .map(|(k, _)| *k);
        let Some(best) = best else {
            return Outcome::Short(Gathered { answers: Vec::new(), missing });
        };
        let g = self.gathered(groups, missing, best);
        if g.answers.len() >= self.threshold {
            Outcome::Ready(g)
        } else {
            Outcome::Short(g)
        }
    }

    /// The group `best` as the answers, every other group's answers named as missing.
    fn gathered(
        &self,
        groups: BTreeMap<(Read, u64), Vec<(String, Attested)>>,
        mut missing: Vec<Missing>,
        best: (Read, u64),
    ) -> Gathered {
        let mut answers = Vec::new();
        for (key, group) in groups {
            for (url, a) in group {
                if key == best {
                    answers.push(a);
                } else {
                    let why = format!(
                        "signed another read (prompt {}, bid {}, ask {}, deadline {}) than the \
                         others (prompt {}, deadline {}): different strategy text or answer ttl?",
                        key.0.prompt_hash,
                        key.0.best_bid,
                        key.0.best_ask,
                        key.1,
                        best.0.prompt_hash,
                        best.1
                    );
                    missing.push(Missing { attestor: url, why });
                }
            }
        }
        answers.sort_by_key(|a| a.signer);
        missing.sort_by(|a, b| a.attestor.cmp(&b.attestor));
        Gathered { answers, missing }
    }

    /// One attestor's reply, or why there is none.
    async fn ask_one(&self, url: &str, req: &AttestRequest) -> Result<Attested, String> {
        let secs = self.timeout.as_secs_f64();
        let sent = self.client.post(format!("{url}/attest")).json(req).send();
        let resp = match tokio::time::timeout(self.timeout, sent).await {
            Err(_) => return Err(format!("no answer within {secs} s")),
            Ok(Err(e)) if e.is_timeout() => return Err(format!("no answer within {secs} s")),
            Ok(Err(e)) => return Err(format!("unreachable: {}", crate::error_chain(&e))),
            Ok(Ok(r)) => r,
        };
        let status = resp.status();
        let body = match tokio::time::timeout(self.timeout, resp.bytes()).await {
            Ok(Ok(b)) => b,
            Ok(Err(e)) => return Err(format!("reply unreadable: {}", crate::error_chain(&e))),
            Err(_) => return Err(format!("reply not complete within {secs} s")),
        };
        if !status.is_success() {
            let said = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
                .unwrap_or_else(|| String::from_utf8_lossy(&body).into_owned());
            return Err(format!("refused (HTTP {}): {}", status.as_u16(), short(&said)));
        }
        serde_json::from_slice::<Attested>(&body)
            .map_err(|e| format!("reply is not a signed answer: {e}"))
    }

    /// `a` if the gate would count it for `req`: the same chain, gate, market and block, a
    /// signer of the set, and a signature that recovers to it.
    fn check(&self, a: Attested, req: &AttestRequest) -> Result<Attested, String> {
        if a.chain_id != req.chain_id || a.gate != req.gate {
            return Err(format!(
                "signed for gate {} on chain {}, not this one",
                a.gate, a.chain_id
            ));
        }
        if a.market != req.market || a.read_block != req.read_block {
            return Err(format!(
                "signed market {} at block {}, not the one asked about",
                a.market, a.read_block
            ));
        }
        if !self.set.contains(&a.signer) {
            return Err(format!("signer {} is not one of the gate's attestors", a.signer));
        }
        if !a.verifies() {
            return Err(format!(
                "its signature does not recover to {} over what it says it signed",
                a.signer
            ));
        }
        Ok(a)
    }
}

/// The lowest signer of a group (groups are never empty).
fn lowest(group: &[(String, Attested)]) -> Option<Address> {
    group.iter().map(|(_, a)| a.signer).min()
}

/// At most 200 characters of an attestor's text, on one line (it is shown in rows and logs).
fn short(text: &str) -> String {
    let line = crate::one_line(text);
    match line.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::attestation::{self, Read};
    use alloy::{
        primitives::{keccak256, U256},
        signers::local::PrivateKeySigner,
    };

    const GATE: Address = Address::repeat_byte(0x99);

    fn read() -> Read {
        Read {
            prompt_hash: keccak256("prompt"),
            best_bid: U256::from(400_000u64),
            best_ask: U256::from(420_000u64),
        }
    }

    fn signed(key: &PrivateKeySigner, raw: &str) -> Attested {
        let a = attestation::answer(Address::repeat_byte(1), 7, &read(), raw, 1_000);
        Attested {
            signer: key.address(),
            chain_id: 31_337,
            gate: GATE,
            market: Address::repeat_byte(1),
            read_block: 7,
            read: read(),
            deadline: 1_000,
            raw: raw.into(),
            signature: attestation::sign(key, 31_337, GATE, &a).unwrap(),
            model: "builtin".into(),
        }
    }

    #[test]
    fn the_winner_is_the_one_verdict_at_k_and_the_shown_answer_gives_it() {
        let keys: Vec<PrivateKeySigner> = (0..4).map(|_| PrivateKeySigner::random()).collect();
        let mut answers = vec![
            signed(&keys[0], "BUY_DOWN"),
            signed(&keys[1], " BUY_UP\n"),
            signed(&keys[2], "BUY_UP"),
        ];
        answers.sort_by_key(|a| a.signer);
        let g = Gathered { answers, missing: Vec::new() };
        // Two BUY_UP (one padded: the gate trims it) of three: BUY_UP reaches k = 2, and the
        // answer shown is the first BUY_UP in signer order.
        assert_eq!(g.winner(2), Some(verdict::BUY_UP));
        let shown = g.shown(2).unwrap();
        assert_eq!(gate_verdict(&shown.raw), verdict::BUY_UP);
        let first_up = g.answers.iter().find(|a| gate_verdict(&a.raw) == verdict::BUY_UP).unwrap();
        assert_eq!(shown.signer, first_up.signer);
        // k = 3: nothing reaches it; shown is the first answer.
        assert_eq!(g.winner(3), None);
        assert_eq!(g.shown(3).unwrap().signer, g.answers[0].signer);
        // Two verdicts at k = 1 (2k <= n): no single winner, as the gate's 22.
        assert_eq!(g.winner(1), None);
    }

    /// k = 2 of three attestors, two of which refuse at once (nothing listens on their port)
    /// and one that accepts and never answers (an hour's timeout): once two have failed, k is
    /// out of reach, so the ask ends without waiting for the third, which is named. Before, the
    /// keeper waited the full timeout on every market. The outer two minutes only bound a hang.
    #[tokio::test]
    async fn the_keeper_stops_waiting_once_k_is_out_of_reach() {
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let silent_url = format!("http://{}", silent.local_addr().unwrap());
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((conn, _)) = silent.accept().await {
                open.push(conn); // accepted, never answered
            }
        });
        let closed = || {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}", l.local_addr().unwrap()) // dropped: connection refused
        };
        let urls = vec![closed(), closed(), silent_url.clone()];
        let panel = Panel::new(
            urls,
            31_337,
            GATE,
            vec![Address::repeat_byte(7), Address::repeat_byte(8), Address::repeat_byte(9)],
            2,
            Duration::from_secs(3_600),
        )
        .unwrap();
        let asked = tokio::time::timeout(
            Duration::from_secs(120),
            panel.ask(Address::repeat_byte(1), 7, 1_000),
        )
        .await
        .expect("the ask ends once k is out of reach, not after the slowest attestor's timeout");
        let Outcome::Short(g) = asked else { panic!("no answer can be Ready") };
        assert!(g.answers.is_empty());
        assert_eq!(g.missing.len(), 3, "{}", g.missing_line());
        let third = g.missing.iter().find(|m| m.attestor == silent_url).unwrap();
        assert!(third.why.contains("not waited for"), "{}", third.why);
        held.abort();
    }

    #[test]
    fn a_reply_is_checked_as_the_gate_will_count_it() {
        let key = PrivateKeySigner::random();
        let outsider = PrivateKeySigner::random();
        let panel = Panel::new(
            vec!["http://127.0.0.1:9".into()],
            31_337,
            GATE,
            vec![key.address()],
            1,
            Duration::from_secs(1),
        )
        .unwrap();
        let req = AttestRequest {
            chain_id: 31_337,
            gate: GATE,
            market: Address::repeat_byte(1),
            read_block: 7,
            send_time: None,
        };
        assert!(panel.check(signed(&key, "ABSTAIN"), &req).is_ok());
        // Another block asked about, a signer outside the set, an answer changed after signing,
        // a signer claiming another's signature: each left out, named.
        let other = AttestRequest { read_block: 8, ..req };
        assert!(panel.check(signed(&key, "ABSTAIN"), &other).unwrap_err().contains("at block 7"));
        let e = panel.check(signed(&outsider, "ABSTAIN"), &req).unwrap_err();
        assert!(e.contains("not one of the gate's attestors"), "{e}");
        let mut changed = signed(&key, "ABSTAIN");
        changed.raw = "BUY_UP".into();
        assert!(panel.check(changed, &req).unwrap_err().contains("does not recover"));
        let mut claimed = signed(&outsider, "ABSTAIN");
        claimed.signer = key.address();
        assert!(panel.check(claimed, &req).unwrap_err().contains("does not recover"));
    }

    #[test]
    fn bad_configuration_is_refused() {
        let set = vec![Address::repeat_byte(1), Address::repeat_byte(2)];
        let new = |urls: Vec<&str>, k| {
            Panel::new(
                urls.into_iter().map(String::from).collect(),
                1,
                GATE,
                set.clone(),
                k,
                Duration::from_secs(1),
            )
        };
        assert!(matches!(new(vec![], 1), Err(PanelError::NoAttestors { n: 2, k: 1, .. })));
        use crate::domain::config::ConfigError;
        assert!(matches!(
            new(vec!["ftp://x"], 1),
            Err(PanelError::Url(ConfigError::NotHttp { .. }))
        ));
        assert!(matches!(
            new(vec!["not a url"], 1),
            Err(PanelError::Url(ConfigError::BadAttestorUrl { .. }))
        ));
        // One attestor in two spellings (case, default port, trailing slash) is one attestor.
        assert!(matches!(
            new(vec!["http://A.example:80/", "http://a.example"], 2),
            Err(PanelError::Url(ConfigError::DuplicateAttestorUrl { .. }))
        ));
        assert!(matches!(
            new(vec!["http://127.0.0.1:1"], 2),
            Err(PanelError::BelowThreshold { urls: 1, k: 2 })
        ));
        let p = new(vec!["http://127.0.0.1:1/", "https://a.example"], 2).unwrap();
        assert_eq!(p.urls(), ["http://127.0.0.1:1", "https://a.example"]);
    }
}
