//! A local anvil from the pinned toolchain, on a free loopback port (127.0.0.1 only), stopped
//! with SIGTERM (so `--dump-state` gets written) and killed if it does not exit; killed and
//! reaped on drop, so no anvil outlives a panic; and killed by the kernel when the process that
//! started it dies without either ([`crate::tied`]).
//!
//! History. By default anvil runs with `--prune-history`: it keeps only the latest state, and
//! nothing on disk. What that allows was checked against the pinned anvil (1.7.1):
//!
//! | needs                                          | [`History::Pruned`] | [`History::Recent`]`(n)` | [`History::Full`] |
//! |------------------------------------------------|---------------------|--------------------------|-------------------|
//! | `evm_snapshot` / `evm_revert`                  | works               | works                    | works             |
//! | `--dump-state` / `--load-state`                | works               | works                    | works             |
//! | `eth_getLogs`, receipts, blocks of the past     | works               | works                    | works             |
//! | state at a past block (`eth_call` at block N)  | "BlockOutOfRange"   | the last `n` blocks      | every block       |
//! | `anvil_reorg` / `anvil_rollback`               | "Required data unavailable" | up to `n` deep   | any depth         |
//! | per-block state on disk                        | none                | none                     | spilled to disk   |
//!
//! So a test that reorgs (`anvil_reorg`, `anvil_rollback`) or reads state at a past block must
//! ask for [`History::Recent`] (enough for its depth) or [`History::Full`]; snapshot/revert and
//! dump/load need no history.
//!
//! State on disk. anvil 1.x writes the per-block states it does not keep in memory under
//! `~/.foundry/anvil/tmp/anvil-state-<date><random>/` and leaves them there when it exits,
//! even on SIGTERM (a long `keeper bench` left gigabytes). Every anvil started here gets
//! `--cache-path` pointing into a temporary folder of its own instead, which is removed after
//! the process has exited (on [`Anvil::stop`], [`Anvil::restart`] or drop), whatever
//! [`History`] it runs with.

use alloy::transports::http::reqwest;
use std::{
    ffi::OsString,
    fs::File,
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    time::{Duration, Instant},
};

/// How long anvil may take to answer its first request.
pub const READY_WITHIN: Duration = Duration::from_secs(60);
/// How long [`Anvil::stop`] waits after SIGTERM (a large `--dump-state` takes a while) before
/// killing. A ceiling, not a delay: it returns the moment anvil exits, so it is generous enough
/// that a loaded machine never cuts off a state dump.
pub const STOP_WITHIN: Duration = Duration::from_secs(60);
/// Poll interval while waiting for anvil to answer or to exit.
const POLL: Duration = Duration::from_millis(50);
/// How long a drop waits for a killed anvil to be reaped. SIGKILL cannot be caught, so this
/// only bounds a kernel that is slow to tear the process down.
const REAP_WITHIN: Duration = Duration::from_secs(5);
/// The worlds use four roles: keeper, maker and two adversaries.
pub const MIN_DEV_KEYS: usize = 4;
/// How much of anvil's stderr an early-exit error quotes.
const STDERR_QUOTE_BYTES: usize = 2_000;

/// Arguments the kit sets itself: loopback, the port, the config-out file and the state folder
/// are never the caller's to choose.
const MANAGED_ARGS: [&str; 5] = ["--host", "--port", "--config-out", "--cache-path", "--ipc"];
const PRUNE_ARG: &str = "--prune-history";

