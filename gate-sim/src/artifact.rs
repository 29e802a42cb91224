//! Loads the compiled contracts from forge's artifacts (`out/RiskGate.sol/RiskGate.json` and its
//! siblings `MarketFactory` and `TestCollateral`, which a v2 gate needs deployed next to it) and
//! checks that the gate's ABI carries the interface's selectors, and the gate's, the factory's
//! and `BinaryMarket`'s ABIs the functions, events and errors this crate declares itself
//! (`abi::spec`), so the differential never runs against a contract that silently drifted from
//! `IRiskGate` or from the specification.

use crate::{abi, attested::AttestorSetting, model::GateConfig};
use alloy::{
    json_abi::JsonAbi,
    primitives::{hex, Address, Bytes, Selector, B256},
    sol_types::{SolCall, SolError, SolEvent, SolValue},
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
    #[error("{path}: the ABI has no event {name} with topic {topic} and {indexed} indexed fields (interface drift?)")]
    MissingEvent { path: PathBuf, name: &'static str, topic: B256, indexed: usize },
    #[error("{path}: the ABI has no error {name} with selector {selector} (interface drift?)")]
    MissingError { path: PathBuf, name: &'static str, selector: Selector },
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

    /// Events by name, topic and number of indexed fields (a field indexed or not changes
    /// where it is in the log, not the topic).
    fn require_events(&self, wanted: &[(&'static str, B256, usize)]) -> Result<()> {
        for &(name, topic, indexed) in wanted {
            let found = self.abi.event(name).is_some_and(|es| {
                es.iter().any(|e| {
                    e.selector() == topic
                        && e.inputs.iter().filter(|i| i.indexed).count() == indexed
                })
            });
            if !found {
                return Err(Error::MissingEvent { path: self.path.clone(), name, topic, indexed });
            }
        }
        Ok(())
    }

    fn require_errors(&self, wanted: &[(&'static str, Selector)]) -> Result<()> {
        for &(name, selector) in wanted {
            let found =
                self.abi.error(name).is_some_and(|es| es.iter().any(|e| e.selector() == selector));
            if !found {
                return Err(Error::MissingError { path: self.path.clone(), name, selector });
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
            ("submitVerdict", abi::IGateSubmit::submitVerdictCall::SELECTOR.into()),
            ("submitVerdicts", abi::IGateSubmit::submitVerdictsCall::SELECTOR.into()),
            ("writeOff", G::writeOffCall::SELECTOR.into()),
            ("redeem", G::redeemCall::SELECTOR.into()),
            ("highWaterMark", G::highWaterMarkCall::SELECTOR.into()),
            ("paramsHash", G::paramsHashCall::SELECTOR.into()),
            ("deposit", G::depositCall::SELECTOR.into()),
            ("trustedCreators", G::trustedCreatorsCall::SELECTOR.into()),
            ("accountedCollateral", G::accountedCollateralCall::SELECTOR.into()),
        ])?;
        gate.require(&[
            ("gateMode", abi::IGateMode::gateModeCall::SELECTOR.into()),
            ("attestorSet", abi::IGateMode::attestorSetCall::SELECTOR.into()),
            ("submitAttestedVerdicts", abi::IGateMode::submitAttestedVerdictsCall::SELECTOR.into()),
        ])?;
        gate.require_errors(&[
            ("AttestationShape", abi::IGateMode::AttestationShape::SELECTOR.into()),
            ("AttestedReadMissing", abi::IGateMode::AttestedReadMissing::SELECTOR.into()),
            ("AttestedElementShort", abi::IGateMode::AttestedElementShort::SELECTOR.into()),
        ])?;
        use abi::IGateSubmit as S;
        gate.require_events(&[("Decision", S::Decision::SIGNATURE_HASH, 3)])?;
        gate.require_errors(&[
            ("ReadBlockInFuture", S::ReadBlockInFuture::SELECTOR.into()),
            ("NotKeeper", S::NotKeeper::SELECTOR.into()),
            ("GatePaused", S::GatePaused::SELECTOR.into()),
            ("UnknownMarket", S::UnknownMarket::SELECTOR.into()),
            ("BatchEmpty", S::BatchEmpty::SELECTOR.into()),
            ("OrderGasShort", S::OrderGasShort::SELECTOR.into()),
        ])?;
        let out = path.parent().and_then(Path::parent).unwrap_or_else(|| Path::new("."));
        let factory = Artifact::load(&out.join("MarketFactory.sol/MarketFactory.json"))?;
        use abi::IMarketFactory as F;
        factory.require(&[
            ("createMarket", F::createMarketCall::SELECTOR.into()),
            ("creatorOf", F::creatorOfCall::SELECTOR.into()),
            ("marketCount", F::marketCountCall::SELECTOR.into()),
        ])?;
        factory.require_events(&[("MarketCreated", F::MarketCreated::SIGNATURE_HASH, 3)])?;
        factory.require_errors(&[
            ("QuestionEmpty", F::QuestionEmpty::SELECTOR.into()),
            ("QuestionTooLong", F::QuestionTooLong::SELECTOR.into()),
        ])?;
        // The factory's markets answer `questionHash()`.
        let market = Artifact::load(&out.join("BinaryMarket.sol/BinaryMarket.json"))?;
        market.require(&[(
            "questionHash",
            abi::IMarketQuestion::questionHashCall::SELECTOR.into(),
        )])?;
        // The attested gate's set, deployed by the gate's constructor: its ABI must carry what
        // this crate declares of `IAttestorSet`.
        let set = Artifact::load(&out.join("AttestorSet.sol/AttestorSet.json"))?;
        use abi::IAttestorSet as A;
        set.require(&[
            ("tally", A::tallyCall::SELECTOR.into()),
            ("attestors", A::attestorsCall::SELECTOR.into()),
            ("isAttestor", A::isAttestorCall::SELECTOR.into()),
            ("domainSeparator", A::domainSeparatorCall::SELECTOR.into()),
            ("gate", A::gateCall::SELECTOR.into()),
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

    /// The same for a gate in the mode `setting` names (issue 35).
    pub fn initcode_with(
        &self,
        config: &GateConfig,
        factory: Address,
        setting: &AttestorSetting,
    ) -> Bytes {
        self.gate.with_args(&abi::constructor_args_with(config, factory, setting))
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
