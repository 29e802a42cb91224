//! Any OpenAI-compatible `/v1/chat/completions` server (llama.cpp, Ollama, vLLM, hosted APIs),
//! over HTTP or HTTPS (rustls; roots from the system store, or `SSL_CERT_FILE`). The closed
//! answer set goes out in the system prompt and, unless `--response-format none`, as a
//! JSON-schema constraint. The API key is read from KEEPER_OPENAI_API_KEY and never logged.
//!
//! What comes back is never filtered or rewritten. An answer that arrived is submitted as is,
//! even when empty; a tool-call answer is submitted as its `arguments` string, and a refusal
//! (`message.refusal`, with no content and no tool call) as its text. The row records which of
//! the three it was ([`Arrival`]) and the `model` the server said answered (llama.cpp's server
//! reports its model file there, whatever the request asked for). The one reading
//! the keeper does is in `object` mode: when the content is exactly the schema's object
//! `{"verdict": "<string>"}`, the `verdict` string is submitted (verbatim); anything else is
//! submitted whole, and the gate publishes it as reason 11. Only a failure to get an answer at
//! all (transport, timeout, HTTP error, a body that is not a chat completion) is an error, and
//! it keeps the status, the body (truncated), `finish_reason` and the attempt number.
//!
//! 429 and 503 are retried, at most [`MAX_ATTEMPTS`] times: after the server's `Retry-After`
//! (seconds or an HTTP-date) plus a small jitter, else after a jittered exponential backoff. A
//! `Retry-After` longer than [`MAX_RETRY_WAIT`] is not waited out, nor one that would land past
//! the quote's deadline: the ask fails, and its off-chain row says which and why
//! ([`InferenceError::NotRetried`], [`InferenceError::OutOfTime`]).
//!
//! # What each server accepts for the response format
//!
//! The request carries `response_format: {"type": "json_schema", "json_schema": {"name":
//! "verdict", "strict": true, "schema": ...}}` (OpenAI's Structured Outputs shape).
//! - **OpenAI**: `json_schema` with `strict: true`. Strict mode requires an object root with
//!   every property required and `additionalProperties: false`, which is what `object` sends; a
//!   bare string root (`string` mode) is rejected by strict mode, so use `object` there.
//! - **vLLM**: the OpenAI server accepts `response_format` of type `json_schema` and enforces it
//!   by guided decoding; its own `guided_json` extra parameter does the same. Whether `strict`
//!   changes anything there is not verified here.
//! - **llama.cpp server**: turns a JSON schema into a grammar; it takes it in `response_format`
//!   (`json_schema`, or `json_object` with a `schema`) or in a top-level `json_schema` field.
//!   Grammar-based, so a string root (`string` mode) works too. Not verified here against a
//!   running server.
//! - **Ollama**: its native `/api/chat` takes a JSON schema in `format`. Its OpenAI-compatible
//!   endpoint takes `response_format`; that it honours `json_schema` (rather than only
//!   `json_object`) in every version is not verified here.
//!
//! `none` sends no `response_format` at all, for a server that rejects the field.

use super::{Arrival, InferenceError, NotRetried, Prompt, Reply, Result};
use crate::domain::config::{InferenceOptions, ResponseFormat};
use serde_json::{json, Value};
use std::{
    collections::BTreeMap,
    time::{Duration, SystemTime},
};

/// The closed set of answers.
pub const VERDICTS: [&str; 3] = ["BUY_UP", "BUY_DOWN", "ABSTAIN"];

/// Attempts per answer when the server says 429 or 503.
pub const MAX_ATTEMPTS: u32 = 4;
/// The longest the keeper waits before one retry; a server asking for more is not retried.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);
/// First backoff step when the server gives no `Retry-After`; doubled on every attempt.
const BACKOFF_BASE: Duration = Duration::from_millis(500);
/// At most this much is added to a server's `Retry-After`, so many keepers do not retry at once.
const RETRY_AFTER_JITTER_MS: u64 = 250;
/// How long the one `GET /v1/models` at start may take.
const DESCRIBE_WITHIN: Duration = Duration::from_secs(10);
/// Bytes of a failed response's body kept in the off-chain row.
pub const BODY_KEEP_BYTES: usize = 512;

