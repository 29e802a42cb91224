//! A real browser for the floor's tests and bench: Debian's headless Chromium, driven over the
//! W3C WebDriver protocol through its ChromeDriver, on loopback. `make bootstrap` installs
//! both (packages `chromium` and `chromium-driver`).
//!
//! Chromium starts with a fresh profile and with its background networking off, so it makes
//! no request but the pages' own.

use serde_json::{json, Value};
use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

/// Where Debian's packages put them.
pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// How long ChromeDriver and a page may take to come up on a loaded machine.
const START_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(
        "{0} is missing: install Debian's chromium and chromium-driver (`make bootstrap` does, as \
         root; else `sudo apt-get install chromium chromium-driver`)"
    )]
    Missing(&'static str),
    #[error("starting {what}")]
    Start {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("chromedriver did not answer on port {0} within {START_TIMEOUT:?}")]
    NoDriver(u16),
    #[error("webdriver {what}")]
    Http {
        what: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("webdriver {what} failed: {detail}")]
    Command { what: String, detail: String },
    #[error("writing {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, BrowserError>;

/// One headless Chromium session; ChromeDriver and the browser stop when it is dropped.
pub struct Browser {
    driver: tokio::process::Child,
    base: String,
    session: String,
    http: reqwest::Client,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts ChromeDriver on a free loopback port and opens a session of `width`×`height`.
    pub async fn start(width: u32, height: u32) -> Result<Self> {
        for bin in [CHROMIUM, CHROMEDRIVER] {
            if !Path::new(bin).exists() {
                return Err(BrowserError::Missing(bin));
            }
        }
        let port = crate::kit::anvil::free_port().map_err(|e| BrowserError::Start {
            what: "chromedriver",
            source: std::io::Error::other(e),
        })?;
        let driver = tokio::process::Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group, with the browser it starts: a drop kills them all.
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| BrowserError::Start { what: "chromedriver", source })?;
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::builder()
            .timeout(START_TIMEOUT)
            .build()
            .map_err(|source| BrowserError::Http { what: "client".into(), source })?;
        let t0 = Instant::now();
        loop {
            let ready = http.get(format!("{base}/status")).send().await.ok();
            if let Some(r) = ready {
                if let Ok(v) = r.json::<Value>().await {
                    if v["value"]["ready"] == json!(true) {
                        break;
                    }
                }
            }
            if t0.elapsed() > START_TIMEOUT {
                return Err(BrowserError::NoDriver(port));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = tempfile::tempdir()
            .map_err(|source| BrowserError::Start { what: "chromium profile", source })?;
        let args = vec![
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--disable-dev-shm-usage".into(),
            "--hide-scrollbars".into(),
            "--force-device-scale-factor=1".into(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        let caps = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": CHROMIUM, "args": args },
            "goog:loggingPrefs": { "browser": "ALL" },
        }}});
        let mut b = Self { driver, base, session: String::new(), http, _profile: profile };
        let v = b.call("POST", "/session", Some(caps), "new session").await?;
        b.session = v["sessionId"].as_str().unwrap_or_default().to_string();
        if b.session.is_empty() {
            return Err(BrowserError::Command {
                what: "new session".into(),
                detail: v.to_string(),
            });
        }
        Ok(b)
    }

    async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        what: &str,
    ) -> Result<Value> {
        let url = format!("{}{path}", self.base);
        let req = match method {
            "POST" => self.http.post(&url).json(&body.unwrap_or(json!({}))),
            "DELETE" => self.http.delete(&url),
            _ => self.http.get(&url),
        };
        let http = |source| BrowserError::Http { what: what.to_string(), source };
        let res = req.send().await.map_err(http)?;
        let ok = res.status().is_success();
        let v: Value = res.json().await.map_err(http)?;
        if !ok || v["value"].get("error").is_some() {
            return Err(BrowserError::Command {
                what: what.to_string(),
                detail: v["value"].to_string(),
            });
        }
        Ok(v["value"].clone())
    }

    fn at(&self, path: &str) -> String {
        format!("/session/{}{path}", self.session)
    }

    /// Loads `url` and waits for it (WebDriver's normal page-load strategy).
    pub async fn goto(&self, url: &str) -> Result<()> {
        self.call("POST", &self.at("/url"), Some(json!({ "url": url })), &format!("open {url}"))
            .await?;
        Ok(())
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page and returns its
    /// value. WebDriver runs it through DevTools, so the page's CSP does not stop it.
    pub async fn eval(&self, script: &str, args: Vec<Value>) -> Result<Value> {
        self.call(
            "POST",
            &self.at("/execute/sync"),
            Some(json!({ "script": script, "args": args })),
            "execute",
        )
        .await
    }

    /// The browser's console lines since the last call (CSP violations show here).
    pub async fn console(&self) -> Vec<String> {
        match self
            .call("POST", &self.at("/se/log"), Some(json!({ "type": "browser" })), "log")
            .await
        {
            Ok(Value::Array(lines)) => lines
                .iter()
                .map(|l| l["message"].as_str().unwrap_or_default().to_string())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Sets the window to `width`×`height`.
    pub async fn resize(&self, width: u32, height: u32) -> Result<()> {
        let rect = json!({ "width": width, "height": height });
        self.call("POST", &self.at("/window/rect"), Some(rect), "resize").await?;
        Ok(())
    }

    /// A PNG of the window as it stands, written to `path`.
    pub async fn screenshot(&self, path: &Path) -> Result<()> {
        use base64::Engine as _;
        let v = self.call("GET", &self.at("/screenshot"), None, "screenshot").await?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap_or_default())
            .map_err(|e| BrowserError::Command {
                what: "screenshot".into(),
                detail: e.to_string(),
            })?;
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        std::fs::write(path, png)
            .map_err(|source| BrowserError::Write { path: path.into(), source })
    }

    /// Ends the session and stops ChromeDriver and the browser.
    pub async fn stop(mut self) {
        let _ = self.call("DELETE", &self.at(""), None, "end session").await;
        self.kill_group();
        let _ = self.driver.kill().await;
    }

    /// SIGKILL to ChromeDriver's process group: the browser and its helpers with it.
    fn kill_group(&self) {
        if let Some(pid) = self.driver.id() {
            // SAFETY: the group is the one ChromeDriver leads (`process_group(0)` above).
            unsafe { libc::kill(-(pid as libc::pid_t), libc::SIGKILL) };
        }
    }
}

impl Drop for Browser {
    /// A test that panics mid-session leaves no browser behind.
    fn drop(&mut self) {
        self.kill_group();
    }
}
