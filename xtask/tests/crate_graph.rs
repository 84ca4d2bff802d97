//! Crates point one way: runtime below tests.
//!
//! The runtime is what the programs people run are built from: the users'
//! CLI, the policies, `shared` and the host-side libraries under `crates/`.
//! The test side is what judges them: the case kit (`testkit`), the suites
//! that run Kubewarden's own programs (`e2e`), the team's tasks (`xtask`)
//! and the playground, whose host build exports the cases for its page.
//! A runtime crate that depends on the test side makes every program above
//! it carry the tests' code and their framework (libtest-mimic), as the CLI
//! did when `host` returned testkit's types.
//!
//! The graph is cargo's own (`cargo metadata`): for every runtime member of
//! the workspace, every crate it reaches through normal and build
//! dependencies, its own and third-party alike; dev-dependencies are the
//! tests' and may point anywhere.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// The workspace's test side, by package name.
const TEST_SIDE: &[&str] = &[
    "cozystack-testkit",
    "cozystack-policies-e2e",
    "xtask",
    "cozystack-playground",
];

/// Test frameworks: no program people run links one.
const TEST_FRAMEWORKS: &[&str] = &["libtest-mimic"];

/// The users' binary.
const CLI: &str = "cozystack-policies";

/// Cargo's resolved graph: each package's name, the workspace's members,
/// and each package's normal and build dependencies.
struct Graph {
    names: BTreeMap<String, String>,
    members: Vec<String>,
    edges: BTreeMap<String, Vec<String>>,
}

impl Graph {
    /// The graph as this machine builds it: dependencies of other
    /// platforms (the playground's browser build) are left out, so cargo
    /// needs nothing it has not downloaded.
    fn read() -> Self {
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
        let version = Command::new(rustc)
            .arg("-vV")
            .output()
            .expect("running rustc -vV");
        let version = String::from_utf8(version.stdout).unwrap();
        let host = version
            .lines()
            .find_map(|line| line.strip_prefix("host: "))
            .expect("rustc names its host");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let output = Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--locked", "--offline"])
            .args(["--filter-platform", host])
            .current_dir(layout::checkout())
            .output()
            .expect("running cargo metadata");
        assert!(
            output.status.success(),
            "cargo metadata: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        Self::parse(&serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON"))
    }

    fn parse(metadata: &Value) -> Self {
        let names = metadata["packages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["id"].as_str().unwrap().to_owned(),
                    p["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let members = metadata["workspace_members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| id.as_str().unwrap().to_owned())
            .collect();
        let edges = metadata["resolve"]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|node| {
                let deps = node["deps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|dep| {
                        dep["dep_kinds"].as_array().unwrap().iter().any(|kind| {
                            kind["kind"].is_null() || kind["kind"].as_str() == Some("build")
                        })
                    })
                    .map(|dep| dep["pkg"].as_str().unwrap().to_owned())
                    .collect();
                (node["id"].as_str().unwrap().to_owned(), deps)
            })
            .collect();
        Self {
            names,
            members,
            edges,
        }
    }

    fn name(&self, id: &str) -> &str {
        &self.names[id]
    }

    fn id(&self, name: &str) -> &str {
        self.members
            .iter()
            .find(|id| self.name(id) == name)
            .unwrap_or_else(|| panic!("{name} is not a member of the workspace"))
    }

    /// Every crate `from` reaches through normal and build dependencies,
    /// each with the path that reaches it (`from → … → it`).
    fn reached(&self, from: &str) -> BTreeMap<String, Vec<String>> {
        let mut paths = BTreeMap::from([(from.to_owned(), vec![self.name(from).to_owned()])]);
        let mut queue = VecDeque::from([from.to_owned()]);
        while let Some(id) = queue.pop_front() {
            for dep in self.edges.get(&id).into_iter().flatten() {
                if !paths.contains_key(dep) {
                    let mut path = paths[&id].clone();
                    path.push(self.name(dep).to_owned());
                    paths.insert(dep.clone(), path);
                    queue.push_back(dep.clone());
                }
            }
        }
        paths
    }

    /// The runtime members: every member not on the test side.
    fn runtime(&self) -> Vec<&str> {
        self.members
            .iter()
            .map(String::as_str)
            .filter(|id| !TEST_SIDE.contains(&self.name(id)))
            .collect()
    }

    /// Each runtime member's path to a test-side crate or a test framework.
    fn violations(&self) -> Vec<String> {
        let forbidden: BTreeSet<&str> = TEST_SIDE.iter().chain(TEST_FRAMEWORKS).copied().collect();
        let mut found = Vec::new();
        for member in self.runtime() {
            for (id, path) in self.reached(member) {
                if id != member && forbidden.contains(self.name(&id)) {
                    found.push(path.join(" → "));
                }
            }
        }
        found
    }
}