#[derive(Debug, Clone)]
pub struct OpenAiClient {
    url: String,
    models_url: String,
    model: String,
    timeout: Duration,
    options: InferenceOptions,
    http: reqwest::Client,
    /// A model file the keeper knows by hash: the bundled one, when it started the server.
    known: Option<KnownModel>,
    /// What `GET /v1/models` said about each model id ([`OpenAiClient::describe`]).
    described: BTreeMap<String, String>,
    /// `GET /props` (llama.cpp's server): how many requests it decodes at once. More asks in
    /// flight than this only queue at the server, where they can time out.
    slots: Option<usize>,
}

/// The bundled model, as tools/llm.lock pins it.
#[derive(Debug, Clone)]
struct KnownModel {
    file: String,
    sha256: String,
    label: String,
}

/// The bundled server's request slots when `--model-slots` is not given: one. `keeper bench
/// --model-only` measures one slot against one per core, with llama.cpp's continuous batching
/// and without; on the 2-core machine this project is built on, one slot answered 0.93 asks a
/// second and two 0.55 (0.57 without continuous batching): the model's two threads already use
/// both cores, and two slots only share them.
pub const DEFAULT_SLOTS: u32 = 1;

/// One request slot per core of this machine: what the bench compares one slot against.
pub fn core_slots() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

impl OpenAiClient {
    pub fn new(
        base_url: &str,
        model: &str,
        timeout: Duration,
        options: InferenceOptions,
    ) -> Result<Self> {
        let base = base_url.trim_end_matches('/');
        let url = if base.ends_with("/v1") {
            format!("{base}/chat/completions")
        } else {
            format!("{base}/v1/chat/completions")
        };
        let models_url = format!("{}models", url.trim_end_matches("chat/completions"));
        let http =
            reqwest::Client::builder().timeout(timeout).build().map_err(InferenceError::Client)?;
        Ok(Self {
            url,
            models_url,
            model: model.to_string(),
            timeout,
            options,
            http,
            known: None,
            described: BTreeMap::new(),
            slots: None,
        })
    }

    /// Starts the bundled model's server from `root`'s toolchain (`make bootstrap` installed it
    /// and checked the file's sha256 against tools/llm.lock) and a client for it that knows the
    /// file by hash. The server runs `threads` CPU threads (None: the kit's default). It stops
    /// when the returned handle is dropped.
    pub async fn bundled(
        root: &std::path::Path,
        timeout: Duration,
        options: InferenceOptions,
        threads: Option<u32>,
        slots: Option<u32>,
    ) -> Result<(Self, riskgate_kit::llm::LlmServer)> {
        use riskgate_kit::llm;
        let mut opts = llm::LlmOptions::bundled(root).map_err(InferenceError::Bundled)?;
        if let Some(t) = threads {
            opts.threads = t.max(1);
        }
        opts.parallel = slots.unwrap_or(DEFAULT_SLOTS).max(1);
        let server = llm::LlmServer::start(opts).await.map_err(InferenceError::Bundled)?;
        let client = Self::for_bundled(&server, timeout, options).await?;
        Ok((client, server))
    }

    /// A client for a bundled-model server this process started (so it knows the file by the
    /// hash tools/llm.lock pins and `make bootstrap` checked).
    pub async fn for_bundled(
        server: &riskgate_kit::llm::LlmServer,
        timeout: Duration,
        options: InferenceOptions,
    ) -> Result<Self> {
        let pinned = riskgate_kit::llm::bundled_model().map_err(InferenceError::Bundled)?;
        let mut client = Self::new(server.base_url(), &pinned.file, timeout, options)?;
        client.known =
            Some(KnownModel { file: pinned.file, sha256: pinned.sha256, label: pinned.label });
        client.describe().await;
        Ok(client)
    }

    /// The same client with another response format (one server asked two ways).
    pub fn with_format(mut self, format: ResponseFormat) -> Self {
        self.options.response_format = format;
        self
    }

    /// The same client sampling at another temperature and seed (one server, asked by several
    /// parties each with its own sampling, as a consensus demo's validators are).
    pub fn with_sampling(mut self, temperature: f32, seed: Option<u64>) -> Self {
        self.options.temperature = temperature;
        self.options.seed = seed;
        self
    }

