//! `make demo` is reproducible: two runs of one commit on one machine write byte-identical
//! records, the bundled language model's answers included. The demo pins its chain's clock
//! (genesis at a fixed time, then one second per block and explicit jumps), asks the model at
//! temperature 0 with a fixed seed on one server slot, and writes anvil's state dump in one
//! canonical order. Whether another machine of the same kind gets the same model answers is not
//! asserted here (the committed record re-derives from its own saved chain either way).

mod common;

use common::root;
use std::path::Path;

/// Every file `keeper demo` writes.
const FILES: [&str; 6] = [
    "RESULTS.md",
    "feed.jsonl",
    "feed.head",
    "decisions.svg",
    "anvil-state.json",
    "anvil-state.meta.json",
];

fn demo(into: &Path) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_keeper"))
        .arg("--root")
        .arg(root())
        .arg("demo")
        .arg("--results")
        .arg(into)
        .env_remove("KEEPER_OPENAI_API_KEY")
        .output()
        .expect("the keeper binary runs");
    assert!(
        out.status.success(),
        "keeper demo failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The first line where `a` and `b` differ, for the failure message.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            let cut = |s: &str| s.chars().take(300).collect::<String>();
            return format!("line {}:\n  first:  {}\n  second: {}", i + 1, cut(x), cut(y));
        }
    }
    format!("one is a prefix of the other ({} vs {} lines)", a.lines().count(), b.lines().count())
}

#[test]
fn two_demo_runs_of_one_commit_write_byte_identical_results() {
    let runs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    for r in &runs {
        demo(r.path());
    }
    let mut differ = Vec::new();
    for f in FILES {
        let a = std::fs::read(runs[0].path().join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        let b = std::fs::read(runs[1].path().join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        if a != b {
            differ.push(format!("{f}: {}", first_difference(&a, &b)));
        }
    }
    assert!(differ.is_empty(), "two demo runs differ:\n{}", differ.join("\n"));
    let page = std::fs::read_to_string(runs[0].path().join("RESULTS.md")).unwrap();
    // The record holds the real model's rows, under the name its server reported.
    assert!(page.contains("| openai | SmolLM2-135M-Instruct.Q4_1.gguf | language model"), "{page}");
}