fn graph() -> &'static Graph {
    static GRAPH: OnceLock<Graph> = OnceLock::new();
    GRAPH.get_or_init(Graph::read)
}

#[test]
fn no_runtime_crate_depends_on_the_test_side() {
    let violations = graph().violations();
    assert!(
        violations.is_empty(),
        "runtime crates that reach the test side (move what they use down into a runtime \
         crate, or the user up into a test-side one):\n  {}",
        violations.join("\n  ")
    );
}

#[test]
fn the_users_cli_links_no_test_framework() {
    let graph = graph();
    let reached = graph.reached(graph.id(CLI));
    let names: BTreeSet<&str> = reached.keys().map(|id| graph.name(id)).collect();
    for framework in TEST_FRAMEWORKS {
        assert!(
            !names.contains(framework),
            "the CLI links {framework}: {}",
            reached
                .iter()
                .find(|(id, _)| graph.name(id) == *framework)
                .map(|(_, path)| path.join(" → "))
                .unwrap_or_default()
        );
    }
    // The runtime it is built from is there: the walk follows the edges.
    assert!(names.contains("cozystack-policy-host"), "{names:?}");
    assert!(names.contains("wasmtime"), "{names:?}");
}

#[test]
fn every_test_side_crate_is_a_member_and_the_walk_finds_the_framework() {
    let graph = graph();
    for name in TEST_SIDE {
        graph.id(name);
    }
    // testkit's native runner is a libtest-mimic harness: were the walk to
    // miss edges, the two tests above would pass on any graph.
    let reached = graph.reached(graph.id("cozystack-testkit"));
    assert!(
        reached.keys().any(|id| graph.name(id) == "libtest-mimic"),
        "testkit does not reach libtest-mimic"
    );
}

#[test]
fn a_planted_edge_from_the_runtime_to_the_test_side_is_found() {
    let metadata = serde_json::json!({
        "packages": [
            {"id": "host", "name": "cozystack-policy-host"},
            {"id": "kit", "name": "cozystack-testkit"},
            {"id": "mimic", "name": "libtest-mimic"},
            {"id": "cli", "name": CLI},
        ],
        "workspace_members": ["host", "kit", "cli"],
        "resolve": {"nodes": [
            {"id": "cli", "deps": [
                {"pkg": "host", "dep_kinds": [{"kind": null}]},
                {"pkg": "kit", "dep_kinds": [{"kind": "dev"}]},
            ]},
            {"id": "host", "deps": [{"pkg": "kit", "dep_kinds": [{"kind": null}]}]},
            {"id": "kit", "deps": [{"pkg": "mimic", "dep_kinds": [{"kind": null}]}]},
            {"id": "mimic", "deps": []},
        ]},
    });
    let planted = Graph::parse(&metadata);
    assert_eq!(
        planted.violations(),
        [
            "cozystack-policy-host → cozystack-testkit",
            "cozystack-policy-host → cozystack-testkit → libtest-mimic",
            "cozystack-policies → cozystack-policy-host → cozystack-testkit",
            "cozystack-policies → cozystack-policy-host → cozystack-testkit → libtest-mimic",
        ]
    );
}