    /// Reads the server's description of its models once (`GET /v1/models`; llama.cpp adds
    /// each model's parameter count and quantisation in `meta`). A server that does not answer
    /// it is still used: its rows then say the size was not reported.
    pub async fn describe(&mut self) {
        // A server slow to list its models must not hold up the start for the inference
        // timeout (which may be long for a slow model).
        let mut req = self.http.get(&self.models_url).timeout(self.timeout.min(DESCRIBE_WITHIN));
        if let Ok(key) = std::env::var("KEEPER_OPENAI_API_KEY") {
            if !key.is_empty() {
                req = req.bearer_auth(key);
            }
        }
        let body = match req.send().await {
            Ok(r) if r.status().is_success() => r.text().await.unwrap_or_default(),
            Ok(r) => {
                tracing::warn!(status = r.status().as_u16(), url = %self.models_url, "the server did not describe its models");
                return;
            }
            Err(e) => {
                tracing::warn!(error = %crate::error_chain(&e), url = %self.models_url, "the server did not describe its models");
                return;
            }
        };
        self.described = describe_models(&body);
        self.slots = self.read_slots().await;
        if let Some(n) = self.slots {
            tracing::info!(
                slots = n,
                "the server answers {n} requests at once; asks in flight are capped at that"
            );
        }
    }

    /// The server's slot count from `GET /props` (`total_slots`), when it reports one.
    async fn read_slots(&self) -> Option<usize> {
        let props = format!("{}props", self.url.trim_end_matches("v1/chat/completions"));
        let r = self.http.get(&props).timeout(self.timeout.min(DESCRIBE_WITHIN)).send().await;
        let body = r.ok().filter(|r| r.status().is_success())?.text().await.ok()?;
        slots_of(&body)
    }

    /// How many requests the server decodes at once, if it said ([`OpenAiClient::describe`]).
    pub fn slots(&self) -> Option<usize> {
        self.slots
    }

    /// What answered, for a row: "language model: " and, as far as it is known, its size and
    /// quantisation (the bundled model's label from tools/llm.lock, else the server's own
    /// description).
    pub fn kind_of(&self, served: Option<&str>) -> String {
        if let (Some(k), Some(m)) = (&self.known, served) {
            if k.file == m {
                return format!("language model: {}", k.label);
            }
        }
        match served.and_then(|m| self.described.get(m)) {
            Some(d) => format!("language model: {d}"),
            None => "language model (size and quantisation not reported by the server)".into(),
        }
    }

    /// The served model file's sha256, when it is the bundled file this keeper started.
    pub fn sha256_of(&self, served: Option<&str>) -> Option<String> {
        self.known.as_ref().filter(|k| served == Some(k.file.as_str())).map(|k| k.sha256.clone())
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// The request body: the operator's sampling options and the answer-shape constraint.
    pub fn body(&self, prompt: &Prompt) -> Value {
        let mut body = json!({
            "model": self.model,
            "temperature": self.options.temperature,
            "max_tokens": self.options.max_tokens,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ],
        });
        if let Some(seed) = self.options.seed {
            body["seed"] = json!(seed);
        }
        let schema = match self.options.response_format {
            ResponseFormat::Object => Some(json!({
                "type": "object",
                "properties": {"verdict": {"type": "string", "enum": VERDICTS}},
                "required": ["verdict"],
                "additionalProperties": false,
            })),
            ResponseFormat::String => Some(json!({"type": "string", "enum": VERDICTS})),
            ResponseFormat::None => None,
        };
        if let Some(schema) = schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": "verdict", "strict": true, "schema": schema},
            });
        }
        body
    }

    /// Asks for one answer, retrying 429 and 503 as the server says (bounded). The returned
    /// text is submitted as is.
    pub async fn ask(&self, prompt: &Prompt) -> Result<Reply> {
        self.ask_until(prompt, None).await
    }

    /// [`OpenAiClient::ask`], retrying only while a retry could still answer before `until`.
    pub async fn ask_until(
        &self,
        prompt: &Prompt,
        until: Option<std::time::Instant>,
    ) -> Result<Reply> {
        let body = self.body(prompt);
        let mut attempt = 1;
        loop {
            let err = match self.attempt(&body, attempt).await {
                Ok(got) => {
                    return Ok(Reply {
                        text: submission(&got.text, self.options.response_format),
                        arrival: got.arrival,
                        served_model: got.model,
                    })
                }
                Err(e) => e,
            };
            let InferenceError::Http { status, retry_after, .. } = &err else { return Err(err) };
            if !matches!(status, 429 | 503) {
                return Err(err);
            }
            let (status, retry_after) = (*status, *retry_after);
            let not_retried =
                |why, err| InferenceError::NotRetried { attempt, why, last: Box::new(err) };
            if attempt >= MAX_ATTEMPTS {
                return Err(not_retried(NotRetried::AttemptsUsed { most: MAX_ATTEMPTS }, err));
            }
            let wait = retry_wait(retry_after, attempt);
            // Past the quote's deadline says more than "too long": check it first.
            if until.is_some_and(|u| std::time::Instant::now() + wait >= u) {
                return Err(InferenceError::OutOfTime {
                    attempt,
                    retry_in: wait,
                    last: Box::new(err),
                });
            }
            if wait > MAX_RETRY_WAIT {
                let asked = retry_after.unwrap_or(wait);
                return Err(not_retried(
                    NotRetried::WaitTooLong { asked, most: MAX_RETRY_WAIT },
                    err,
                ));
            }
            tracing::warn!(
                status,
                attempt,
                retry_in_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                "inference HTTP {status} on attempt {attempt}; retrying"
            );
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// One request. `Ok` is the answer as it arrived (possibly empty).
    async fn attempt(&self, body: &Value, attempt: u32) -> Result<Extracted> {
        let mut req = self.http.post(&self.url).json(body);
        if let Ok(key) = std::env::var("KEEPER_OPENAI_API_KEY") {
            if !key.is_empty() {
                req = req.bearer_auth(key);
            }
        }
        let transport = |source: reqwest::Error| {
            if source.is_timeout() {
                InferenceError::Timeout { after: self.timeout, attempt }
            } else {
                InferenceError::Transport { attempt, source }
            }
        };
        let send = async {
            let resp = req.send().await.map_err(transport)?;
            let status = resp.status();
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, SystemTime::now()));
            let text = resp.text().await.map_err(transport)?;
            if !status.is_success() {
                return Err(InferenceError::Http {
                    status: status.as_u16(),
                    body: truncate(&text, BODY_KEEP_BYTES),
                    retry_after,
                    attempt,
                });
            }
            extract_answer(&text).map_err(|(reason, finish_reason)| InferenceError::Malformed {
                status: status.as_u16(),
                body: truncate(&text, BODY_KEEP_BYTES),
                finish_reason,
                reason,
                attempt,
            })
        };
        // The client timeout covers each phase; this bounds the whole exchange.
        tokio::time::timeout(self.timeout + Duration::from_millis(100), send)
            .await
            .map_err(|_| InferenceError::Timeout { after: self.timeout, attempt })?
    }
}

