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

/// `program`'s subcommands are its folders, each listed once, and named by
/// no file outside its own folder and the list.
fn one_folder_and_one_line(program: &str) {
    let src = root().join(program).join("src");
    let commands = src.join("commands");
    let mut folders: Vec<String> = std::fs::read_dir(&commands)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut names = listed(&commands.join("mod.rs"));
    assert!(names.len() > 3, "{program}: {names:?}");
    names.sort();
    assert_eq!(
        names, folders,
        "{program}: the commands! list of src/commands/mod.rs must name each folder of src/commands once"
    );
    let list = commands.join("mod.rs");
    for name in &names {
        let own = commands.join(name);
        let mention = format!("commands::{name}");
        let named_in: Vec<String> = sources(&src)
            .into_iter()
            .filter(|file| !file.starts_with(&own) && *file != list)
            .filter(|file| std::fs::read_to_string(file).unwrap().contains(&mention))
            .map(|file| file.strip_prefix(&root()).unwrap().display().to_string())
            .collect();
        assert!(
            named_in.is_empty(),
            "{program}: the subcommand {name} is named outside its folder: {named_in:?}; \
             what several subcommands share belongs in a module beside commands/"
        );
    }
}

#[test]
fn a_user_command_is_one_folder_and_one_line() {
    one_folder_and_one_line("cli");
}

#[test]
fn a_task_is_one_folder_and_one_line() {
    one_folder_and_one_line("xtask");
}
