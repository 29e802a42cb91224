//! Any OpenAI-compatible `/v1/chat/completions` server (llama.cpp, Ollama, vLLM, hosted APIs).
//! The closed answer set goes out both in the system prompt and as a JSON-schema enum
//! constraint; the text that comes back is returned untouched. The API key is read from
//! KEEPER_OPENAI_API_KEY and never logged.

use super::{InferenceError, Prompt, Result};
use serde_json::{json, Value};
use std::time::Duration;

#[derive(Debug)]
pub struct OpenAiClient {
    url: String,
    model: String,
    timeout: Duration,
    http: reqwest::Client,
}

/// The closed set of answers.
pub const VERDICTS: [&str; 3] = ["BUY_UP", "BUY_DOWN", "ABSTAIN"];

impl OpenAiClient {
    pub fn new(base_url: &str, model: &str, timeout: Duration) -> Result<Self> {
        let base = base_url.trim_end_matches('/');
        let url = if base.ends_with("/v1") {
            format!("{base}/chat/completions")
        } else {
            format!("{base}/v1/chat/completions")
        };
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| InferenceError::Transport(e.to_string()))?;
        Ok(Self { url, model: model.to_string(), timeout, http })
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// The request body: deterministic sampling, a short answer, and the enum constraint.
    pub fn body(&self, prompt: &Prompt) -> Value {
        json!({
            "model": self.model,
            "temperature": 0,
            "max_tokens": 16,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": "verdict",
                    "strict": true,
                    "schema": {"type": "string", "enum": VERDICTS},
                },
            },
        })
    }

    pub async fn ask(&self, prompt: &Prompt) -> Result<String> {
        let mut req = self.http.post(&self.url).json(&self.body(prompt));
        if let Ok(key) = std::env::var("KEEPER_OPENAI_API_KEY") {
            if !key.is_empty() {
                req = req.bearer_auth(key);
            }
        }
        let send = async {
            let resp = req.send().await.map_err(|e| {
                if e.is_timeout() {
                    InferenceError::Timeout(self.timeout)
                } else {
                    InferenceError::Transport(crate::chain::short(&e.to_string()))
                }
            })?;
            let status = resp.status();
            let text = resp.text().await.map_err(|e| {
                if e.is_timeout() {
                    InferenceError::Timeout(self.timeout)
                } else {
                    InferenceError::Transport(crate::chain::short(&e.to_string()))
                }
            })?;
            if !status.is_success() {
                return Err(InferenceError::Http {
                    status: status.as_u16(),
                    body: crate::chain::short(&text),
                });
            }
            extract_content(&text)
        };
        // The client timeout covers each phase; this bounds the whole exchange.
        tokio::time::timeout(self.timeout + Duration::from_millis(100), send)
            .await
            .map_err(|_| InferenceError::Timeout(self.timeout))?
    }
}

/// The first choice's message content, exactly as sent by the server.
pub fn extract_content(body: &str) -> Result<String> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| InferenceError::Malformed(format!("body is not JSON: {e}")))?;
    let content = v
        .get("choices")
        .and_then(|c| c.get(0))
        .and_then(|c| c.get("message"))
        .and_then(|m| m.get("content"))
        .and_then(Value::as_str)
        .ok_or_else(|| InferenceError::Malformed("no choices[0].message.content".into()))?;
    if content.is_empty() {
        return Err(InferenceError::Empty);
    }
    Ok(content.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_returned_untouched() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":"\"BUY_UP\"\n"}}]}"#;
        assert_eq!(extract_content(body).unwrap(), "\"BUY_UP\"\n");
    }

    #[test]
    fn empty_and_malformed_answers_are_errors_not_directions() {
        let empty = r#"{"choices":[{"message":{"content":""}}]}"#;
        assert!(matches!(extract_content(empty), Err(InferenceError::Empty)));
        assert!(matches!(extract_content("<html>"), Err(InferenceError::Malformed(_))));
        assert!(matches!(extract_content(r#"{"choices":[]}"#), Err(InferenceError::Malformed(_))));
    }

    #[test]
    fn request_carries_the_enum_constraint() {
        let c = OpenAiClient::new("http://127.0.0.1:1/", "m", Duration::from_secs(1)).unwrap();
        assert_eq!(c.url, "http://127.0.0.1:1/v1/chat/completions");
        let p = Prompt { system: "s".into(), user: "u".into() };
        let body = c.body(&p);
        assert_eq!(
            body["response_format"]["json_schema"]["schema"]["enum"],
            json!(["BUY_UP", "BUY_DOWN", "ABSTAIN"])
        );
    }
}