/// Each model id in a `GET /v1/models` body with what the server says it is: "N parameters,
/// QUANT" from llama.cpp's `meta` (`n_params`, `ftype`), as far as given. Ids the server
/// describes no further are left out.
pub fn describe_models(body: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Ok(v) = serde_json::from_str::<Value>(body) else { return out };
    for m in v.get("data").and_then(Value::as_array).into_iter().flatten() {
        let (Some(id), Some(meta)) = (m.get("id").and_then(Value::as_str), m.get("meta")) else {
            continue;
        };
        let mut parts = Vec::new();
        if let Some(n) = meta.get("n_params").and_then(Value::as_u64) {
            parts.push(format!("{:.1}M parameters", n as f64 / 1e6));
        }
        if let Some(q) = meta.get("ftype").and_then(Value::as_str) {
            parts.push(q.to_string());
        }
        if !parts.is_empty() {
            out.insert(id.to_string(), parts.join(", "));
        }
    }
    out
}

/// An answer read out of a chat completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    /// Exactly as sent.
    pub text: String,
    pub arrival: Arrival,
    /// The completion's `model` field: who the server says answered.
    pub model: Option<String>,
}

/// The answer in a chat completion, exactly as sent: the first choice's message content or,
/// when that is empty, its first tool call's `arguments` string (a legacy `function_call` too),
/// or else its `refusal` text. A message with none of them is an empty answer (as content),
/// which is still an answer. The error is the reason the body is not a chat completion, with
/// the choice's `finish_reason` when there was one.
pub fn extract_answer(body: &str) -> std::result::Result<Extracted, (String, Option<String>)> {
    let v: Value =
        serde_json::from_str(body).map_err(|e| (format!("body is not JSON: {e}"), None))?;
    let model = v.get("model").and_then(Value::as_str).map(str::to_string);
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| ("no choices[0] in the completion".to_string(), None))?;
    let finish_reason = choice.get("finish_reason").and_then(Value::as_str).map(str::to_string);
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| ("no choices[0].message in the completion".to_string(), finish_reason))?;
    let as_text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        // Content parts (an array) or object arguments are an answer too: their JSON text.
        other => other.to_string(),
    };
    let got = |text: String, arrival: Arrival| Extracted { text, arrival, model: model.clone() };
    if let Some(c) = message.get("content").filter(|c| !c.is_null()) {
        let text = as_text(c);
        if !text.is_empty() {
            return Ok(got(text, Arrival::Content));
        }
    }
    let tool_args = message
        .get("tool_calls")
        .and_then(|t| t.get(0))
        .and_then(|t| t.get("function"))
        .or_else(|| message.get("function_call"))
        .and_then(|f| f.get("arguments"));
    if let Some(a) = tool_args {
        return Ok(got(as_text(a), Arrival::ToolCall));
    }
    if let Some(Value::String(r)) = message.get("refusal") {
        return Ok(got(r.clone(), Arrival::Refusal));
    }
    Ok(got(String::new(), Arrival::Content))
}

