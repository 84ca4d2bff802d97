//! Adding a subcommand is one folder and one line (CONTRIBUTING.md:
//! "Adding a subcommand"), in the users' CLI (`cli/`) and in the team's tasks
//! (`xtask/`) alike: a folder `src/commands/<name>/` with its `Args` and
//! `run`, and its name in the `commands!` list of `src/commands/mod.rs`,
//! which declares the module, the clap subcommand and the dispatch. This
//! test holds both programs to it: the list is the folders, and no file
//! outside a subcommand's folder names it, so there is nothing else to edit.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use syn::punctuated::Punctuated;

use layout::checkout as root;

/// The names the `commands!` invocation of `commands/mod.rs` lists.
fn listed(mod_rs: &Path) -> Vec<String> {
    let file = syn::parse_file(&std::fs::read_to_string(mod_rs).unwrap()).unwrap();
    let lists: Vec<Vec<String>> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Macro(m) if m.mac.path.is_ident("commands") => Some(
                m.mac
                    .parse_body_with(Punctuated::<syn::Ident, syn::Token![,]>::parse_terminated)
                    .unwrap()
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(lists.len(), 1, "{}: one commands! list", mod_rs.display());
    lists.into_iter().next().unwrap()
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found
}

/// The module a file under `src` declares: `commands/report/render/html.rs`
/// is `commands::report::render::html`, a `mod.rs` its folder's.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut module: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if module
        .last()
        .is_some_and(|last| last == "mod" || last == "main" || last == "lib")
    {
        module.pop();
    }
    module
}

/// Every path of a file that starts with `crate` or `super`, resolved to
/// the module it names from the module it is written in (inline `mod`
/// blocks included): `use super::check::Options` in
/// `commands/preflight/mod.rs` names `commands::check`.
struct Paths {
    module: Vec<String>,
    named: Vec<Vec<String>>,
}

impl Paths {
    fn resolve(&mut self, segments: &[String]) {
        let mut at = self.module.clone();
        let mut rest = segments.iter().peekable();
        match rest.peek().map(|s| s.as_str()) {
            Some("crate") => {
                at.clear();
                rest.next();
            }
            Some("super") => {
                while rest.next_if(|s| *s == "super").is_some() {
                    at.pop();
                }
            }
            _ => return,
        }
        at.extend(rest.take(2).cloned());
        self.named.push(at);
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree);
                prefix.pop();
            }
            syn::UseTree::Name(name) => {
                prefix.push(name.ident.to_string());
                self.resolve(prefix);
                prefix.pop();
            }
            syn::UseTree::Rename(rename) => {
                prefix.push(rename.ident.to_string());
                self.resolve(prefix);
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.resolve(prefix),
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }
}

impl syn::visit_mut::VisitMut for Paths {
    fn visit_item_mod_mut(&mut self, item: &mut syn::ItemMod) {
        self.module.push(item.ident.to_string());
        syn::visit_mut::visit_item_mod_mut(self, item);
        self.module.pop();
    }

    fn visit_item_use_mut(&mut self, item: &mut syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.resolve(&segments);
        syn::visit_mut::visit_path_mut(self, path);
    }
}

/// The modules the paths of `file` (under `src`) name.
fn named_modules(src: &Path, file: &Path) -> Vec<Vec<String>> {
    let mut syntax = syn::parse_file(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut paths = Paths {
        module: module_of(src, file),
        named: Vec::new(),
    };
    syn::visit_mut::VisitMut::visit_file_mut(&mut paths, &mut syntax);
    paths.named
}

/// Where the program under `src` breaks the rule: a subcommand listed in
/// `commands/mod.rs` but not a folder (or the other way round), or a file
/// outside a subcommand's folder that names it, by `commands::<name>`,
/// `super::` or `crate::`.
fn violations(src: &Path) -> Vec<String> {
    let commands = src.join("commands");
    let mut folders: Vec<String> = std::fs::read_dir(&commands)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut names = listed(&commands.join("mod.rs"));
    names.sort();
    let mut found = Vec::new();
    if names != folders {
        found.push(format!(
            "the commands! list of src/commands/mod.rs names {names:?}, the folders are {folders:?}: \
             it must name each folder of src/commands once"
        ));
    }
    let list = commands.join("mod.rs");
    for file in sources(src) {
        if file == list {
            continue;
        }
        let shown = file.strip_prefix(src).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let mut named: Vec<&String> = names
            .iter()
            .filter(|name| !file.starts_with(commands.join(name)))
            .filter(|name| text.contains(&format!("commands::{name}")))
            .collect();
        for module in named_modules(src, &file) {
            if let [first, name, ..] = &module[..]
                && first == "commands"
                && !file.starts_with(commands.join(name))
                && let Some(listed) = names.iter().find(|n| *n == name)
            {
                named.push(listed);
            }
        }
        named.sort();
        named.dedup();
        for name in named {
            found.push(format!(
                "{shown} names the subcommand {name} outside its folder; what several subcommands \
                 share belongs in a module beside commands/"
            ));
        }
    }
    found
}

/// `program`'s subcommands are its folders, each listed once, and named by
/// no file outside its own folder and the list.
fn one_folder_and_one_line(program: &str) {
    let src = root().join(program).join("src");
    assert!(listed(&src.join("commands/mod.rs")).len() > 3, "{program}");
    let found = violations(&src);
    assert!(found.is_empty(), "{program}:\n{}", found.join("\n"));
}

#[test]
fn a_user_command_is_one_folder_and_one_line() {
    one_folder_and_one_line("cli");
}

#[test]
fn a_task_is_one_folder_and_one_line() {
    one_folder_and_one_line("xtask");
}

/// A planted tree: `preflight` reaching into `check` by `super::`, by
/// `super::super::` from a file below, and by `crate::commands::`, is
/// caught each time; its own `super::` and a module beside `commands/` are
/// not.
#[test]
fn a_subcommand_reaching_into_another_is_caught() {
    let src = Path::new(env!("CARGO_TARGET_TMPDIR")).join("planted-commands/src");
    let _ = std::fs::remove_dir_all(&src);
    let files = [
        (
            "commands/mod.rs",
            "commands! { check, preflight, report, other }\n",
        ),
        ("commands/check/mod.rs", "pub struct Options;\n"),
        ("commands/report/mod.rs", "mod render;\n"),
        (
            "commands/report/render.rs",
            "use super::super::check::Options;\n",
        ),
        (
            "commands/other/mod.rs",
            "fn f() { crate::commands::check::Options; }\n",
        ),
        (
            "commands/preflight/mod.rs",
            "mod own;\nuse super::check::{self, Options};\nuse crate::engine::Run;\n\
             #[cfg(test)]\nmod tests { use super::own::X; }\n",
        ),
        ("commands/preflight/own.rs", "use super::Thing;\n"),
        ("engine/mod.rs", "pub struct Run;\n"),
    ];
    for (path, text) in files {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let found = violations(&src);
    let by = |file: &str| found.iter().filter(|f| f.starts_with(file)).count();
    assert_eq!(by("commands/preflight/mod.rs"), 1, "{found:#?}");
    assert_eq!(by("commands/report/render.rs"), 1, "{found:#?}");
    assert_eq!(by("commands/other/mod.rs"), 1, "{found:#?}");
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(
        found
            .iter()
            .all(|f| f.contains("names the subcommand check outside its folder"))
    );
}
