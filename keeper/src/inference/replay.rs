//! Replay provider: answers read from a file, one JSON-escaped string per line, handed out in
//! order. Used by tests and by the demo's hostile segment. When the file runs out the provider
//! fails (an off-chain row); it never makes an answer up.

use super::{InferenceError, Result};
use std::{
    path::Path,
    sync::atomic::{AtomicUsize, Ordering},
};

#[derive(Debug)]
pub struct Replay {
    label: String,
    answers: Vec<String>,
    next: AtomicUsize,
}

impl Replay {
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| InferenceError::ReplayFile {
            path: path.display().to_string(),
            source,
        })?;
        let label = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Self::from_lines(&label, &text)
    }

    /// Parses lines; blank lines are skipped, every other line must be one JSON string.
    pub fn from_lines(label: &str, text: &str) -> Result<Self> {
        let mut answers = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let answer: String = serde_json::from_str(line).map_err(|source| {
                InferenceError::ReplayLine { path: label.to_string(), line: n + 1, source }
            })?;
            answers.push(answer);
        }
        Ok(Self { label: label.to_string(), answers, next: AtomicUsize::new(0) })
    }

    pub fn from_answers(label: &str, answers: Vec<String>) -> Self {
        Self { label: label.to_string(), answers, next: AtomicUsize::new(0) }
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn next(&self) -> Result<String> {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        self.answers.get(i).cloned().ok_or_else(|| InferenceError::ReplayExhausted {
            path: self.label.clone(),
            used: self.answers.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_json_strings_kept_byte_for_byte() {
        let r =
            Replay::from_lines("t", "\"BUY_UP\\n\"\n\n\"\\\"BUY_UP\\\"\"\n\"buy_up\"\n").unwrap();
        assert_eq!(r.next().unwrap(), "BUY_UP\n");
        assert_eq!(r.next().unwrap(), "\"BUY_UP\"");
        assert_eq!(r.next().unwrap(), "buy_up");
        assert!(matches!(r.next(), Err(InferenceError::ReplayExhausted { used: 3, .. })));
    }

    #[test]
    fn a_line_that_is_not_json_is_refused() {
        assert!(Replay::from_lines("t", "BUY_UP\n").is_err());
    }
}
