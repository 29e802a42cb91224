//! Compiles `contracts/src` with foundry-compilers and the project's pinned compiler (no
//! downloads), with every setting that shapes the bytecode read from `foundry.toml`'s
//! `[profile.default]`, so what the keeper deploys and verifies is exactly what `forge build`
//! makes from this source. Also masks immutables for the on-chain code check.
//!
//! The settings are read, never copied: change `optimizer_runs` in `foundry.toml` and both forge
//! and this module follow. A key this module does not know is an error (it might change the
//! bytecode), as is a bytecode setting in another profile or in a `FOUNDRY_*` variable (forge
//! would follow it, this module would not).

use alloy::primitives::Bytes;
use foundry_compilers::{
    artifacts::{
        BytecodeHash, DebuggingSettings, EvmVersion, Optimizer, Remapping, RevertStrings, Settings,
        SettingsMetadata,
    },
    compilers::{
        multi::{MultiCompiler, MultiCompilerSettings},
        solc::{Solc, SolcCompiler, SolcSettings},
    },
    Project, ProjectPathsConfig,
};
use std::path::{Path, PathBuf};

/// The configuration file, at the repository root.
pub const FOUNDRY_TOML: &str = "foundry.toml";
/// The profile forge builds and deploys with unless told otherwise.
pub const DEFAULT_PROFILE: &str = "default";

/// Keys of a profile that shape the bytecode; each is read into [`FoundryProfile`].
pub const BYTECODE_KEYS: [&str; 12] = [
    "src",
    "libs",
    "remappings",
    "solc",
    "solc_version",
    "optimizer",
    "optimizer_runs",
    "via_ir",
    "evm_version",
    "bytecode_hash",
    "cbor_metadata",
    "revert_strings",
];

/// Keys of a profile known not to change the bytecode of `contracts/src` (test, script and
/// output settings). Any key in neither list is an error.
pub const OTHER_KEYS: [&str; 33] = [
    "test",
    "script",
    "out",
    "cache",
    "cache_path",
    "broadcast",
    "offline",
    "fs_permissions",
    "fuzz",
    "invariant",
    "ffi",
    "verbosity",
    "gas_reports",
    "gas_reports_ignore",
    "deny_warnings",
    "ignored_error_codes",
    "ignored_warnings_from",
    "sender",
    "tx_origin",
    "initial_balance",
    "block_number",
    "block_timestamp",
    "gas_limit",
    "gas_price",
    "chain_id",
    "memory_limit",
    "isolate",
    "show_progress",
    "build_info",
    "build_info_path",
    "names",
    "sizes",
    "force",
];

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML")]
    Toml {
        path: PathBuf,
        #[source]
        source: toml::de::Error,
    },
    #[error("foundry.toml: {0}")]
    Config(String),
    #[error(
        "foundry.toml: [profile.{profile}] sets `{key}`, which riskgate-kit does not know and \
         which might change the bytecode; teach riskgate_kit::compile to read it (or list it as \
         harmless there) before using it"
    )]
    UnknownSetting { profile: String, key: String },
    #[error(
        "foundry.toml: [profile.{profile}] sets `{key}`, a bytecode setting; riskgate-kit \
         compiles and verifies with [profile.default] only, so set it there"
    )]
    ProfileOverride { profile: String, key: String },
    #[error(
        "the environment sets {var}, which forge would apply to `{key}` and riskgate-kit would \
         not; unset it or change foundry.toml instead"
    )]
    EnvOverride { var: String, key: String },
    #[error("the pinned compiler {path} is missing or broken; run `make bootstrap`")]
    Solc {
        path: PathBuf,
        #[source]
        source: Box<foundry_compilers::error::SolcError>,
    },
    #[error("remapping `{0}` is not `prefix=path`")]
    Remapping(String),
    #[error("compiling contracts failed")]
    Project(#[source] Box<foundry_compilers::error::SolcError>),
    #[error("compiling contracts failed: {0}")]
    Compile(String),
    #[error("contract {0} not found in the compiled output (is contracts/src complete?)")]
    Missing(String),
    #[error("contract {0} has no bytecode (abstract or interface?)")]
    NoBytecode(String),
}

pub type Result<T> = std::result::Result<T, CompileError>;

