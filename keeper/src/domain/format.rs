//! Shared formatting for what the keeper shows people: amounts in collateral units, the feed's
//! decimal strings as integers, and hostile text (a model's answer, a server's label) made safe
//! inside a markdown table cell.

use std::fmt::Write;

/// Units helper: 1e6 base units shown as a decimal with six places.
pub fn units(v: &str) -> String {
    let neg = v.starts_with('-');
    let digits = v.trim_start_matches('-');
    let padded = format!("{digits:0>7}");
    let (int, frac) = padded.split_at(padded.len() - 6);
    format!("{}{int}.{frac}", if neg { "-" } else { "" })
}

/// Shown for a collateral token whose `symbol()` fails, is empty, or is not plain.
pub const NO_SYMBOL: &str = "units";
/// The longest symbol shown, in characters.
pub const SYMBOL_CHARS: usize = 12;

/// A token's `symbol()` as the pages may show it. The token's deployer chose it, so it is
/// hostile text that lands in markdown, HTML and SVG: it is kept only when it is 1 to
/// [`SYMBOL_CHARS`] letters, digits, `$`, `.` or `-` (no markup, no spacing, no bidi or
/// zero-width character), and is [`NO_SYMBOL`] otherwise.
pub fn token_symbol(raw: Option<&str>) -> String {
    match raw {
        Some(s)
            if (1..=SYMBOL_CHARS).contains(&s.chars().count())
                && s.chars().all(|c| c.is_alphanumeric() || matches!(c, '$' | '.' | '-')) =>
        {
            s.to_string()
        }
        _ => NO_SYMBOL.to_string(),
    }
}

/// An integer with its thousands grouped: 17268197 as "17,268,197".
pub fn grouped(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A decimal string as an integer (the feed's amounts are decimal strings of uint256 values
/// that, in any real record, fit comfortably in 128 bits; an unparsable one counts as 0).
pub fn int(v: &str) -> i128 {
    v.parse().unwrap_or(0)
}

/// A model's answer in a table cell: quoted, so leading and trailing spaces show, made safe by
/// [`md_cell`] and cut at 60 characters with its whole length.
pub fn answer_cell(s: &str) -> String {
    format!("\"{}\"", md_cell(s, 60))
}

/// Whether `c` would reorder, hide or join text around it, or is a control character other
/// than a line break or a tab (which HTML shows as white space, and a `<pre>` as itself).
pub fn invisible(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c as u32,
            0x061C | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F
            | 0xFEFF | 0xFFF9..=0xFFFB)
}

/// `s` safe inside HTML text or a quoted attribute: `& < > " '` escaped, invisible characters
/// shown as `⟨U+XXXX⟩`.
pub fn markup(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if invisible(c) => {
                let _ = write!(out, "⟨U+{:04X}⟩", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// A label in a table cell (a model name, what the server said it is, a scenario): text a
/// server or an operator chose, made safe by [`md_cell`] and cut at 80 characters.
pub fn label_cell(s: &str) -> String {
    md_cell(s, 80)
}

/// Hostile text (a model's answer, a market's question, a model label) as the text of one
/// markdown table cell, at most `max` characters of it: it cannot end the cell or the row,
/// open markup, a link or code, or hide or reorder what follows.
/// - `|` and the characters markdown reads as markup (`\ ` * _ [ ] ~ # !`) are
///   backslash-escaped, so they show as themselves;
/// - `& < >` are HTML-escaped, so no tag or entity is ever formed;
/// - line breaks, every other control character and the characters that reorder, hide or join
///   text ([`invisible`]: bidi overrides and isolates, zero-width characters) are shown as
///   `⟨U+XXXX⟩`, as the floor shows them;
/// - longer text is cut at `max` characters and says its whole length: `… (312 bytes)`.
pub fn md_cell(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(4 * max) + 16);
    for (i, c) in s.chars().enumerate() {
        if i == max {
            let _ = write!(out, "… ({} bytes)", s.len());
            break;
        }
        match c {
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '~' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() || invisible(c) => {
                let _ = write!(out, "⟨U+{:04X}⟩", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// `YYYY-MM-DD HH:MM` of a unix time, for years up to 9999 (days to civil date, proleptic
/// Gregorian).
pub fn utc_date(t: u64) -> Option<String> {
    if t > 253_402_300_799 {
        return None;
    }
    let days = (t / 86_400) as i64;
    let secs = t % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    Some(format!("{y:04}-{m:02}-{d:02} {:02}:{:02}", secs / 3_600, secs % 3_600 / 60))
}
