//! A local anvil from the pinned toolchain, on a free loopback port, always stopped with
//! SIGTERM (so `--dump-state` gets written) and killed if it does not exit.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};
use tokio::process::{Child, Command};

#[derive(Debug, thiserror::Error)]
pub enum AnvilError {
    #[error("cannot start anvil at {path}: {reason}; run `make bootstrap`")]
    Spawn { path: PathBuf, reason: String },
    #[error("anvil on port {port} did not answer within {waited:?}")]
    NotReady { port: u16, waited: Duration },
    #[error("no free loopback port: {0}")]
    Port(String),
    #[error("cannot read anvil's dev accounts from its --config-out file: {0}")]
    DevKeys(String),
}

pub type Result<T> = std::result::Result<T, AnvilError>;

/// A running anvil; stopped on `stop()` or, as a last resort, killed on drop.
#[derive(Debug)]
pub struct Anvil {
    child: Option<Child>,
    pub port: u16,
    pub url: reqwest::Url,
    dev_keys: DevKeys,
    _config_dir: tempfile::TempDir,
}

/// The development keys this anvil generated and published in its `--config-out` file. They
/// are read from there rather than written into the repository, and never printed.
struct DevKeys(Vec<String>);

impl std::fmt::Debug for DevKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DevKeys(<{} redacted>)", self.0.len())
    }
}

/// A free port on 127.0.0.1 (bound, read, released).
pub fn free_port() -> Result<u16> {
    let l =
        std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| AnvilError::Port(e.to_string()))?;
    let port = l.local_addr().map_err(|e| AnvilError::Port(e.to_string()))?.port();
    Ok(port)
}

impl Anvil {
    /// Starts anvil on `port` (or a free one) with `extra` arguments and waits until it answers.
    pub async fn start(path: &Path, port: Option<u16>, extra: &[String]) -> Result<Self> {
        let port = match port {
            Some(p) => p,
            None => free_port()?,
        };
        let config_dir = tempfile::tempdir().map_err(|e| AnvilError::DevKeys(e.to_string()))?;
        let config_path = config_dir.path().join("anvil.json");
        let child = Command::new(path)
            .arg("--host")
            .arg("127.0.0.1")
            .arg("--port")
            .arg(port.to_string())
            .arg("--config-out")
            .arg(&config_path)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| AnvilError::Spawn { path: path.to_path_buf(), reason: e.to_string() })?;
        let url: reqwest::Url = format!("http://127.0.0.1:{port}")
            .parse()
            .map_err(|e: url_parse::ParseError| AnvilError::Port(e.to_string()))?;
        let mut anvil = Self {
            child: Some(child),
            port,
            url,
            dev_keys: DevKeys(Vec::new()),
            _config_dir: config_dir,
        };
        anvil.wait_ready(Duration::from_secs(20)).await?;
        anvil.dev_keys = read_dev_keys(&config_path)?;
        Ok(anvil)
    }

    /// Dev account `index`'s key, as this anvil published it (local use only).
    pub fn dev_key(&self, index: usize) -> Result<&str> {
        self.dev_keys
            .0
            .get(index)
            .map(String::as_str)
            .ok_or_else(|| AnvilError::DevKeys(format!("no dev account {index}")))
    }

    async fn wait_ready(&self, max: Duration) -> Result<()> {
        // anvil writes --config-out just before it starts serving.
        let start = std::time::Instant::now();
        let client = reqwest::Client::new();
        let body = serde_json::json!({"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]});
        while start.elapsed() < max {
            if let Ok(r) = client.post(self.url.clone()).json(&body).send().await {
                if r.status().is_success() {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(AnvilError::NotReady { port: self.port, waited: max })
    }

    /// Stops this anvil (SIGTERM, so a `--dump-state` is written) and starts a new one on the
    /// same port, `down_for` later, with `extra` arguments (e.g. `--load-state FILE`).
    pub async fn restart(
        &mut self,
        path: &Path,
        down_for: Duration,
        extra: &[String],
    ) -> Result<()> {
        self.terminate().await;
        tokio::time::sleep(down_for).await;
        let next = Self::start(path, Some(self.port), extra).await?;
        *self = next;
        Ok(())
    }

    /// Stops with SIGTERM (anvil writes `--dump-state` on the way out), then waits up to 20 s
    /// before killing.
    pub async fn stop(mut self) {
        self.terminate().await;
    }

    async fn terminate(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Some(pid) = child.id() {
                // SAFETY: plain kill(2) on the pid of a child we spawned and have not reaped.
                unsafe {
                    libc::kill(pid as libc::pid_t, libc::SIGTERM);
                }
            }
            if tokio::time::timeout(Duration::from_secs(20), child.wait()).await.is_err() {
                let _ = child.kill().await;
            }
        }
    }
}

/// Keeps url parsing errors nameable without another import at each call site.
mod url_parse {
    pub type ParseError = <reqwest::Url as std::str::FromStr>::Err;
}

/// Reads `private_keys` from anvil's `--config-out` JSON.
fn read_dev_keys(path: &Path) -> Result<DevKeys> {
    let text = std::fs::read_to_string(path).map_err(|e| AnvilError::DevKeys(e.to_string()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| AnvilError::DevKeys(e.to_string()))?;
    let keys = json
        .get("private_keys")
        .and_then(|k| k.as_array())
        .ok_or_else(|| AnvilError::DevKeys("no private_keys array".into()))?
        .iter()
        .filter_map(|k| k.as_str().map(str::to_owned))
        .collect::<Vec<_>>();
    // The worlds use four roles: keeper, maker and two adversaries.
    if keys.len() < 4 {
        return Err(AnvilError::DevKeys(format!("{} keys, need 4", keys.len())));
    }
    Ok(DevKeys(keys))
}
