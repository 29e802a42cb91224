//! A contract error, decoded into the contracts' own error enums so that a log or a report says
//! `UnknownMarket(UnknownMarket { market: 0x.., factory: 0x.. })`, not hex. The gate's errors
//! are tried first, then the venue's (market, factory) and the test collateral's (ERC-20).

use crate::bindings::{
    IBinaryMarket::IBinaryMarketErrors, IMarketFactory::IMarketFactoryErrors,
    IRiskGate::IRiskGateErrors, ITestCollateral::ITestCollateralErrors,
};
use alloy::{primitives::hex, sol_types::SolInterface};

/// How much of the first line of an undecoded error is kept (node messages can be long and
/// carry the whole request).
pub const SHORT_CHARS: usize = 240;

/// The contract error `e`: the decoded error with its values when the revert data is one of
/// the contracts' errors, else the error's own text (first line, at most [`SHORT_CHARS`]).
pub fn describe(e: &alloy::contract::Error) -> String {
    decoded(e).unwrap_or_else(|| short(&e.to_string()))
}

/// The contract error `e` decoded as one of the contracts' errors with its values, `None` when
/// it is not one (a transport failure, an empty revert, another contract's error).
pub fn decoded(e: &alloy::contract::Error) -> Option<String> {
    if let Some(decoded) = e.as_decoded_interface_error::<IRiskGateErrors>() {
        return Some(format!("{decoded:?}"));
    }
    e.as_revert_data().and_then(|data| decode(&data))
}

/// A contract call or transaction that failed, naming the call: its revert decoded when it is
/// one of the contracts' errors (`approve reverted: ERC20InsufficientBalance { .. }`), and the
/// whole error underneath as its source, so nothing of the cause is lost.
#[derive(Debug, thiserror::Error)]
#[error("{call} {}", match .decoded { Some(d) => format!("reverted: {d}"), None => "failed".to_string() })]
pub struct CallFailed {
    pub call: &'static str,
    pub decoded: Option<String>,
    #[source]
    pub source: Box<alloy::contract::Error>,
}

impl CallFailed {
    pub fn new(call: &'static str, source: alloy::contract::Error) -> Self {
        Self { call, decoded: decoded(&source), source: Box::new(source) }
    }

    /// `.map_err(CallFailed::on("approve"))`.
    pub fn on(call: &'static str) -> impl Fn(alloy::contract::Error) -> Self {
        move |source| Self::new(call, source)
    }
}

/// Revert data decoded as one of the contracts' errors, `None` when it is none of them.
pub fn decode(data: &[u8]) -> Option<String> {
    if let Ok(e) = IRiskGateErrors::abi_decode(data) {
        return Some(format!("{e:?}"));
    }
    if let Ok(e) = IBinaryMarketErrors::abi_decode(data) {
        return Some(format!("{e:?}"));
    }
    if let Ok(e) = IMarketFactoryErrors::abi_decode(data) {
        return Some(format!("{e:?}"));
    }
    if let Ok(e) = ITestCollateralErrors::abi_decode(data) {
        return Some(format!("{e:?}"));
    }
    None
}

/// Revert data decoded as one of the contracts' errors, or as `0x`-prefixed hex when it is
/// none of them (an empty revert is `0x`).
pub fn describe_data(data: &[u8]) -> String {
    decode(data).unwrap_or_else(|| format!("0x{}", hex::encode(data)))
}

/// The first line of `s`, cut to [`SHORT_CHARS`] bytes on a character boundary, with `...`
/// when cut.
pub fn short(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    if line.len() <= SHORT_CHARS {
        return line.to_string();
    }
    let mut end = SHORT_CHARS;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &line[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::{IRiskGate, ITestCollateral};
    use alloy::{
        primitives::{Address, U256},
        sol_types::SolError,
    };

    #[test]
    fn gate_and_token_errors_decode_with_their_values() {
        let market = Address::repeat_byte(0x11);
        let factory = Address::repeat_byte(0x22);
        let data = IRiskGate::UnknownMarket { market, factory }.abi_encode();
        let text = describe_data(&data);
        assert!(text.starts_with("UnknownMarket("), "{text}");
        assert!(text.contains(&format!("{market}")) && text.contains(&format!("{factory}")));

        let needed = U256::from(7u64);
        let data = ITestCollateral::ERC20InsufficientBalance {
            sender: market,
            balance: U256::ZERO,
            needed,
        }
        .abi_encode();
        assert!(describe_data(&data).starts_with("ERC20InsufficientBalance("));
    }

    #[test]
    fn a_failed_call_names_itself_and_keeps_its_cause() {
        let transport = alloy::contract::Error::TransportError(
            alloy::transports::TransportErrorKind::custom_str("connection refused"),
        );
        let e = CallFailed::new("approve", transport);
        assert_eq!(e.to_string(), "approve failed");
        let cause = std::error::Error::source(&e).map(ToString::to_string).unwrap_or_default();
        assert!(cause.contains("connection refused"), "{cause}");
    }

    #[test]
    fn unknown_data_is_hex_and_long_text_is_cut_on_a_char_boundary() {
        assert_eq!(describe_data(&[0xde, 0xad]), "0xdead");
        assert_eq!(describe_data(&[]), "0x");
        // 239 ASCII bytes then a 2-byte 'é': byte 240 falls inside it, so the cut is at 239.
        let long = format!("{}é tail\nsecond line", "a".repeat(SHORT_CHARS - 1));
        let cut = short(&long);
        assert_eq!(cut, format!("{}...", "a".repeat(SHORT_CHARS - 1)));
        assert_eq!(short("one\ntwo"), "one");
    }
}
