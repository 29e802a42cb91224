//! The riskgate keeper: runs an agent against `RiskGate`, publishes the feed, and re-derives it
//! from chain. The keeper never decides a price or a size: the one number it sends, its quote
//! (the price the model was shown plus an operator-set slippage, and a deadline), can only
//! tighten what the gate does. It never filters or rewrites a model answer (the gate parses; a
//! bad answer becomes a published reason-11 row), and never invents a direction: when inference
//! fails nothing is submitted and the failure is an off-chain row. It asks only about markets
//! whose resolver the gate trusts, and writes off positions whose market never settles.

// The layers, top to bottom (keeper/tests/modules.rs holds every import to this order):
// dev → commands → engine → chain, inference, record → domain → kit.
pub mod chain;
pub mod commands;
#[cfg(feature = "dev")]
pub mod dev;
pub mod domain;
pub mod engine;
pub mod inference;
pub mod kit;
pub mod record;

/// An error and every cause under it, on one line ("a: b: c"), so "error sending request for
/// url (https://…)" shows the real cause beneath it. A cause whose text the line already holds
/// (a wrapper that also prints its source) is not repeated.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = c.source();
    }
    one_line(&line)
}

/// `text` on one printable line: line breaks and tabs become spaces, any other control
/// character is escaped (`\u{1b}`), so a node's or a contract's message (revert bytes shown as
/// text, say) cannot move the cursor or rewrite a terminal.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("custom error 0x9c2b2973: \u{1b}[2J\u{0}\nsecond line")]
    struct Inner;

    #[test]
    fn an_error_chain_is_one_printable_line() {
        // The cause is appended after ": "; ESC and NUL are escaped, the line break is a space.
        assert_eq!(
            error_chain(&Outer(Inner)),
            "outer: custom error 0x9c2b2973: \\u{1b}[2J\\u{0} second line"
        );
    }
}
