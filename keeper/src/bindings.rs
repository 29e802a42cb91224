//! Contract bindings and the gate's fixed vocabulary (reason and verdict codes, units):
//! riskgate-kit's, shared with gate-sim's plumbing.
pub use riskgate_kit::bindings::*;
