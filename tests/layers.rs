//! The modules import one way: the `crate::` paths between the top-level modules of
//! `src/` form a graph without a cycle. A cycle is printed, module by module.
//!
//! Test code (`tests.rs` files and `#[cfg(test)]` items) may use any module, and comments
//! (doc links included) are not imports: both are left out of the graph.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Module name -> the top-level modules its non-test code names through `crate::`.
type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn the_modules_import_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph(&src);
    assert!(graph.len() > 10, "too few modules found: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle between modules: {}", cycle.join(" -> "));
    }
}

#[test]
fn a_cycle_is_found_and_printed() {
    fn edge(graph: &mut Graph, a: &str, b: &str) {
        graph.entry(a.into()).or_default().insert(b.into());
        graph.entry(b.into()).or_default();
    }
    let mut graph = Graph::new();
    edge(&mut graph, "cli", "gate");
    edge(&mut graph, "gate", "json");
    edge(&mut graph, "json", "text");
    assert_eq!(find_cycle(&graph), None);
    edge(&mut graph, "json", "report");
    edge(&mut graph, "report", "gate");
    assert_eq!(
        find_cycle(&graph).map(|c| c.join(" -> ")).as_deref(),
        Some("gate -> json -> report -> gate")
    );
}

#[test]
fn imports_are_read_from_code_not_from_comments_or_tests() {
    let code = "use crate::json::{self, parse};\nuse crate::{record::Store, text};\n\
                // crate::cli in a comment\n/// [`crate::hook`]\nfn f() { crate::gate::check(); }\n\
                #[cfg(test)]\nmod tests {\n    use crate::input::load;\n}\n\
                #[cfg(test)]\nuse crate::pin;\n";
    let named = imports(code);
    let want: BTreeSet<String> = ["gate", "json", "record", "text"].map(String::from).into();
    assert_eq!(named, want);
}

/// The import graph of the top-level modules under `src`.
fn graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
    let entries = fs::read_dir(src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "main" {
            continue;
        }
        let mut named = BTreeSet::new();
        for file in rust_files(&path) {
            if file.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            named.extend(imports(&fs::read_to_string(&file).unwrap()));
        }
        named.remove(&name);
        graph.insert(name, named);
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for named in graph.values_mut() {
        named.retain(|m| modules.contains(m));
    }
    graph
}

/// `path` if it is a Rust file, else every Rust file under it.
fn rust_files(path: &Path) -> Vec<std::path::PathBuf> {
    if path.is_dir() {
        let mut files = Vec::new();
        for entry in fs::read_dir(path).unwrap() {
            files.extend(rust_files(&entry.unwrap().path()));
        }
        files
    } else if path.extension().is_some_and(|e| e == "rs") {
        vec![path.to_path_buf()]
    } else {
        Vec::new()
    }
}

/// The first path segments after `crate::` in `code`, outside comments and outside the
/// item that follows a `#[cfg(test)]` (rustfmt's layout: an item ends at a `;` line end
/// or at a `}` in column 0).
fn imports(code: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            for item in lines.by_ref() {
                if item == "}" || (!item.starts_with(' ') && item.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        let code = line.split("//").next().unwrap_or("");
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a::b, c}`: the first segment of each path in the group.
                let group = group.split('}').next().unwrap_or("");
                for path in group.split(',') {
                    named.insert(segment(path.trim()));
                }
            } else {
                named.insert(segment(rest));
            }
        }
    }
    named.retain(|s| !s.is_empty());
    named
}

/// The identifier `path` starts with.
fn segment(path: &str) -> String {
    path.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// A cycle of `graph` as the modules along it, the first repeated at the end; `None` when
/// the graph is acyclic.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &Graph,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = path.iter().position(|n| n == node).unwrap_or(0);
                let mut cycle = path[from..].to_vec();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_string(), Mark::Open);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, path) {
                return Some(cycle);
            }
        }
        path.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new()) {
            return Some(cycle);
        }
    }
    None
}
