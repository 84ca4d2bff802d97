//! No circle among the modules of any crate of the repository.
//!
//! A circle (`a` uses `b`, which uses `a`) is how a folder stops saying what
//! it holds: neither module can be read, moved or tested without the other.
//! Cargo forbids circles between crates; this test forbids them between the
//! modules of one crate, at every level of its tree: among the top-level
//! modules of `cli/src`, among the folders of `cli/src/commands`, and so on.
//!
//! The graph is read with `syn` from every module of every crate's `src/`:
//! each `use` and each path in the code (`crate::x::f()`,
//! `super::y::T`) is an edge from the module that writes it to the module
//! that holds what it names. An edge between two modules counts for the two
//! siblings under their nearest common parent (`commands::report::since` →
//! `finding` is `commands` → `finding` at the crate's top), so a circle
//! through nested modules is still found. A module's use of its own parent or
//! children is the tree itself, not a circle. Paths inside macro calls are
//! not read (`format!`, `assert!`): they name values, not modules.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit_mut::VisitMut;

use layout::checkout as root;

/// A module's path from its crate's root (`["commands", "check"]`).
type ModulePath = Vec<String>;

/// One crate's modules: each with the file it is in and the paths it
/// writes, each path already made absolute where it starts with `crate`,
/// `self` or `super`, or a child module's name.
#[derive(Default)]
struct Crate {
    modules: BTreeMap<ModulePath, PathBuf>,
    /// (from, to, where): every path naming something in another module.
    references: Vec<(ModulePath, Vec<String>, PathBuf)>,
}

impl Crate {
    fn read(root_file: &Path) -> Self {
        let mut krate = Crate::default();
        krate.module(Vec::new(), root_file, true);
        krate
    }

    /// Reads the module at `path` in `file` (`owns_dir`: a `lib.rs`,
    /// `main.rs` or `mod.rs`, whose children sit beside it).
    fn module(&mut self, path: ModulePath, file: &Path, owns_dir: bool) {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        let parsed =
            syn::parse_file(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", file.display()));
        let dir = if owns_dir {
            file.parent().unwrap().to_owned()
        } else {
            file.with_extension("")
        };
        self.items(path, &parsed.items, file, &dir);
    }

    fn items(&mut self, path: ModulePath, items: &[syn::Item], file: &Path, dir: &Path) {
        self.modules.insert(path.clone(), file.to_owned());
        let declared = declared_modules(items);
        let children: BTreeSet<String> = items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Mod(m) => Some(m.ident.to_string()),
                _ => None,
            })
            .chain(declared.iter().map(ToString::to_string))
            .collect();
        for name in &declared {
            let mut child = path.clone();
            child.push(name.to_string());
            self.file_module(child, dir, name, file);
        }
        let mut paths = Paths::default();
        for item in items {
            match item {
                syn::Item::Mod(m) => {
                    let mut child = path.clone();
                    child.push(m.ident.to_string());
                    match &m.content {
                        Some((_, inline)) => {
                            self.items(child, inline, file, &dir.join(m.ident.to_string()))
                        }
                        None => self.file_module(child, dir, &m.ident, file),
                    }
                }
                syn::Item::Use(u) => use_tree(&u.tree, Vec::new(), &mut paths.0),
                other => paths.visit_item_mut(&mut other.clone()),
            }
        }
        for written in paths.0 {
            if let Some(absolute) = absolute(&path, &children, written) {
                self.references
                    .push((path.clone(), absolute, file.to_owned()));
            }
        }
    }

    /// Reads the module `name` declared without a body in `file`: `name.rs`
    /// or `name/mod.rs` in `dir`.
    fn file_module(&mut self, path: ModulePath, dir: &Path, name: &syn::Ident, file: &Path) {
        let flat = dir.join(format!("{name}.rs"));
        let nested = dir.join(name.to_string()).join("mod.rs");
        if flat.is_file() {
            self.module(path, &flat, false);
        } else if nested.is_file() {
            self.module(path, &nested, true);
        } else {
            panic!("{}: module {name} has no file", file.display());
        }
    }

    /// The deepest module a path names: `commands::check::run` is the
    /// module `commands::check`.
    fn module_of(&self, path: &[String]) -> ModulePath {
        let mut module = Vec::new();
        for segment in path {
            let mut deeper = module.clone();
            deeper.push(segment.clone());
            if !self.modules.contains_key(&deeper) {
                break;
            }
            module = deeper;
        }
        module
    }

    /// The sibling edges: for each reference, the two children of the
    /// nearest common parent of the module that writes it and the module
    /// it names, with the file that writes it.
    fn edges(&self) -> BTreeMap<(ModulePath, ModulePath), BTreeSet<PathBuf>> {
        let mut edges: BTreeMap<_, BTreeSet<PathBuf>> = BTreeMap::new();
        for (from, written, file) in &self.references {
            let to = self.module_of(written);
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            // A module's own tree: itself, an ancestor or a descendant.
            if common == from.len() || common == to.len() {
                continue;
            }
            let (a, b) = (from[..=common].to_vec(), to[..=common].to_vec());
            edges.entry((a, b)).or_default().insert(file.clone());
        }
        edges
    }
}