/// Every setting of `[profile.default]` that shapes the bytecode, as read from `foundry.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundryProfile {
    /// Sources, relative to the root.
    pub src: PathBuf,
    /// Library folders, relative to the root.
    pub libs: Vec<PathBuf>,
    /// `prefix=path`, path relative to the root.
    pub remappings: Vec<String>,
    /// The compiler binary, relative to the root (a bare version would need a download).
    pub solc: PathBuf,
    pub optimizer: bool,
    /// Present when the optimizer is on.
    pub optimizer_runs: Option<usize>,
    pub via_ir: bool,
    pub evm_version: EvmVersion,
    pub bytecode_hash: BytecodeHash,
    pub cbor_metadata: bool,
    pub revert_strings: Option<RevertStrings>,
}

fn config(msg: impl Into<String>) -> CompileError {
    CompileError::Config(msg.into())
}

/// One profile's table, with typed getters that name the key in their errors.
struct Table<'a>(&'a toml::Table);

impl<'a> Table<'a> {
    fn get(&self, key: &str) -> Option<&'a toml::Value> {
        self.0.get(key)
    }

    fn required(&self, key: &str) -> Result<&'a toml::Value> {
        self.get(key).ok_or_else(|| {
            config(format!(
                "[profile.default] must set `{key}` explicitly (riskgate-kit does not guess \
                 forge's default)"
            ))
        })
    }

    fn string(v: &toml::Value, key: &str) -> Result<String> {
        v.as_str().map(str::to_owned).ok_or_else(|| config(format!("`{key}` must be a string")))
    }

    fn boolean(v: &toml::Value, key: &str) -> Result<bool> {
        v.as_bool().ok_or_else(|| config(format!("`{key}` must be true or false")))
    }

    fn strings(&self, key: &str) -> Result<Option<Vec<String>>> {
        let Some(v) = self.get(key) else { return Ok(None) };
        let list = v.as_array().ok_or_else(|| config(format!("`{key}` must be a list")))?;
        list.iter().map(|item| Self::string(item, key)).collect::<Result<Vec<_>>>().map(Some)
    }
}

impl FoundryProfile {
    /// Reads `root/foundry.toml` and checks the environment for `FOUNDRY_*` overrides of a
    /// bytecode setting.
    pub fn read(root: &Path) -> Result<Self> {
        for key in BYTECODE_KEYS {
            let var = format!("FOUNDRY_{}", key.to_ascii_uppercase());
            if std::env::var_os(&var).is_some() {
                return Err(CompileError::EnvOverride { var, key: key.into() });
            }
        }
        let path = root.join(FOUNDRY_TOML);
        let text = std::fs::read_to_string(&path)
            .map_err(|source| CompileError::Read { path: path.clone(), source })?;
        let doc: toml::Table =
            text.parse().map_err(|source| CompileError::Toml { path: path.clone(), source })?;
        Self::from_table(&doc)
    }