#[derive(Debug, thiserror::Error)]
pub enum AnvilError {
    #[error("cannot start anvil at {path}; run `make bootstrap`")]
    Spawn {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("anvil on port {port} did not answer within {waited:?}")]
    NotReady { port: u16, waited: Duration },
    #[error("anvil exited before it answered ({status}): {stderr}")]
    Exited { status: ExitStatus, stderr: String },
    #[error("no free loopback port")]
    Port(#[source] std::io::Error),
    #[error("cannot make anvil's temporary folder")]
    TempDir(#[source] std::io::Error),
    #[error("cannot read anvil's dev accounts from its --config-out file {path}")]
    DevKeysRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("anvil's --config-out file {path} is not JSON")]
    DevKeysJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("anvil's dev accounts: {0}")]
    DevKeys(String),
    #[error("anvil argument {arg}: {why}")]
    Args { arg: String, why: &'static str },
}

pub type Result<T> = std::result::Result<T, AnvilError>;

/// How much chain history anvil keeps (see the module docs for what each allows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum History {
    /// `--prune-history`: only the latest state, nothing on disk. The default.
    #[default]
    Pruned,
    /// `--prune-history N`: the latest `N` states, in memory; reorgs up to `N` deep.
    Recent(u32),
    /// Every state; those past anvil's in-memory window spill to this instance's own folder.
    Full,
}

impl History {
    fn args(self) -> Vec<String> {
        match self {
            Self::Pruned => vec![PRUNE_ARG.to_string()],
            Self::Recent(n) => vec![PRUNE_ARG.to_string(), n.to_string()],
            Self::Full => Vec::new(),
        }
    }
}

/// How to start an anvil: [`Anvil::builder`].
#[derive(Debug, Clone)]
pub struct AnvilBuilder {
    bin: PathBuf,
    port: Option<u16>,
    args: Vec<String>,
    history: History,
    env: Vec<(OsString, OsString)>,
}

impl AnvilBuilder {
    /// A fixed port (default: a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = Some(port);
        self
    }

    /// More anvil arguments, e.g. `--dump-state FILE`, `--load-state FILE`, `--block-time 1`.
    /// `--host`, `--port`, `--config-out`, `--cache-path` and `--ipc` are refused (the kit sets
    /// them). A `--prune-history` here is accepted with the default [`History`] only (older
    /// callers pass it explicitly); otherwise say it with [`Self::history`].
    pub fn args<S: AsRef<str>>(mut self, args: &[S]) -> Self {
        self.args.extend(args.iter().map(|a| a.as_ref().to_string()));
        self
    }

    /// How much history to keep (default [`History::Pruned`]).
    pub fn history(mut self, history: History) -> Self {
        self.history = history;
        self
    }

    /// An environment variable for the anvil process (e.g. `HOME`, to see what it writes).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The full argument list after the kit's own, checked.
    fn checked_args(&self) -> Result<Vec<String>> {
        let mut prune_given = false;
        for arg in &self.args {
            let name = arg.split('=').next().unwrap_or_default();
            if MANAGED_ARGS.contains(&name) {
                return Err(AnvilError::Args {
                    arg: arg.clone(),
                    why: "set by riskgate-kit (loopback, port, config-out, state folder)",
                });
            }
            if name == PRUNE_ARG {
                prune_given = true;
            }
        }
        let mut out = Vec::new();
        match (prune_given, self.history) {
            (true, History::Pruned) => {}
            (true, _) => {
                return Err(AnvilError::Args {
                    arg: PRUNE_ARG.into(),
                    why: "contradicts the history asked for with AnvilBuilder::history",
                })
            }
            (false, history) => out.extend(history.args()),
        }
        out.extend(self.args.iter().cloned());
        Ok(out)
    }

    /// Starts anvil and waits until it answers.
    pub async fn start(self) -> Result<Anvil> {
        let args = self.checked_args()?;
        let port = match self.port {
            Some(p) => p,
            None => free_port()?,
        };
        let dir = tempfile::Builder::new()
            .prefix("riskgate-anvil-")
            .tempdir()
            .map_err(AnvilError::TempDir)?;
        let config_path = dir.path().join("anvil.json");
        let state_dir = dir.path().join("states");
        let stderr_path = dir.path().join("stderr.log");
        let stderr = File::create(&stderr_path).map_err(AnvilError::TempDir)?;
        let mut command = Command::new(&self.bin);
        command
            .arg("--host")
            .arg("127.0.0.1")
            .arg("--port")
            .arg(port.to_string())
            .arg("--config-out")
            .arg(&config_path)
            .arg("--cache-path")
            .arg(&state_dir)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        for (k, v) in &self.env {
            command.env(k, v);
        }
        // Tied: an owner killed outright (a test binary aborted, SIGKILL) takes its anvil along.
        let child = crate::tied::spawn(command)
            .map_err(|source| AnvilError::Spawn { path: self.bin.clone(), source })?;
        let url: reqwest::Url = format!("http://127.0.0.1:{port}")
            .parse()
            .expect("a loopback URL with a numeric port parses");
        let mut anvil = Anvil {
            child: Some(child),
            port,
            url,
            dev_keys: DevKeys(Vec::new()),
            builder: AnvilBuilder { port: Some(port), ..self },
            stderr_path,
            dir: Some(dir),
        };
        let started = Instant::now();
        anvil.wait_ready(READY_WITHIN).await?;
        anvil.dev_keys = read_dev_keys_written(&config_path, started + READY_WITHIN).await?;
        Ok(anvil)
    }
}