/// The modules a `commands! { a, b }` list declares (crates/subcommands):
/// both programs declare their subcommands' folders that way.
fn declared_modules(items: &[syn::Item]) -> Vec<syn::Ident> {
    items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Macro(m) if m.mac.path.is_ident("commands") => m
                .mac
                .parse_body_with(
                    syn::punctuated::Punctuated::<syn::Ident, syn::Token![,]>::parse_terminated,
                )
                .ok(),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Every path a module writes outside its `use` items and inline modules.
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl VisitMut for Paths {
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        self.0
            .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit_mut::visit_path_mut(self, path);
    }

    fn visit_item_use_mut(&mut self, item: &mut syn::ItemUse) {
        use_tree(&item.tree, Vec::new(), &mut self.0);
    }

    fn visit_item_mod_mut(&mut self, _: &mut syn::ItemMod) {}
}

/// Each path a `use` tree imports (a glob imports its module).
fn use_tree(tree: &syn::UseTree, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_tree(&p.tree, prefix, out);
        }
        syn::UseTree::Name(n) if n.ident == "self" => out.push(prefix),
        syn::UseTree::Name(n) => {
            prefix.push(n.ident.to_string());
            out.push(prefix);
        }
        syn::UseTree::Rename(r) => {
            prefix.push(r.ident.to_string());
            out.push(prefix);
        }
        syn::UseTree::Glob(_) => out.push(prefix),
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                use_tree(tree, prefix.clone(), out);
            }
        }
    }
}

/// `written`, as the module at `module` (with `children`) writes it, made
/// absolute from the crate's root; `None` for a path into another crate or
/// a single name.
fn absolute(
    module: &[String],
    children: &BTreeSet<String>,
    written: Vec<String>,
) -> Option<Vec<String>> {
    let mut segments = written.into_iter().peekable();
    let mut base: Vec<String> = match segments.peek()?.as_str() {
        "crate" => {
            segments.next();
            Vec::new()
        }
        "self" => {
            segments.next();
            module.to_vec()
        }
        "super" => {
            let mut base = module.to_vec();
            while segments.peek().is_some_and(|s| s == "super") {
                segments.next();
                base.pop()?;
            }
            base
        }
        child if children.contains(child) => module.to_vec(),
        _ => return None,
    };
    base.extend(segments);
    Some(base)
}

