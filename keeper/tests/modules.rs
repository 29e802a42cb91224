//! The keeper's folders are its layers, and its module graph has no circles.
//!
//! Layers: no import points up the order in [`LAYERS`], each layer's `mod.rs` says the same in
//! its `//!` ("May import: ..."), and no two modules share a name. Circles: no module reaches, through any chain of `crate::`
//! and `super::` paths, back to itself. A child naming its parent (`use super::Result`) is how
//! Rust nests modules and is not counted; every other reference is. Read from the source
//! files, so a new import that closes a circle fails here, with the circle printed.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
};

/// Module path (`record::feed`) of each source file under `src`, with its text.
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> =
                rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|l| l == "mod" || l == "lib" || l == "main") {
                parts.pop();
            }
            out.insert(parts.join("::"), std::fs::read_to_string(&path).unwrap());
        }
    }
    out
}

/// The identifiers after `prefix::` in `text`, whole paths (`a::b::c`), with `{a, b::c}` groups
/// expanded one level.
fn paths_after(text: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let needle = format!("{prefix}::");
    let mut rest = text;
    while let Some(i) = rest.find(&needle) {
        let before = rest[..i].chars().last();
        rest = &rest[i + needle.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut path = Vec::new();
        let mut tail = rest;
        loop {
            if let Some(group) = tail.strip_prefix('{') {
                let end = matching_brace(group);
                for item in split_top(&group[..end]) {
                    let mut p = path.clone();
                    p.extend(item.split("::").map(|s| s.trim().to_string()).filter(|s| {
                        !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_')
                    }));
                    out.push(p);
                }
                break;
            }
            let n = tail.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(tail.len());
            if n == 0 {
                out.push(path);
                break;
            }
            path.push(tail[..n].to_string());
            tail = &tail[n..];
            match tail.strip_prefix("::") {
                Some(t) => tail = t,
                None => {
                    out.push(path);
                    break;
                }
            }
        }
    }
    out
}

fn matching_brace(s: &str) -> usize {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    s.len()
}

fn split_top(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// The longest known module that `path` (from the crate root) names.
fn resolve(path: &[String], known: &BTreeMap<String, String>) -> Option<String> {
    (1..=path.len()).rev().map(|n| path[..n].join("::")).find(|m| known.contains_key(m))
}

fn is_ancestor(a: &str, of: &str) -> bool {
    a.is_empty() || of.starts_with(&format!("{a}::"))
}

/// Every import as (from, to, the path that names it), leaving out references to oneself and
/// to one's ancestors.
fn edges_with_paths(known: &BTreeMap<String, String>) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (m, text) in known {
        // Comments and doc links name modules without depending on them.
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let parent: Vec<String> = match m.rsplit_once("::") {
            Some((p, _)) => p.split("::").map(str::to_string).collect(),
            None => Vec::new(),
        };
        let mut targets: Vec<(Vec<String>, String)> = paths_after(&code, "crate")
            .into_iter()
            .map(|p| {
                let shown = format!("crate::{}", p.join("::"));
                (p, shown)
            })
            .collect();
        for p in paths_after(&code, "super") {
            let shown = format!("super::{}", p.join("::"));
            let mut full = parent.clone();
            full.extend(p);
            targets.push((full, shown));
        }
        for (t, shown) in targets {
            if let Some(to) = resolve(&t, known) {
                if to != *m && !is_ancestor(&to, m) && !to.is_empty() {
                    out.push((m.clone(), to, shown));
                }
            }
        }
    }
    out
}

/// Edges module → module, leaving out references to oneself and to one's ancestors.
fn graph(known: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to, _) in edges_with_paths(known) {
        edges.entry(from).or_default().insert(to);
    }
    edges
}

/// One circle in `edges`, as the modules on it, if there is any.
fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == m) {
            let mut c = stack[i..].to_vec();
            c.push(m.to_string());
            return Some(c);
        }
        if done.contains(m) {
            return None;
        }
        stack.push(m.to_string());
        for to in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(to, edges, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        if let Some(c) = visit(m, edges, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_keeper_module_graph_has_no_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let known = modules(&src);
    assert!(known.contains_key("engine::executor") && known.contains_key("domain::decision"));
    let edges = graph(&known);
    let n: usize = edges.values().map(BTreeSet::len).sum();
    assert!(n > 50, "the reader found only {n} edges: it is not reading the imports");
    if let Some(c) = circle(&edges) {
        panic!("module circle: {}", c.join(" -> "));
    }
    // The stages that decide import the decision values downward, never the record's
    // rendering.
    for m in ["chain::journal", "inference", "chain::reads", "engine::strategy"] {
        assert!(known.contains_key(m), "{m} is not a module any more: update this list");
        let to = edges.get(m).cloned().unwrap_or_default();
        assert!(
            !to.iter().any(|t| t == "record" || t.starts_with("record::") && t != "record::store"),
            "{m} imports the record's rendering: {to:?}"
        );
    }
    println!("modules: {} modules, {n} edges, no circle", known.len());
}

#[test]
fn the_checker_finds_a_circle_through_a_use_group() {
    // a -> b through a group import, b -> a through a path: a circle; c -> its parent is not.
    let known: BTreeMap<String, String> = [
        ("a", "use crate::{b::{self, X}, z};"),
        ("b", "fn f() { crate::a::g(); }"),
        ("z", ""),
        ("z::c", "use super::Y;"),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), t.to_string()))
    .collect();
    let edges = graph(&known);
    assert!(!edges.contains_key("z::c"), "a child naming its parent is not an edge");
    let c = circle(&edges).expect("a -> b -> a");
    assert_eq!(c.first(), c.last());
    assert!(c.contains(&"a".to_string()) && c.contains(&"b".to_string()));
}