    /// Reads the settings from a parsed `foundry.toml`.
    pub fn from_table(doc: &toml::Table) -> Result<Self> {
        let profiles = doc
            .get("profile")
            .and_then(toml::Value::as_table)
            .ok_or_else(|| config("no [profile] table"))?;
        for (name, table) in profiles {
            let table = table
                .as_table()
                .ok_or_else(|| config(format!("[profile.{name}] is not a table")))?;
            for key in table.keys() {
                let known_bytecode = BYTECODE_KEYS.contains(&key.as_str());
                if !known_bytecode && !OTHER_KEYS.contains(&key.as_str()) {
                    return Err(CompileError::UnknownSetting {
                        profile: name.clone(),
                        key: key.clone(),
                    });
                }
                if known_bytecode && name != DEFAULT_PROFILE {
                    return Err(CompileError::ProfileOverride {
                        profile: name.clone(),
                        key: key.clone(),
                    });
                }
            }
        }
        let table = profiles
            .get(DEFAULT_PROFILE)
            .and_then(toml::Value::as_table)
            .ok_or_else(|| config("no [profile.default] table"))?;
        let t = Table(table);

        let src = PathBuf::from(Table::string(t.required("src")?, "src")?);
        let libs = t.strings("libs")?.unwrap_or_default().into_iter().map(PathBuf::from).collect();
        let remappings = t.strings("remappings")?.unwrap_or_default();
        let solc = match (t.get("solc"), t.get("solc_version")) {
            (Some(_), Some(_)) => return Err(config("set `solc` or `solc_version`, not both")),
            (Some(v), None) => Table::string(v, "solc")?,
            (None, Some(v)) => Table::string(v, "solc_version")?,
            (None, None) => return Err(config("[profile.default] must set `solc` (a path)")),
        };
        if !solc.contains('/') {
            return Err(config(format!(
                "`solc = \"{solc}\"` is a version, which forge would download; riskgate-kit \
                 runs a pinned compiler, so give its path (e.g. \"tools/solc\")"
            )));
        }
        let optimizer = Table::boolean(t.required("optimizer")?, "optimizer")?;
        let optimizer_runs = match t.get("optimizer_runs") {
            Some(v) => {
                let runs = v
                    .as_integer()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| config("`optimizer_runs` must be a non-negative integer"))?;
                Some(runs)
            }
            None if optimizer => {
                return Err(config(
                    "[profile.default] turns the optimizer on, so it must set `optimizer_runs`",
                ))
            }
            None => None,
        };
        let via_ir = match t.get("via_ir") {
            Some(v) => Table::boolean(v, "via_ir")?,
            None => false,
        };
        let evm = Table::string(t.required("evm_version")?, "evm_version")?;
        let evm_version: EvmVersion =
            evm.parse().map_err(|e| config(format!("`evm_version = \"{evm}\"`: {e}")))?;
        let hash = Table::string(t.required("bytecode_hash")?, "bytecode_hash")?;
        let bytecode_hash: BytecodeHash =
            hash.parse().map_err(|e| config(format!("`bytecode_hash = \"{hash}\"`: {e}")))?;
        let cbor_metadata = Table::boolean(t.required("cbor_metadata")?, "cbor_metadata")?;
        // A metadata hash or CBOR trailer depends on source paths and on forge's own remappings,
        // so a forge build and this one could differ in the last bytes: only path-independent
        // bytecode can be verified by comparison.
        if bytecode_hash != BytecodeHash::None || cbor_metadata {
            return Err(config(
                "bytecode must not depend on paths: set `bytecode_hash = \"none\"` and \
                 `cbor_metadata = false`",
            ));
        }
        let revert_strings = match t.get("revert_strings") {
            Some(v) => {
                let s = Table::string(v, "revert_strings")?;
                Some(s.parse().map_err(|e| config(format!("`revert_strings = \"{s}\"`: {e}")))?)
            }
            None => None,
        };
        Ok(Self {
            src,
            libs,
            remappings,
            solc: PathBuf::from(solc),
            optimizer,
            optimizer_runs,
            via_ir,
            evm_version,
            bytecode_hash,
            cbor_metadata,
            revert_strings,
        })
    }

    /// The solc settings these values make.
    pub fn settings(&self) -> Settings {
        Settings {
            optimizer: Optimizer {
                enabled: Some(self.optimizer),
                runs: self.optimizer_runs,
                details: None,
            },
            metadata: Some(SettingsMetadata {
                use_literal_content: None,
                bytecode_hash: Some(self.bytecode_hash),
                cbor_metadata: Some(self.cbor_metadata),
            }),
            evm_version: Some(self.evm_version),
            via_ir: self.via_ir.then_some(true),
            debug: self
                .revert_strings
                .map(|r| DebuggingSettings { revert_strings: Some(r), debug_info: Vec::new() }),
            ..Default::default()
        }
    }
}

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
    /// A consensus gate's verdict source on Somnia's agent platform.
    pub somnia_source: Compiled,
    /// The stand-in for Somnia's agent platform (tests and the local demo only).
    pub somnia_standin: Compiled,
}

/// Where the compiler's output and cache go, under the root's `target/`.
pub fn work_dir(root: &Path) -> PathBuf {
    root.join("target").join("riskgate-kit-solc")
}

/// Compiles `root`'s sources with the settings of `root/foundry.toml`.
pub fn compile(root: &Path) -> Result<Artifacts> {
    compile_with(root, &FoundryProfile::read(root)?)
}