/// The circles of a graph: its strongly connected components of more than
/// one module (Tarjan's algorithm, which a graph of a few dozen nodes per
/// crate makes cheap).
fn circles(edges: &BTreeMap<(ModulePath, ModulePath), BTreeSet<PathBuf>>) -> Vec<Vec<ModulePath>> {
    let mut next: BTreeMap<&ModulePath, Vec<&ModulePath>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
        next.entry(b).or_default();
    }
    struct Walk<'a> {
        next: &'a BTreeMap<&'a ModulePath, Vec<&'a ModulePath>>,
        index: BTreeMap<&'a ModulePath, usize>,
        low: BTreeMap<&'a ModulePath, usize>,
        stack: Vec<&'a ModulePath>,
        on_stack: BTreeSet<&'a ModulePath>,
        found: Vec<Vec<ModulePath>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a ModulePath) {
            let here = self.index.len();
            self.index.insert(node, here);
            self.low.insert(node, here);
            self.stack.push(node);
            self.on_stack.insert(node);
            for &to in &self.next[node] {
                if !self.index.contains_key(to) {
                    self.visit(to);
                    let low = self.low[node].min(self.low[to]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(to) {
                    let low = self.low[node].min(self.index[to]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    component.push(top.clone());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in next.keys() {
        if !walk.index.contains_key(node) {
            walk.visit(node);
        }
    }
    walk.found
}

/// The root file of every library and binary of the repository's crates:
/// the workspace's members and fuzz/.
fn crate_roots() -> Vec<PathBuf> {
    let workspace: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    let mut dirs: Vec<PathBuf> = workspace["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|member| root().join(member.as_str().unwrap()))
        .collect();
    dirs.push(root().join("fuzz"));
    let mut roots = Vec::new();
    for dir in dirs {
        for file in ["src/lib.rs", "src/main.rs"] {
            if dir.join(file).is_file() {
                roots.push(dir.join(file));
            }
        }
        if let Ok(bins) = std::fs::read_dir(dir.join("src/bin")) {
            roots.extend(bins.map(|entry| entry.unwrap().path()));
        }
    }
    roots
}

fn name(module: &ModulePath) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

#[test]
fn no_crate_has_a_circle_among_its_modules() {
    let roots = crate_roots();
    assert!(roots.len() > 20, "{roots:?}");
    // The subcommands' folders, declared by `commands!`, are read too.
    let cli = Crate::read(&root().join("cli/src/main.rs"));
    for module in [
        &["commands", "snapshot_command", "script"][..],
        &["commands", "report", "since"],
        &["engine", "sarif"],
    ] {
        let module: ModulePath = module.iter().map(ToString::to_string).collect();
        assert!(cli.modules.contains_key(&module), "{module:?} not read");
    }
    let mut found = Vec::new();
    for file in &roots {
        let krate = Crate::read(file);
        let edges = krate.edges();
        for circle in circles(&edges) {
            let members: BTreeSet<&ModulePath> = circle.iter().collect();
            let through: Vec<String> = edges
                .iter()
                .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                .map(|((a, b), files)| {
                    let files: Vec<String> = files
                        .iter()
                        .map(|f| f.strip_prefix(root()).unwrap_or(f).display().to_string())
                        .collect();
                    format!("{} → {} ({})", name(a), name(b), files.join(", "))
                })
                .collect();
            found.push(format!(
                "{}: {}",
                file.strip_prefix(root()).unwrap().display(),
                through.join("; ")
            ));
        }
    }
    assert!(
        found.is_empty(),
        "circles among modules:\n{}",
        found.join("\n")
    );
}

/// The reader finds a circle where there is one, through nested modules
/// and `super`, and none in a tree of parents and children.
#[test]
fn a_circle_through_nested_modules_is_found() {
    let dir = std::env::temp_dir().join(format!("import-graph-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        "mod a;\nmod b;\nmod c;\npub fn top() { a::inner::f(); }\n",
    )
    .unwrap();
    std::fs::write(dir.join("a/mod.rs"), "pub mod inner;\nuse super::top;\n").unwrap();
    std::fs::write(
        dir.join("a/inner.rs"),
        "pub fn f() { crate::b::g(); super::super::top(); }\n",
    )
    .unwrap();
    std::fs::write(dir.join("b.rs"), "pub fn g() { super::c::h(); }\n").unwrap();
    std::fs::write(
        dir.join("c.rs"),
        "use crate::a::inner;\npub fn h() { inner::f(); }\n",
    )
    .unwrap();
    let krate = Crate::read(&dir.join("lib.rs"));
    let names: Vec<Vec<String>> = circles(&krate.edges())
        .iter()
        .map(|c| c.iter().map(name).collect())
        .collect();
    assert_eq!(names, [["a", "b", "c"]]);

    std::fs::write(dir.join("c.rs"), "pub fn h() {}\n").unwrap();
    let krate = Crate::read(&dir.join("lib.rs"));
    assert!(circles(&krate.edges()).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
