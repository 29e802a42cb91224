//! Compiles `contracts/` with foundry-compilers and the project's pinned compiler (`tools/solc`,
//! no downloads), with the settings of `foundry.toml`, so what the keeper deploys and verifies
//! is exactly this source. Also masks immutables for the on-chain code check.

use alloy::primitives::Bytes;
use foundry_compilers::{
    artifacts::{BytecodeHash, EvmVersion, Optimizer, Remapping, Settings, SettingsMetadata},
    compilers::{
        multi::{MultiCompiler, MultiCompilerSettings},
        solc::{Solc, SolcCompiler, SolcSettings},
    },
    Project, ProjectPathsConfig,
};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("the pinned compiler {path} is missing or broken ({reason}); run `make bootstrap`")]
    Solc { path: PathBuf, reason: String },
    #[error("compiling contracts/ failed: {0}")]
    Compile(String),
    #[error("contract {0} not found in the compiled output (is contracts/src complete?)")]
    Missing(String),
    #[error("contract {0} has no bytecode (abstract or interface?)")]
    NoBytecode(String),
}

pub type Result<T> = std::result::Result<T, CompileError>;

/// One compiled contract.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub name: String,
    /// Creation code.
    pub bytecode: Bytes,
    /// Runtime code, with zeros where immutables go.
    pub deployed: Bytes,
    /// (start, length) of every immutable slot in the runtime code.
    pub immutables: Vec<(usize, usize)>,
}

/// The contracts the keeper deploys or verifies.
#[derive(Debug, Clone)]
pub struct Artifacts {
    pub gate: Compiled,
    pub factory: Compiled,
    pub collateral: Compiled,
}

/// Compiles with the settings of foundry.toml: optimizer 10,000 runs, EVM prague, no metadata
/// hash and no CBOR trailer (so paths never change the bytecode).
pub fn compile(root: &Path) -> Result<Artifacts> {
    let solc_path = root.join("tools").join("solc");
    let solc = Solc::new(&solc_path)
        .map_err(|e| CompileError::Solc { path: solc_path.clone(), reason: e.to_string() })?;
    let compiler = MultiCompiler::new(Some(SolcCompiler::Specific(solc)), None)
        .map_err(|e| CompileError::Solc { path: solc_path.clone(), reason: e.to_string() })?;
    let oz = root.join("tools/node_modules/@openzeppelin/contracts/");
    let remap: Remapping =
        format!("@openzeppelin/contracts/={}/", oz.display().to_string().trim_end_matches('/'))
            .parse()
            .map_err(|e| CompileError::Compile(format!("remapping: {e}")))?;
    let work = root.join("target").join("keeper-solc");
    let paths = ProjectPathsConfig::builder()
        .root(root)
        .sources(root.join("contracts/src"))
        .artifacts(work.join("out"))
        .cache(work.join("cache").join("solidity-files-cache.json"))
        .lib(root.join("tools/node_modules"))
        .remapping(remap)
        .build_with_root(root);
    let settings = Settings {
        optimizer: Optimizer { enabled: Some(true), runs: Some(10_000), details: None },
        metadata: Some(SettingsMetadata {
            use_literal_content: None,
            bytecode_hash: Some(BytecodeHash::None),
            cbor_metadata: Some(false),
        }),
        evm_version: Some(EvmVersion::Prague),
        ..Default::default()
    };
    let settings = MultiCompilerSettings {
        solc: SolcSettings { settings, ..Default::default() },
        ..Default::default()
    };
    let project = Project::builder()
        .paths(paths)
        .settings(settings)
        .offline()
        .build(compiler)
        .map_err(|e| CompileError::Compile(e.to_string()))?;
    let output = project.compile().map_err(|e| CompileError::Compile(e.to_string()))?;
    if output.has_compiler_errors() {
        return Err(CompileError::Compile(crate::chain::short(&output.to_string())));
    }
    let find = |name: &str| -> Result<Compiled> {
        let art = output.find_first(name).ok_or_else(|| CompileError::Missing(name.into()))?;
        let bytecode = art
            .bytecode
            .as_ref()
            .and_then(|b| b.object.as_bytes())
            .cloned()
            .ok_or_else(|| CompileError::NoBytecode(name.into()))?;
        let dep =
            art.deployed_bytecode.as_ref().ok_or_else(|| CompileError::NoBytecode(name.into()))?;
        let deployed = dep
            .bytecode
            .as_ref()
            .and_then(|b| b.object.as_bytes())
            .cloned()
            .ok_or_else(|| CompileError::NoBytecode(name.into()))?;
        let immutables = dep
            .immutable_references
            .values()
            .flatten()
            .map(|o| (o.start as usize, o.length as usize))
            .collect();
        Ok(Compiled { name: name.into(), bytecode, deployed, immutables })
    };
    Ok(Artifacts {
        gate: find("RiskGate")?,
        factory: find("MarketFactory")?,
        collateral: find("TestCollateral")?,
    })
}

/// Zeroes the given byte ranges (immutables) so code can be compared independent of the
/// constructor arguments that filled them.
pub fn mask(code: &[u8], ranges: &[(usize, usize)]) -> Vec<u8> {
    let mut out = code.to_vec();
    for &(start, len) in ranges {
        let end = start.saturating_add(len).min(out.len());
        if start < end {
            out[start..end].fill(0);
        }
    }
    out
}

/// True when `onchain` runtime code equals the compiled runtime code with immutables masked.
pub fn code_matches(compiled: &Compiled, onchain: &[u8]) -> bool {
    onchain.len() == compiled.deployed.len()
        && mask(onchain, &compiled.immutables) == mask(&compiled.deployed, &compiled.immutables)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masking_ignores_only_the_immutable_ranges() {
        let compiled = Compiled {
            name: "X".into(),
            bytecode: Bytes::new(),
            deployed: Bytes::from(vec![1, 2, 0, 0, 5]),
            immutables: vec![(2, 2)],
        };
        assert!(code_matches(&compiled, &[1, 2, 9, 9, 5])); // differs only inside [2, 4)
        assert!(!code_matches(&compiled, &[1, 3, 9, 9, 5])); // differs at byte 1
        assert!(!code_matches(&compiled, &[1, 2, 9, 9])); // length differs
        assert_eq!(mask(&[7, 7], &[(1, 5)]), vec![7, 0]); // range past the end is clamped
    }
}