/// The layers of `keeper/src`, top to bottom, as each layer's `mod.rs` states them: a module
/// may import its own layer and the layers below it, never one above. `dev` (the demo, the
/// bench, the test world) stands on everything; the kit is `riskgate_kit`, re-exported.
const LAYERS: &[(&str, u8)] = &[
    ("dev", 6),
    ("commands", 5),
    ("engine", 4),
    ("chain", 3),
    ("inference", 3),
    ("record", 3),
    ("domain", 2),
    ("kit", 1),
];

fn layer_of(module: &str) -> Option<(&'static str, u8)> {
    let top = module.split("::").next()?;
    LAYERS.iter().find(|(name, _)| *name == top).copied()
}

/// Every import that points up a layer, with the module and the path that made it.
fn upward(known: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (from, to, path) in edges_with_paths(known) {
        let (Some((fl, fr)), Some((tl, tr))) = (layer_of(&from), layer_of(&to)) else {
            continue;
        };
        if tr > fr {
            out.push(format!("{from} ({fl}) imports {to} ({tl}) through `{path}`"));
        }
    }
    out
}

/// A module's name as a reader meets it: the file's stem, or its folder's for a `mod.rs`,
/// lower-cased and without a plural `s` (so `collector` and `collectors` are one name).
fn stem(module: &str) -> String {
    let last = module.rsplit("::").next().unwrap_or(module).to_lowercase();
    last.strip_suffix('s').filter(|s| !s.is_empty()).unwrap_or(&last).to_string()
}

/// Names used by more than one module, each with the modules that use it.
fn shared_stems(known: &BTreeMap<String, String>) -> Vec<String> {
    let mut by: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for m in known.keys().filter(|m| !m.is_empty()) {
        by.entry(stem(m)).or_default().push(m);
    }
    by.into_iter().filter(|(_, ms)| ms.len() > 1).map(|(s, ms)| format!("{s}: {ms:?}")).collect()
}

/// The layers a layer's `mod.rs` says it may import (its "May import:" line), as names.
fn stated_imports(text: &str) -> Option<Vec<String>> {
    let line = text.lines().take_while(|l| l.starts_with("//!")).find_map(|l| {
        l.trim_start_matches("//!").trim().strip_prefix("May import:").map(str::to_string)
    })?;
    Some(
        line.trim_end_matches('.')
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty() && s != "nothing of the keeper")
            .collect(),
    )
}

#[test]
fn the_keeper_folders_are_layers_and_no_import_points_up() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let known = modules(&src);
    // Every top-level module is a layer, each named once.
    let tops: BTreeSet<&str> =
        known.keys().filter(|m| !m.is_empty()).map(|m| m.split("::").next().unwrap()).collect();
    let layers: BTreeSet<&str> = LAYERS.iter().map(|(n, _)| *n).collect();
    assert_eq!(tops, layers, "keeper/src's top-level modules are not the layers");
    // Each layer's mod.rs opens with a //! that names what it may import: the layers at or
    // below its own, as LAYERS orders them.
    for (name, rank) in LAYERS {
        let text = &known[*name];
        assert!(text.starts_with("//! "), "{name}'s mod.rs does not open with a //! comment");
        let stated = stated_imports(text)
            .unwrap_or_else(|| panic!("{name}'s //! has no \"May import: ...\" line"));
        let allowed: Vec<String> = LAYERS
            .iter()
            .filter(|(n, r)| r <= rank && n != name)
            .map(|(n, _)| n.to_string())
            .collect();
        let (mut s, mut a) = (stated.clone(), allowed.clone());
        s.sort();
        a.sort();
        assert_eq!(s, a, "{name}'s //! says it may import {stated:?}; LAYERS allows {allowed:?}");
    }
    let up = upward(&known);
    assert!(up.is_empty(), "imports that point up a layer:\n{}", up.join("\n"));
    let shared = shared_stems(&known);
    assert!(shared.is_empty(), "module names used twice:\n{}", shared.join("\n"));
    println!("layers: {} modules in {} layers, no import points up", known.len(), LAYERS.len());
}

#[test]
fn the_checker_finds_an_import_that_points_up_and_a_name_used_twice() {
    // domain (rank 2) naming engine (rank 4) through a group is caught, with its path; engine
    // naming domain, or chain naming record (one rank), is not.
    let known: BTreeMap<String, String> = [
        ("domain", ""),
        ("domain::config", "use crate::{kit::bindings, engine::quote::QuotePolicy};"),
        ("engine", "use crate::domain::config;"),
        ("engine::quote", ""),
        ("chain", "fn f() { crate::record::store::open(); }"),
        ("record", ""),
        ("record::store", ""),
        ("kit", ""),
        ("kit::bindings", ""),
        ("chain::collector", ""),
        ("engine::collectors", ""),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), t.to_string()))
    .collect();
    let up = upward(&known);
    assert_eq!(up.len(), 1, "{up:?}");
    assert!(up[0].contains("domain::config (domain) imports engine::quote (engine)"), "{up:?}");
    assert!(up[0].contains("`crate::engine::quote::QuotePolicy`"), "{up:?}");
    let shared = shared_stems(&known);
    assert_eq!(shared.len(), 1, "{shared:?}");
    assert!(shared[0].contains("chain::collector") && shared[0].contains("engine::collectors"));
    assert_eq!(
        stated_imports("//! Owns x.\n//!\n//! May import: chain, domain, kit.\n"),
        Some(vec!["chain".into(), "domain".into(), "kit".into()])
    );
}
