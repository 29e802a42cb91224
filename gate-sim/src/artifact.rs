//! Loads the compiled contracts from forge's artifacts (`out/RiskGate.sol/RiskGate.json` and its
//! siblings `MarketFactory` and `TestCollateral`, which a v2 gate needs deployed next to it) and
//! checks that the gate's ABI carries the interface's selectors, so the differential never runs
//! against a contract that silently drifted from `IRiskGate`.

use crate::{abi, model::GateConfig};
use alloy::{
    json_abi::JsonAbi,
    primitives::{hex, Address, Bytes, Selector},
    sol_types::{SolCall, SolValue},
};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source} (run `.toolchain/bin/forge build contracts/src` first)")]
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

/// One contract's creation code and ABI.
#[derive(Clone, Debug)]
pub struct Artifact {
    pub creation_code: Vec<u8>,
    pub abi: JsonAbi,
    pub path: PathBuf,
}

impl Artifact {
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
        Ok(Self { creation_code, abi, path: path.to_path_buf() })
    }

    fn require(&self, wanted: &[(&'static str, Selector)]) -> Result<()> {
        for &(name, selector) in wanted {
            let found = self
                .abi
                .function(name)
                .is_some_and(|fs| fs.iter().any(|f| f.selector() == selector));
            if !found {
                return Err(Error::MissingFunction { path: self.path.clone(), name, selector });
            }
        }
        Ok(())
    }

    fn with_args(&self, args: &[u8]) -> Bytes {
        let mut code = self.creation_code.clone();
        code.extend_from_slice(args);
        code.into()
    }
}

/// The gate and the two contracts its constructor and its markets need.
#[derive(Clone, Debug)]
pub struct GateArtifact {
    pub gate: Artifact,
    pub factory: Artifact,
    pub collateral: Artifact,
    pub path: PathBuf,
}

impl GateArtifact {
    /// `path` is the gate's artifact; the factory's and the collateral's are its siblings in
    /// the same forge `out` folder.
    pub fn load(path: &Path) -> Result<Self> {
        let gate = Artifact::load(path)?;
        use abi::IRiskGate as G;
        gate.require(&[
            ("parseVerdict", G::parseVerdictCall::SELECTOR.into()),
            ("evaluate", G::evaluateCall::SELECTOR.into()),
            ("reasonLabel", G::reasonLabelCall::SELECTOR.into()),
            ("submitVerdict", G::submitVerdictCall::SELECTOR.into()),
            ("writeOff", G::writeOffCall::SELECTOR.into()),
            ("redeem", G::redeemCall::SELECTOR.into()),
            ("highWaterMark", G::highWaterMarkCall::SELECTOR.into()),
            ("paramsHash", G::paramsHashCall::SELECTOR.into()),
            ("deposit", G::depositCall::SELECTOR.into()),
            ("trustedCreators", G::trustedCreatorsCall::SELECTOR.into()),
            ("accountedCollateral", G::accountedCollateralCall::SELECTOR.into()),
        ])?;
        let out = path.parent().and_then(Path::parent).unwrap_or_else(|| Path::new("."));
        let factory = Artifact::load(&out.join("MarketFactory.sol/MarketFactory.json"))?;
        factory.require(&[
            ("createMarket", abi::IMarketFactory::createMarketCall::SELECTOR.into()),
            ("creatorOf", abi::IMarketFactory::creatorOfCall::SELECTOR.into()),
        ])?;
        let collateral = Artifact::load(&out.join("TestCollateral.sol/TestCollateral.json"))?;
        collateral.require(&[("mint", abi::ITestCollateral::mintCall::SELECTOR.into())])?;
        Ok(Self { gate, factory, collateral, path: path.to_path_buf() })
    }

    /// Gate creation code followed by the ABI-encoded constructor arguments (the keeper is
    /// `config.keeper`).
    pub fn initcode(&self, config: &GateConfig, factory: Address) -> Bytes {
        self.gate.with_args(&abi::constructor_args(config, factory))
    }

    /// `new MarketFactory(collateral)`.
    pub fn factory_initcode(&self, collateral: Address) -> Bytes {
        self.factory.with_args(&(collateral,).abi_encode_params())
    }

    /// `new TestCollateral()`.
    pub fn collateral_initcode(&self) -> Bytes {
        self.collateral.with_args(&[])
    }
}
