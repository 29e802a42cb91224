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
}

pub type Result<T> = std::result::Result<T, AnvilError>;

/// A running anvil; stopped on `stop()` or, as a last resort, killed on drop.
#[derive(Debug)]
pub struct Anvil {
    child: Option<Child>,
    pub port: u16,
    pub url: reqwest::Url,
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
        let child = Command::new(path)
            .arg("--host")
            .arg("127.0.0.1")
            .arg("--port")
            .arg(port.to_string())
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| AnvilError::Spawn { path: path.to_path_buf(), reason: e.to_string() })?;
        let url: reqwest::Url = format!("http://127.0.0.1:{port}")
            .parse()
            .map_err(|e: url_parse::ParseError| AnvilError::Port(e.to_string()))?;
        let anvil = Self { child: Some(child), port, url };
        anvil.wait_ready(Duration::from_secs(20)).await?;
        Ok(anvil)
    }

    async fn wait_ready(&self, max: Duration) -> Result<()> {
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
