//! An error prints its own words, and leaves its cause to `source`.
//!
//! A `thiserror` error whose message writes the field it also exposes as
//! its source (`#[error("cannot read: {0}")] Io(#[from] io::Error)`) shows
//! the cause twice wherever the chain is printed (`{error:#}`, anyhow's
//! `Caused by`, `testkit::with_causes`): "cannot read: gone: gone". This
//! test reads every `#[error(...)]` of the repository with `syn` and refuses
//! a message that names its source field (`#[source]`, `#[from]`, or the
//! field called `source`).

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use layout::checkout as root;

/// Every Rust file of the repository, build output left out.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), "target" | "node_modules" | ".git") {
                rust_files(&path, found);
            }
        } else if name.ends_with(".rs") {
            found.push(path);
        }
    }
}

/// The message of an `#[error("...")]` attribute; `None` for
/// `#[error(transparent)]` and other attributes.
fn message(attrs: &[syn::Attribute]) -> Option<String> {
    let attr = attrs.iter().find(|a| a.path().is_ident("error"))?;
    let literal = attr
        .parse_args_with(|input: syn::parse::ParseStream<'_>| {
            let literal = input.parse::<syn::LitStr>()?;
            // Format arguments after the literal: skipped.
            input.step(|cursor| {
                let mut rest = *cursor;
                while let Some((_, next)) = rest.token_tree() {
                    rest = next;
                }
                Ok(((), rest))
            })?;
            Ok(literal)
        })
        .ok()?;
    Some(literal.value())
}

/// The name a message refers to a field by (`0`, `path`), if the field is
/// the error's source.
fn source_names(fields: &syn::Fields) -> Vec<String> {
    fields
        .iter()
        .enumerate()
        .filter(|(_, field)| {
            field
                .attrs
                .iter()
                .any(|a| a.path().is_ident("source") || a.path().is_ident("from"))
                || field.ident.as_ref().is_some_and(|i| i == "source")
        })
        .map(|(index, field)| {
            field
                .ident
                .as_ref()
                .map_or_else(|| index.to_string(), ToString::to_string)
        })
        .collect()
}

/// Whether `message` interpolates `name` (`{name}`, `{name:?}`).
fn interpolates(message: &str, name: &str) -> bool {
    message
        .replace("{{", "")
        .split('{')
        .skip(1)
        .any(|rest| rest.split(['}', ':']).next() == Some(name))
}

/// `file: Type::Variant "message"` for each message naming its source.
fn doubled(file: &Path, text: &str) -> Vec<String> {
    let parsed = syn::parse_file(text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut found = Vec::new();
    let mut check = |name: String, attrs: &[syn::Attribute], fields: &syn::Fields| {
        if let Some(message) = message(attrs) {
            for source in source_names(fields) {
                if interpolates(&message, &source) {
                    found.push(format!("{}: {name} {message:?}", file.display()));
                }
            }
        }
    };
    let mut items: Vec<&syn::Item> = parsed.items.iter().collect();
    while let Some(item) = items.pop() {
        match item {
            syn::Item::Enum(e) => {
                for variant in &e.variants {
                    check(
                        format!("{}::{}", e.ident, variant.ident),
                        &variant.attrs,
                        &variant.fields,
                    );
                }
            }
            syn::Item::Struct(s) => check(s.ident.to_string(), &s.attrs, &s.fields),
            syn::Item::Mod(m) => items.extend(m.content.iter().flat_map(|(_, items)| items)),
            _ => {}
        }
    }
    found
}

#[test]
fn no_error_prints_its_source_in_its_message() {
    let mut files = Vec::new();
    rust_files(&root(), &mut files);
    assert!(files.len() > 100, "{} files", files.len());
    let found: Vec<String> = files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let shown = file.strip_prefix(root()).unwrap_or(file);
            doubled(shown, &text)
        })
        .collect();
    assert!(
        found.is_empty(),
        "these messages print their source, which the chain prints again: drop it from the \
         message\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn a_message_that_names_its_source_is_found() {
    let text = r#"
        #[derive(Debug, thiserror::Error)]
        pub enum E {
            #[error("cannot read {path}: {source}")]
            Io { path: String, source: std::io::Error },
            #[error("bad JSON: {0:?}")]
            Json(#[from] serde_json::Error),
            #[error("cannot {what}")]
            Kept { what: String, #[source] error: std::io::Error },
            #[error(transparent)]
            Other(#[from] std::fmt::Error),
        }
        #[derive(Debug, thiserror::Error)]
        #[error("not a module: {0}")]
        pub struct S(#[source] std::fmt::Error);
    "#;
    assert_eq!(
        doubled(Path::new("e.rs"), text),
        [
            "e.rs: S \"not a module: {0}\"",
            "e.rs: E::Io \"cannot read {path}: {source}\"",
            "e.rs: E::Json \"bad JSON: {0:?}\"",
        ]
    );
    assert!(interpolates("a {b} c", "b"));
    assert!(!interpolates("a {{b}} c", "b"));
}
