//! `keeper attest`'s arguments: the endpoint, the one gate it signs for, its own key (never a
//! flag), its own model, and where it listens.

use super::*;
use crate::domain::config::AttestConfig;

#[derive(Debug, clap::Args)]
pub struct AttestArgs {
    #[command(flatten)]
    pub chain: ChainArgs,
    /// The attested RiskGate whose answers this attestor signs (the only one it signs for).
    #[arg(long, env = "ATTESTOR_GATE")]
    pub gate: Address,
    /// Encrypted JSON keystore holding the attestor's key (password from
    /// ATTESTOR_KEYSTORE_PASSWORD); without it the key comes from ATTESTOR_PRIVATE_KEY.
    #[arg(long, env = "ATTESTOR_KEYSTORE")]
    pub keystore: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Address to listen on: loopback only (port 0 picks a free one; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8650", env = "ATTESTOR_LISTEN")]
    pub listen: std::net::SocketAddr,
    /// The signed deadline: the read block's timestamp plus this many seconds. Every attestor
    /// of a gate must use the same, as they sign one deadline.
    #[arg(long, default_value_t = 60, env = "ATTESTOR_ANSWER_TTL_SECS")]
    pub answer_ttl_secs: u64,
    /// Largest block range of one eth_getLogs query.
    #[arg(long, default_value_t = 5_000)]
    pub log_range: u64,
    /// The first block searched for a market's creation (each market once, then kept): the
    /// factory's deploy block spares a long history's scan.
    #[arg(long, default_value_t = 0, env = "ATTESTOR_FROM_BLOCK")]
    pub from_block: u64,
}

impl AttestArgs {
    pub fn to_config(&self) -> Result<AttestConfig> {
        let chain = self.chain.to_config()?;
        if self.answer_ttl_secs == 0 {
            return Err(ConfigError::ZeroAnswerTtl);
        }
        Ok(AttestConfig {
            chain,
            gate: self.gate,
            keystore: self.keystore.as_deref().map(from_cwd),
            model: self.model.to_config()?,
            strategy_text: self.model.strategy_text()?,
            inference_timeout: self.model.inference_timeout()?,
            listen: self.listen,
            answer_ttl_secs: self.answer_ttl_secs,
            log_range: self.log_range.max(1),
            from_block: self.from_block,
        })
    }
}