/// A running anvil; stopped on `stop()` or, as a last resort, killed on drop. Its state folder
/// is removed once the process has exited.
#[derive(Debug)]
pub struct Anvil {
    child: Option<Child>,
    pub port: u16,
    pub url: reqwest::Url,
    dev_keys: DevKeys,
    /// How it was started (the port fixed), for [`Anvil::restart`].
    builder: AnvilBuilder,
    stderr_path: PathBuf,
    /// Config-out file, stderr and the `--cache-path` state folder; removed after the process
    /// has exited (fields drop after `Drop::drop` ran).
    dir: Option<tempfile::TempDir>,
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
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(AnvilError::Port)?;
    let port = l.local_addr().map_err(AnvilError::Port)?.port();
    Ok(port)
}

/// The pinned anvil under `root` (installed by `make bootstrap`).
pub fn default_bin(root: &Path) -> PathBuf {
    root.join(".toolchain").join("bin").join("anvil")
}

impl Anvil {
    /// An anvil from the binary at `bin`, on a free port, with [`History::Pruned`].
    pub fn builder(bin: &Path) -> AnvilBuilder {
        AnvilBuilder {
            bin: bin.to_path_buf(),
            port: None,
            args: Vec::new(),
            history: History::default(),
            env: Vec::new(),
        }
    }

    /// Starts anvil on `port` (or a free one) with `extra` arguments and the default
    /// [`History::Pruned`], and waits until it answers.
    pub async fn start(path: &Path, port: Option<u16>, extra: &[String]) -> Result<Self> {
        let mut builder = Self::builder(path).args(extra);
        if let Some(port) = port {
            builder = builder.port(port);
        }
        builder.start().await
    }

    /// Dev account `index`'s key, as this anvil published it (local use only).
    pub fn dev_key(&self, index: usize) -> Result<&str> {
        self.dev_keys
            .0
            .get(index)
            .map(String::as_str)
            .ok_or_else(|| AnvilError::DevKeys(format!("no dev account {index}")))
    }

    /// The folder anvil was told to keep its per-block state in (`--cache-path`); removed when
    /// this anvil stops.
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.path().join("states"))
    }

    /// The history this anvil keeps.
    pub fn history(&self) -> History {
        self.builder.history
    }

    async fn wait_ready(&mut self, max: Duration) -> Result<()> {
        let start = Instant::now();
        let client = reqwest::Client::new();
        let body = serde_json::json!({"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]});
        while start.elapsed() < max {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                self.child = None;
                return Err(AnvilError::Exited { status, stderr: self.stderr_head() });
            }
            if let Ok(r) = client.post(self.url.clone()).json(&body).send().await {
                if r.status().is_success() {
                    return Ok(());
                }
            }
            tokio::time::sleep(POLL).await;
        }
        Err(AnvilError::NotReady { port: self.port, waited: max })
    }

    fn stderr_head(&self) -> String {
        let text = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
        let mut end = text.len().min(STDERR_QUOTE_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text[..end].trim().to_string()
    }

    /// Stops this anvil (SIGTERM, so a `--dump-state` is written) and starts a new one on the
    /// same port with the same history, `down_for` later, with `extra` arguments (e.g.
    /// `--load-state FILE`) instead of the first start's.
    pub async fn restart(
        &mut self,
        path: &Path,
        down_for: Duration,
        extra: &[String],
    ) -> Result<()> {
        self.terminate().await;
        self.dir = None;
        tokio::time::sleep(down_for).await;
        let builder =
            AnvilBuilder { bin: path.to_path_buf(), args: extra.to_vec(), ..self.builder.clone() };
        *self = builder.start().await?;
        Ok(())
    }

    /// Stops with SIGTERM (anvil writes `--dump-state` on the way out), waits up to
    /// [`STOP_WITHIN`] before killing, then removes the state folder.
    pub async fn stop(mut self) {
        self.terminate().await;
        self.dir = None;
    }

    async fn terminate(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        // SAFETY: plain kill(2) on the pid of a child we spawned and have not reaped (the
        // `Child` is still here, so its pid cannot have been reused).
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
        }
        let start = Instant::now();
        while start.elapsed() < STOP_WITHIN {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            tokio::time::sleep(POLL).await;
        }
        kill_and_reap(&mut child);
    }
}