/// Compiles `root`'s sources with `profile`.
pub fn compile_with(root: &Path, profile: &FoundryProfile) -> Result<Artifacts> {
    let solc_path = root.join(&profile.solc);
    let solc = Solc::new(&solc_path)
        .map_err(|e| CompileError::Solc { path: solc_path.clone(), source: Box::new(e) })?;
    let compiler = MultiCompiler::new(Some(SolcCompiler::Specific(solc)), None)
        .map_err(|e| CompileError::Solc { path: solc_path.clone(), source: Box::new(e) })?;
    let work = work_dir(root);
    let mut paths = ProjectPathsConfig::builder()
        .root(root)
        .sources(root.join(&profile.src))
        .artifacts(work.join("out"))
        .cache(work.join("cache").join("solidity-files-cache.json"));
    for lib in &profile.libs {
        paths = paths.lib(root.join(lib));
    }
    for text in &profile.remappings {
        let (prefix, target) =
            text.split_once('=').ok_or_else(|| CompileError::Remapping(text.clone()))?;
        // Targets are relative to the root in foundry.toml; the compiler gets them absolute.
        let target = root.join(target);
        let mut target = target.display().to_string();
        if !target.ends_with('/') {
            target.push('/');
        }
        let remapping: Remapping = format!("{prefix}={target}")
            .parse()
            .map_err(|_| CompileError::Remapping(text.clone()))?;
        paths = paths.remapping(remapping);
    }
    let paths = paths.build_with_root(root);
    let settings = MultiCompilerSettings {
        solc: SolcSettings { settings: profile.settings(), ..Default::default() },
        ..Default::default()
    };
    let project = Project::builder()
        .paths(paths)
        .settings(settings)
        .offline()
        .build(compiler)
        .map_err(|e| CompileError::Project(Box::new(e)))?;
    let output = project.compile().map_err(|e| CompileError::Project(Box::new(e)))?;
    if output.has_compiler_errors() {
        return Err(CompileError::Compile(crate::revert::short(&output.to_string())));
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
        somnia_source: find("SomniaVerdictSource")?,
        somnia_standin: find("SomniaAgentsStandIn")?,
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

    const MINIMAL: &str = r#"
[profile.default]
src = "contracts/src"
solc = "tools/solc"
optimizer = true
optimizer_runs = 777
evm_version = "cancun"
bytecode_hash = "none"
cbor_metadata = false
"#;

    fn parse(text: &str) -> Result<FoundryProfile> {
        FoundryProfile::from_table(&text.parse::<toml::Table>().expect("test TOML parses"))
    }

    #[test]
    fn settings_are_the_files_values() {
        let p = parse(MINIMAL).unwrap();
        assert_eq!(p.optimizer_runs, Some(777));
        assert_eq!(p.evm_version, EvmVersion::Cancun);
        assert_eq!(p.solc, PathBuf::from("tools/solc"));
        let s = p.settings();
        assert_eq!(s.optimizer.runs, Some(777));
        assert_eq!(s.evm_version, Some(EvmVersion::Cancun));
        assert_eq!(s.via_ir, None);
        // The same file with the optimizer off needs no runs and sends none.
        let off = MINIMAL.replace("optimizer = true", "optimizer = false");
        let off = off.replace("optimizer_runs = 777\n", "");
        assert_eq!(parse(&off).unwrap().settings().optimizer.runs, None);
    }

    #[test]
    fn the_repositorys_foundry_toml_is_understood() {
        let root = crate::workspace_root();
        let p = FoundryProfile::read(&root).unwrap();
        // foundry.toml: optimizer on, 10,000 runs, prague, no metadata hash, no CBOR trailer.
        assert!(p.optimizer);
        assert_eq!(p.optimizer_runs, Some(10_000));
        assert_eq!(p.evm_version, EvmVersion::Prague);
        assert_eq!(p.remappings.len(), 1);
    }

    #[test]
    fn an_unknown_or_misplaced_or_unreadable_setting_is_an_error() {
        let unknown = format!("{MINIMAL}optimizer_details = {{ yul = false }}\n");
        assert!(matches!(
            parse(&unknown),
            Err(CompileError::UnknownSetting { key, .. }) if key == "optimizer_details"
        ));
        let other = format!("{MINIMAL}\n[profile.ci]\noptimizer_runs = 1\n");
        assert!(matches!(
            parse(&other),
            Err(CompileError::ProfileOverride { profile, .. }) if profile == "ci"
        ));
        // A fuzz table in another profile changes no bytecode.
        assert!(parse(&format!("{MINIMAL}\n[profile.ci.fuzz]\nruns = 5\n")).is_ok());
        let version = MINIMAL.replace("\"tools/solc\"", "\"0.8.30\"");
        assert!(matches!(parse(&version), Err(CompileError::Config(_))));
        let no_runs = MINIMAL.replace("optimizer_runs = 777\n", "");
        assert!(matches!(parse(&no_runs), Err(CompileError::Config(_))));
        let hashed = MINIMAL.replace("\"none\"", "\"ipfs\"");
        assert!(matches!(parse(&hashed), Err(CompileError::Config(_))));
        let bad_evm = MINIMAL.replace("cancun", "no-such-fork");
        assert!(matches!(parse(&bad_evm), Err(CompileError::Config(_))));
    }
}