/// What is submitted for an answer: in `object` mode, the `verdict` string when the answer is
/// exactly `{"verdict": "<string>"}`; otherwise the answer itself. Nothing is trimmed.
pub fn submission(answer: &str, format: ResponseFormat) -> String {
    if format == ResponseFormat::Object {
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(answer) {
            if map.len() == 1 {
                if let Some(Value::String(verdict)) = map.get("verdict") {
                    return verdict.clone();
                }
            }
        }
    }
    answer.to_string()
}

/// `Retry-After` as a wait from `now`: delay-seconds, or an HTTP-date (a date in the past is
/// no wait).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The wait before attempt `attempt + 1`: the server's `Retry-After` plus up to 250 ms of
/// jitter (never less than told), else an exponential backoff with "equal jitter" (between half
/// and all of `BACKOFF_BASE * 2^(attempt-1)`).
pub fn retry_wait(retry_after: Option<Duration>, attempt: u32) -> Duration {
    match retry_after {
        Some(told) => told + Duration::from_millis(fastrand::u64(0..=RETRY_AFTER_JITTER_MS)),
        None => {
            let step = BACKOFF_BASE.saturating_mul(1 << attempt.saturating_sub(1).min(10));
            let half = step / 2;
            half + half.mul_f64(fastrand::f64())
        }
    }
}

