//! Loads the compiled RiskGate from forge's artifact (`out/RiskGate.sol/RiskGate.json`) and
//! checks that its ABI carries the interface's selectors, so the differential never runs
//! against a contract that silently drifted from `IRiskGate`.

use crate::{abi, model::Bounds};
use alloy::{
    json_abi::JsonAbi,
    primitives::{hex, Bytes, Selector},
    sol_types::SolCall,
};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source} (run `.toolchain/bin/forge build` first)")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a forge artifact: {reason}")]
    Format { path: PathBuf, reason: String },
    #[error("{path}: the ABI has no function {name} with selector {selector} (interface drift?)")]
    MissingFunction { path: PathBuf, name: &'static str, selector: Selector },
}

pub type Result<T> = std::result::Result<T, Error>;

/// The repository root: the parent of this crate's folder.
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map_or_else(|| manifest.to_path_buf(), Path::to_path_buf)
}

pub fn default_artifact_path() -> PathBuf {
    workspace_root().join("out/RiskGate.sol/RiskGate.json")
}

/// The gate's creation code, ready to take constructor arguments.
#[derive(Clone, Debug)]
pub struct GateArtifact {
    pub creation_code: Vec<u8>,
    pub path: PathBuf,
}

impl GateArtifact {
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
        let format = |reason: String| Error::Format { path: path.to_path_buf(), reason };
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format(e.to_string()))?;
        let object = json
            .pointer("/bytecode/object")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| format("no bytecode.object".into()))?;
        let creation_code = hex::decode(object).map_err(|e| format(e.to_string()))?;
        if creation_code.is_empty() {
            return Err(format("empty creation code (abstract contract?)".into()));
        }
        let abi_json = json.get("abi").cloned().ok_or_else(|| format("no abi".into()))?;
        let abi: JsonAbi = serde_json::from_value(abi_json).map_err(|e| format(e.to_string()))?;
        let wanted: [(&'static str, Selector); 3] = [
            ("parseVerdict", abi::IRiskGate::parseVerdictCall::SELECTOR.into()),
            ("evaluate", abi::IRiskGate::evaluateCall::SELECTOR.into()),
            ("reasonLabel", abi::IRiskGate::reasonLabelCall::SELECTOR.into()),
        ];
        for (name, selector) in wanted {
            let found =
                abi.function(name).is_some_and(|fs| fs.iter().any(|f| f.selector() == selector));
            if !found {
                return Err(Error::MissingFunction { path: path.to_path_buf(), name, selector });
            }
        }
        Ok(Self { creation_code, path: path.to_path_buf() })
    }

    /// Creation code followed by the ABI-encoded constructor arguments for `bounds`.
    pub fn initcode(&self, bounds: &Bounds) -> Bytes {
        let mut code = self.creation_code.clone();
        code.extend_from_slice(&abi::constructor_args(bounds));
        code.into()
    }
}
