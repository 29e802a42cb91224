//! The keeper's module graph has no circles: no module reaches, through any chain of `crate::`
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

/// Edges module → module, leaving out references to oneself and to one's ancestors.
fn graph(known: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
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
        let mut targets: Vec<Vec<String>> = paths_after(&code, "crate");
        for p in paths_after(&code, "super") {
            let mut full = parent.clone();
            full.extend(p);
            targets.push(full);
        }
        for t in targets {
            if let Some(to) = resolve(&t, known) {
                if to != *m && !is_ancestor(&to, m) && !to.is_empty() {
                    edges.entry(m.clone()).or_default().insert(to);
                }
            }
        }
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
    assert!(known.contains_key("engine::executor") && known.contains_key("decision"));
    let edges = graph(&known);
    let n: usize = edges.values().map(BTreeSet::len).sum();
    assert!(n > 50, "the reader found only {n} edges: it is not reading the imports");
    if let Some(c) = circle(&edges) {
        panic!("module circle: {}", c.join(" -> "));
    }
    // The stages import the decision values downward, never the recorder's rendering.
    for m in ["decision", "journal", "strategy", "collectors", "engine::strategy"] {
        let to = edges.get(m).cloned().unwrap_or_default();
        assert!(
            !to.iter().any(|t| t == "recorder" || t.starts_with("record::")),
            "{m} imports the recorder: {to:?}"
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