/// At most `max` bytes of `s`, cut on a character boundary.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// `total_slots` of a llama.cpp `/props` body; None for anything else (zero included).
fn slots_of(body: &str) -> Option<usize> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let n = v.get("total_slots")?.as_u64()?;
    usize::try_from(n).ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(format: ResponseFormat) -> OpenAiClient {
        let options = InferenceOptions { response_format: format, ..InferenceOptions::default() };
        OpenAiClient::new("http://127.0.0.1:1/", "m", Duration::from_secs(1), options).unwrap()
    }

    #[test]
    fn slots_come_from_total_slots_only() {
        assert_eq!(slots_of(r#"{"total_slots": 4, "x": 1}"#), Some(4));
        assert_eq!(slots_of(r#"{"total_slots": 0}"#), None);
        assert_eq!(slots_of(r#"{"total_slots": "4"}"#), None);
        assert_eq!(slots_of("<html>not found</html>"), None);
    }

    #[test]
    fn content_is_returned_untouched() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":"\"BUY_UP\"\n"}}]}"#;
        let got = extract_answer(body).unwrap();
        assert_eq!((got.text.as_str(), got.arrival), ("\"BUY_UP\"\n", Arrival::Content));
        assert_eq!(got.model, None);
        let named = r#"{"model":"SmolLM2-135M-Instruct.Q4_1.gguf","choices":[{"message":{"content":"x"}}]}"#;
        assert_eq!(
            extract_answer(named).unwrap().model.as_deref(),
            Some("SmolLM2-135M-Instruct.Q4_1.gguf")
        );
    }

    #[test]
    fn empty_and_tool_call_answers_are_answers() {
        let empty = r#"{"choices":[{"message":{"content":""},"finish_reason":"length"}]}"#;
        assert_eq!(extract_answer(empty).unwrap().text, "");
        let null = r#"{"choices":[{"message":{"content":null}}]}"#;
        assert_eq!(extract_answer(null).unwrap().text, "");
        let tool = r#"{"choices":[{"message":{"content":null,"tool_calls":[{"type":"function",
            "function":{"name":"verdict","arguments":"{\"verdict\": \"BUY_UP\"}"}}]}}]}"#;
        let got = extract_answer(tool).unwrap();
        assert_eq!(
            (got.text.as_str(), got.arrival),
            (r#"{"verdict": "BUY_UP"}"#, Arrival::ToolCall)
        );
        let refusal = r#"{"choices":[{"message":{"content":null,"refusal":"I can't help"}}]}"#;
        let got = extract_answer(refusal).unwrap();
        assert_eq!((got.text.as_str(), got.arrival), ("I can't help", Arrival::Refusal));
    }

    #[test]
    fn a_body_that_is_not_a_completion_is_an_error_with_its_finish_reason() {
        assert!(extract_answer("<html>").unwrap_err().0.contains("not JSON"));
        assert!(extract_answer(r#"{"choices":[]}"#).is_err());
        let no_msg = r#"{"choices":[{"finish_reason":"content_filter"}]}"#;
        assert_eq!(extract_answer(no_msg).unwrap_err().1.as_deref(), Some("content_filter"));
    }

    #[test]
    fn object_mode_submits_the_verdict_string_or_the_whole_answer() {
        let o = ResponseFormat::Object;
        assert_eq!(submission(r#"{"verdict":"BUY_DOWN"}"#, o), "BUY_DOWN");
        assert_eq!(submission("{\"verdict\": \" ABSTAIN\"}\n", o), " ABSTAIN");
        // Not exactly the object: submitted whole.
        for whole in [r#"{"verdict":"BUY_UP","why":"x"}"#, r#"{"verdict":1}"#, "BUY_UP", ""] {
            assert_eq!(submission(whole, o), whole);
        }
        assert_eq!(
            submission(r#"{"verdict":"BUY_UP"}"#, ResponseFormat::String),
            r#"{"verdict":"BUY_UP"}"#
        );
    }

    #[test]
    fn request_carries_the_options_and_the_chosen_constraint() {
        let c = client(ResponseFormat::Object);
        assert_eq!(c.url, "http://127.0.0.1:1/v1/chat/completions");
        let p = Prompt { system: "s".into(), user: "u".into() };
        let body = c.body(&p);
        assert_eq!(body["max_tokens"], json!(256));
        let rf = &body["response_format"];
        assert_eq!(
            (rf["type"].as_str(), rf["json_schema"]["strict"].as_bool()),
            (Some("json_schema"), Some(true))
        );
        let schema = &rf["json_schema"]["schema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(
            schema["properties"]["verdict"]["enum"],
            json!(["BUY_UP", "BUY_DOWN", "ABSTAIN"])
        );
        let s = client(ResponseFormat::String).body(&p);
        assert_eq!(s["response_format"]["json_schema"]["schema"]["type"], "string");
        assert!(client(ResponseFormat::None).body(&p).get("response_format").is_none());
    }

    #[test]
    fn a_llama_cpp_model_list_names_size_and_quantisation() {
        // As llama.cpp's server answers GET /v1/models for the bundled file.
        let body = r#"{"object":"list","data":[{"id":"SmolLM2-135M-Instruct.Q4_1.gguf",
            "meta":{"n_params":134515008,"ftype":"Q4_1"}},{"id":"bare"}]}"#;
        let d = describe_models(body);
        // 134,515,008 / 1e6 = 134.5
        assert_eq!(d["SmolLM2-135M-Instruct.Q4_1.gguf"], "134.5M parameters, Q4_1");
        assert!(!d.contains_key("bare"));
        assert!(describe_models("not json").is_empty());
        let c = client(ResponseFormat::Object);
        assert_eq!(c.models_url, "http://127.0.0.1:1/v1/models");
        assert_eq!(
            c.kind_of(Some("x")),
            "language model (size and quantisation not reported by the server)"
        );
        assert_eq!(c.sha256_of(Some("x")), None);
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn retry_waits_are_never_shorter_than_told_and_stay_bounded() {
        for attempt in 1..=MAX_ATTEMPTS {
            let w = retry_wait(Some(Duration::from_secs(2)), attempt);
            assert!(w >= Duration::from_secs(2) && w <= Duration::from_millis(2_250), "{w:?}");
            let step = BACKOFF_BASE * (1 << (attempt - 1));
            let b = retry_wait(None, attempt);
            assert!(b >= step / 2 && b <= step, "{b:?} for attempt {attempt}");
        }
        assert!(retry_wait(None, u32::MAX) <= BACKOFF_BASE * 1024);
    }

    #[test]
    fn truncation_keeps_whole_characters() {
        assert_eq!(truncate("abc", 2), "ab");
        assert_eq!(truncate("é", 1), "");
        assert_eq!(truncate("short", 512), "short");
    }
}