/// SIGKILL, then wait (bounded) until the process is reaped, so nothing writes into the state
/// folder after it is removed.
fn kill_and_reap(child: &mut Child) {
    let _ = child.kill();
    let start = Instant::now();
    while start.elapsed() < REAP_WITHIN {
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Drop for Anvil {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_and_reap(&mut child);
        }
        // `dir` drops after this, removing the config-out file and the state folder.
    }
}

/// Reads `private_keys` from anvil's `--config-out` JSON once anvil has written it whole. Anvil
/// may answer RPC before it has finished writing the file (seen on a loaded machine: an empty
/// file right after the port answered), so a file that is missing, empty or cut short is read
/// again until `until`; anything else (no keys, too few) fails at once.
async fn read_dev_keys_written(path: &Path, until: Instant) -> Result<DevKeys> {
    loop {
        match read_dev_keys(path) {
            Err(AnvilError::DevKeysRead { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound && Instant::now() < until => {}
            Err(AnvilError::DevKeysJson { source, .. })
                if source.is_eof() && Instant::now() < until => {}
            done => return done,
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Reads `private_keys` from anvil's `--config-out` JSON.
fn read_dev_keys(path: &Path) -> Result<DevKeys> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| AnvilError::DevKeysRead { path: path.to_path_buf(), source })?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|source| AnvilError::DevKeysJson { path: path.to_path_buf(), source })?;
    let keys = json
        .get("private_keys")
        .and_then(|k| k.as_array())
        .ok_or_else(|| AnvilError::DevKeys("no private_keys array".into()))?
        .iter()
        .filter_map(|k| k.as_str().map(str::to_owned))
        .collect::<Vec<_>>();
    if keys.len() < MIN_DEV_KEYS {
        return Err(AnvilError::DevKeys(format!("{} keys, need {MIN_DEV_KEYS}", keys.len())));
    }
    Ok(DevKeys(keys))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(b: &AnvilBuilder) -> Result<Vec<String>> {
        b.checked_args()
    }

    #[test]
    fn history_becomes_its_flag_and_managed_args_are_refused() {
        let b = Anvil::builder(Path::new("anvil"));
        assert_eq!(argv(&b).unwrap(), vec!["--prune-history"]);
        assert_eq!(
            argv(&b.clone().history(History::Recent(64))).unwrap(),
            vec!["--prune-history", "64"]
        );
        assert!(argv(&b.clone().history(History::Full)).unwrap().is_empty());
        // An explicit --prune-history with the default history is not doubled (anvil refuses
        // the flag twice).
        assert_eq!(argv(&b.clone().args(&["--prune-history"])).unwrap(), vec!["--prune-history"]);
        assert!(matches!(
            argv(&b.clone().args(&["--prune-history"]).history(History::Full)),
            Err(AnvilError::Args { .. })
        ));
        for managed in ["--host", "--host=0.0.0.0", "--port", "--cache-path", "--config-out"] {
            assert!(
                matches!(argv(&b.clone().args(&[managed])), Err(AnvilError::Args { .. })),
                "{managed}"
            );
        }
    }
}
